package e2e_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/sdk"
)

// fixture is a real server and database with one seeded program, and an SDK client whose requests go
// through a fault-injecting transport.
type fixture struct {
	t      *testing.T
	env    *apitest.Env
	prog   seed.Result
	faults *faultTransport
	logs   *apitest.SyncBuffer
}

func newFixture(t *testing.T, opts ...apitest.Options) *fixture {
	t.Helper()
	o := apitest.Options{}
	if len(opts) > 0 {
		o = opts[0]
	}
	env := apitest.Start(t, o)
	return &fixture{
		t:      t,
		env:    env,
		prog:   env.Seed(seed.Options{}),
		faults: &faultTransport{base: env.Client.Transport},
		logs:   &apitest.SyncBuffer{},
	}
}

// fastRetry keeps the backoff short so that retry tests take milliseconds.
var fastRetry = sdk.RetryPolicy{MaxAttempts: 4, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, MaxRetryAfter: 5 * time.Second}

// client is an SDK client for the fixture's program with a fast retry policy.
func (f *fixture) client(opts ...sdk.Option) *sdk.Client {
	return f.clientWithKey(f.prog.APIKey, opts...)
}

// clientWithKey is client with another API key.
func (f *fixture) clientWithKey(apiKey string, opts ...sdk.Option) *sdk.Client {
	base := []sdk.Option{
		sdk.WithBaseURL(f.env.URL),
		sdk.WithHTTPClient(&http.Client{Transport: f.faults}),
		sdk.WithRetry(fastRetry),
		sdk.WithLogger(slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))),
	}
	return sdk.New(apiKey, append(base, opts...)...)
}

// click records a click on the program's referral link, as the browser tracker does, and returns its id.
func (f *fixture) click(ua string) string {
	f.t.Helper()
	res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": f.prog.AffiliateURL},
		"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 "+ua)
	if res.Status != http.StatusOK {
		f.t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	return res.JSON(f.t)["click_id"].(string)
}

// customer clicks and signs up as key (server-mode lead), ready to buy.
func (f *fixture) customer(key string) string {
	f.t.Helper()
	clickID := f.click(key)
	res := f.env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": clickID, "customer_key": key},
		apitest.Bearer(f.prog.APIKey)...)
	if res.Status != http.StatusOK {
		f.t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	return clickID
}

func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	return f.env.Count(query, args...)
}

// fault is what the transport does with one request.
type fault int

const (
	pass       fault = iota
	refuse           // fail before sending, as a refused connection does
	dropAnswer       // deliver the request, then lose the answer, as a reset connection does
	proxy503         // answer 503 from "a load balancer" without reaching the server
	limit429         // answer the service's own 429 (Retry-After: 1) without reaching the server
)

// faultTransport applies a planned fault to each request in turn (pass once the plan is used up) and
// counts what reached the server.
type faultTransport struct {
	base http.RoundTripper

	mu      sync.Mutex
	plan    []fault
	seen    int
	reached int
	last    *http.Request
}

func (ft *faultTransport) setPlan(p ...fault) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.plan, ft.seen, ft.reached = p, 0, 0
}

// counts returns how many requests the SDK sent and how many reached the server.
func (ft *faultTransport) counts() (seen, reached int) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.seen, ft.reached
}

func (ft *faultTransport) lastRequest() *http.Request {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return ft.last
}

func (ft *faultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ft.mu.Lock()
	f := pass
	if len(ft.plan) > 0 {
		f, ft.plan = ft.plan[0], ft.plan[1:]
	}
	ft.seen++
	ft.last = req
	if f == pass || f == dropAnswer {
		ft.reached++
	}
	ft.mu.Unlock()

	switch f {
	case refuse:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case dropAnswer:
		res, err := ft.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	case proxy503:
		return synthetic(req, http.StatusServiceUnavailable, "text/html", "<html><body>upstream unavailable</body></html>", nil), nil
	case limit429:
		return synthetic(req, http.StatusTooManyRequests, "application/json",
			`{"error":{"status":429,"code":"rate_limited","message":"Too many requests","retry_after_seconds":1}}`,
			http.Header{"Retry-After": {"1"}, "X-Request-Id": {"req-limited"}}), nil
	}
	return ft.base.RoundTrip(req)
}

func synthetic(req *http.Request, status int, contentType, body string, h http.Header) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", contentType)
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Header: h, Request: req,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
}

// repoRoot is the repository's root directory, the server module's.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}
