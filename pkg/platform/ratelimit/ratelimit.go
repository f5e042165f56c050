// Package ratelimit counts requests in fixed one-minute windows. Windows are aligned to the wall-clock
// minute, so every replica agrees on when a window resets. Counts live in process (Memory) or, shared
// by every replica, in Redis (Redis).
package ratelimit

import (
	"context"
	"time"
)

// Window is the length of a rate-limit window.
const Window = time.Minute

// Store counts requests per key and window.
type Store interface {
	// Increment adds one request for key in the window that starts at start and returns the count.
	Increment(ctx context.Context, key string, start time.Time) (int64, error)
	// Decrement takes one request back from key in the window that starts at start; a window that has
	// ended or a count already at zero is left alone.
	Decrement(ctx context.Context, key string, start time.Time) error
	// Count is key's count in the window that starts at start, without adding to it.
	Count(ctx context.Context, key string, start time.Time) (int64, error)
}

// Result is the state of one bucket after a request was counted.
type Result struct {
	Allowed   bool
	Limit     int
	Remaining int
	// Reset is when the current window ends.
	Reset time.Time
}

// RetryAfter is the number of whole seconds until the window resets (at least 1).
func (r Result) RetryAfter(now time.Time) int {
	s := int(r.Reset.Sub(now).Seconds() + 0.999999)
	return max(s, 1)
}

// Limiter applies limits on top of a Store.
type Limiter struct {
	store Store
	now   func() time.Time
}

// New returns a limiter counting in store, whose windows follow now: the server's one clock, which also
// words Retry-After.
func New(store Store, now func() time.Time) *Limiter {
	return &Limiter{store: store, now: now}
}

// Allow counts one request of id in bucket, whose limit is limit per window. Every request is counted,
// refused ones too, so a client hammering past the limit stays refused until the window resets. When the
// store fails the request is allowed (tracking must not stop because the limiter's store did) and the
// error is returned for the caller to log.
func (l *Limiter) Allow(ctx context.Context, bucket, id string, limit int) (Result, error) {
	now := l.now()
	start := now.Truncate(Window)
	res := Result{Limit: limit, Remaining: limit, Reset: start.Add(Window), Allowed: true}
	n, err := l.store.Increment(ctx, bucket+":"+id, start)
	if err != nil {
		return res, err
	}
	res.Allowed = n <= int64(limit)
	res.Remaining = max(limit-int(n), 0)
	return res, nil
}

// GiveBack returns the unit that Allow counted for res (docs/rules.md#limits: an answer of 5xx gives its unit
// back, so a client retrying through an outage is not locked out afterwards), and returns the bucket's
// state with it.
func (l *Limiter) GiveBack(ctx context.Context, bucket, id string, res Result) (Result, error) {
	if err := l.store.Decrement(ctx, bucket+":"+id, res.Reset.Add(-Window)); err != nil {
		return res, err
	}
	res.Remaining = min(res.Remaining+1, res.Limit)
	return res, nil
}

// Spent reports whether id's bucket has used up its limit in the current window, without counting a
// request, and the bucket's state for the X-RateLimit-* headers of a refusal. When the store fails the
// bucket counts as not spent and the error is returned for the caller to log.
func (l *Limiter) Spent(ctx context.Context, bucket, id string, limit int) (bool, Result, error) {
	start := l.now().Truncate(Window)
	res := Result{Limit: limit, Remaining: limit, Reset: start.Add(Window), Allowed: true}
	n, err := l.store.Count(ctx, bucket+":"+id, start)
	if err != nil {
		return false, res, err
	}
	res.Remaining = max(limit-int(n), 0)
	res.Allowed = n < int64(limit)
	return !res.Allowed, res, nil
}
