package sdk

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// RetryPolicy bounds the SDK's retries. Zero fields take the defaults of [DefaultRetryPolicy]. The
// context given to a Track call bounds them too: the SDK never starts a wait that would outlast the
// context's deadline, and returns the last answer instead.
type RetryPolicy struct {
	// MaxAttempts counts every request, the first included (1 = no retries). Default 4.
	MaxAttempts int
	// MinBackoff is the first wait after a 5xx or a network failure; each later wait doubles, with
	// jitter. Default 250ms.
	MinBackoff time.Duration
	// MaxBackoff caps one wait. Default 5s.
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After a 429 may ask for and still be retried; a longer one is
	// returned to the caller. Default 60s (the rate-limit window).
	MaxRetryAfter time.Duration
}

// DefaultRetryPolicy is what a Client uses unless WithRetry says otherwise.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 4, MinBackoff: 250 * time.Millisecond, MaxBackoff: 5 * time.Second, MaxRetryAfter: 60 * time.Second}
}

// NoRetry sends every request once.
func NoRetry() RetryPolicy { return RetryPolicy{MaxAttempts: 1} }

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.MinBackoff <= 0 {
		p.MinBackoff = d.MinBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = d.MaxBackoff
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	return p
}

// backoff is the wait before retry n (1 = the first retry): exponential, capped, with jitter so that
// many clients failing together do not retry together.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.MinBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// noRetryMessage is the one 500 the interface says never to retry: the transaction id is consumed.
const noRetryMessage = "Failed to create commission"

// retryAfter decides whether the answer r to attempt n is retried, and after how long.
//
// Retried: a 429 (it was refused before reaching the endpoint), a 5xx other than "Failed to create
// commission", and a network failure when the call allows it. Every Track call is safe to resend: a sale
// keeps its transaction_id (a resent sale that was recorded answers 409), a resent lead that was
// recorded answers 400 "Customer status cannot be updated to lead", a resent whole refund answers
// "skipped". A partial refund is not resent after a network failure, since it may have been applied.
func (c *Client) retryAfter(ctx context.Context, r Result, n int, retryNetwork bool) (time.Duration, bool) {
	p := c.retry
	if n >= p.MaxAttempts || ctx.Err() != nil || r.Error == nil {
		return 0, false
	}
	var wait time.Duration
	switch {
	case r.Status == 0:
		if !retryNetwork || !transient(r.Error.cause) {
			return 0, false
		}
		wait = p.backoff(n)
	case r.Status == http.StatusTooManyRequests:
		wait = r.Error.RetryAfter
		if wait == 0 {
			wait = p.backoff(n)
		}
		if wait > p.MaxRetryAfter {
			return 0, false
		}
	case r.Status == http.StatusInternalServerError || r.Status == http.StatusBadGateway ||
		r.Status == http.StatusServiceUnavailable || r.Status == http.StatusGatewayTimeout:
		if r.Error.Message == noRetryMessage {
			return 0, false
		}
		wait = max(p.backoff(n), r.Error.RetryAfter)
	default:
		return 0, false
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return 0, false
	}
	return wait, true
}

// transient reports a network failure worth another attempt: a refused or reset connection, a timeout,
// or a connection closed before the answer was read. (The caller's own context ending is checked before.)
func transient(err error) bool {
	if err == nil {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // url.Error is a net.Error whatever it wraps
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

// sleep waits d or until ctx ends, and reports whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
