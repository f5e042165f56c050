// Package apitest runs the real reftrack HTTP server against a fresh test database and checks every
// response it gives against the published OpenAPI document: a response that does not match its route's
// spec (status, headers, body) fails the test.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/jmoiron/sqlx"
	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/api"
	apiroute "github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// Env is a running server with its database.
type Env struct {
	t      testing.TB
	DB     *dbtest.Database
	Config config.Config
	// URL is the server's base URL.
	URL string
	// Client sends requests to the server and validates every response against the spec.
	Client *http.Client
	// Logs holds what the server logged.
	Logs *SyncBuffer
	Doc  *openapi3.T
	// Webhooks is a delivery worker on the server's database and clock, run by the test (RunOnce):
	// the server itself attempts nothing.
	Webhooks *webhooks.Worker
	// Mailbox is the server's development mailbox (/dev/mail), where Mail puts the outbox's messages.
	Mailbox *mail.Mailbox
	// Mail is a courier of the outbox into Mailbox on the server's database and clock, run by the test
	// (SendAll): the server itself sends nothing.
	Mail *mail.Courier
}

// Options adjust the server an Env runs.
type Options struct {
	// DB replaces the fresh migrated database (for example an unmigrated one).
	DB *dbtest.Database
	// ReadDB is the read replica's pool, the server's api.Deps.ReadDB (nil: none, every read on DB).
	ReadDB *sqlx.DB
	// Routes lets a test add or replace routes on the server (for example one that fails on purpose).
	Routes func(*echo.Echo)
	// Clock is the server's one clock (nil: the wall clock, which the database's own now() agrees with).
	// Tests that count requests in a rate-limit window pass a PinnedClock, so the window cannot end
	// half-way through the test.
	Clock func() time.Time
	// LimitStore keeps the rate-limit counts (nil: in process).
	LimitStore ratelimit.Store
	// Config adjusts the configuration after the defaults are read.
	Config func(*config.Config)
	// DNS answers the server's TXT lookups (nil: no record exists anywhere; tests never reach the network).
	DNS programs.TXTResolver
	// Demo serves the demo shop (development mode's), filled in by the test once its program exists.
	Demo *demoshop.Shop
	// Draining reports whether the server drains before a shutdown (nil: never).
	Draining func() bool
	// MailQueued is told when a change queued mail, the server's api.Deps.MailQueued (nil: nobody).
	MailQueued func()
}

// The spec gives GET /openapi.yaml's application/yaml body as a string (the document's text, which is
// what a generated client hands back); kin-openapi would otherwise parse it into an object before
// checking it against that schema.
func init() { openapi3filter.RegisterBodyDecoder("application/yaml", openapi3filter.FileBodyDecoder) }

// New starts the server on a fresh migrated database.
func New(t testing.TB) *Env { return Start(t, Options{}) }

// Start starts the server with opts.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	d := opts.DB
	if d == nil {
		d = dbtest.New(t)
	}
	s, err := serve(d, opts, func(err error) { t.Error(err) })
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(s.close)
	return &Env{t: t, DB: d, Config: s.config, URL: s.url, Client: s.client, Logs: s.logs, Doc: s.doc, Webhooks: s.webhooks,
		Mailbox: s.mailbox, Mail: s.mail}
}

// server is a running reftrack server and a client that checks its answers.
type server struct {
	url    string
	client *http.Client
	config config.Config
	logs   *SyncBuffer
	doc    *openapi3.T
	close  func()
	// webhooks delivers what the server's changes queued, when a test runs it.
	webhooks *webhooks.Worker
	mailbox  *mail.Mailbox
	mail     *mail.Courier
}

// serve starts the server on d; report receives every response that does not match the spec.
func serve(d *dbtest.Database, opts Options, report func(error)) (*server, error) {
	cfg, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg.DatabaseURL = d.URL
	// The server's own address is its BASE_URL, so the links it hands out (login pages, poll URLs,
	// webhook URLs) work in tests.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg.BaseURL = "http://" + ln.Addr().String()
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.LimitStore == nil {
		opts.LimitStore = ratelimit.NewMemory()
	}
	logs := &SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	deps, err := collaborators(cfg, d, logger, opts.Clock, ratelimit.New(opts.LimitStore, opts.Clock))
	if err == nil {
		deps.DNS = opts.DNS
		if deps.DNS == nil {
			deps.DNS = &FakeDNS{} // no record anywhere: the servers of tests never reach the network
		}
		deps.Demo = opts.Demo
		deps.Draining = opts.Draining
		deps.MailQueued = opts.MailQueued
		deps.ReadDB = opts.ReadDB
	}
	if err != nil {
		ln.Close()
		return nil, err
	}
	e, err := api.New(context.Background(), deps)
	if err != nil {
		deps.Clicks.Close()
		deps.Leads.Close()
		deps.Sales.Close()
		deps.Refunds.Close()
		deps.Keys.Close()
		ln.Close()
		return nil, fmt.Errorf("build server: %w", err)
	}
	if opts.Routes != nil {
		opts.Routes(e)
	}
	doc, router, strict, err := validationRouter()
	if err != nil {
		deps.Clicks.Close()
		deps.Leads.Close()
		deps.Sales.Close()
		deps.Refunds.Close()
		deps.Keys.Close()
		ln.Close()
		return nil, err
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: e}}
	srv.Start()
	return &server{
		webhooks: deps.Webhooks.NewWorker(opts.Clock, logger, deps.Metrics, deps.Spec.Info.Version),
		mailbox:  deps.Mailbox,
		mail:     &mail.Courier{DB: d.DB, Sender: deps.Mailbox, Now: opts.Clock, Log: logger},
		url:      srv.URL,
		client:   &http.Client{Transport: &validatingTransport{report: report, base: srv.Client().Transport, router: router, doc: doc, strict: strict}},
		config:   cfg,
		logs:     logs,
		doc:      doc,
		close: func() {
			srv.Close()
			deps.Clicks.Close() // after the server: the queued clicks, leads, sales and refunds are written
			deps.Leads.Close()
			deps.Sales.Close()
			deps.Refunds.Close()
			deps.Keys.Close()
		},
	}, nil
}

// Proxy starts a reverse proxy to the server that checks every response against the spec, for clients
// the test does not build itself (another process, another language), and returns its URL.
func (e *Env) Proxy() string {
	e.t.Helper()
	target, err := url.Parse(e.URL)
	if err != nil {
		e.t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = e.Client.Transport
	srv := httptest.NewServer(rp)
	e.t.Cleanup(srv.Close)
	return srv.URL
}

// Response is a response read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (numbers as float64).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body: %v\n%s", err, r.Body)
	}
}

// Do sends a request and returns the validated response. body may be nil, a string or []byte (sent as
// is, with Content-Type application/json unless headers say otherwise), or any value to encode as JSON.
// headers are name, value pairs.
func (e *Env) Do(method, path string, body any, headers ...string) *Response {
	e.t.Helper()
	return e.Send(e.NewRequest(method, path, body, headers...))
}

// NewRequest builds the request Do sends.
func (e *Env) NewRequest(method, path string, body any, headers ...string) *http.Request {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	case io.Reader:
		r = b
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, e.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if len(headers)%2 != 0 {
		e.t.Fatal("apitest: headers must be name, value pairs")
	}
	for i := 0; i < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// Send sends req with the validating client.
func (e *Env) Send(req *http.Request) *Response {
	e.t.Helper()
	return e.send(e.Client, req)
}

// Exchange sends req without following redirects and returns the response together with how it
// disagrees with the spec (nil when it fits), instead of failing the test: fuzz targets report through
// the *testing.T of each input, never the Env's.
func (e *Env) Exchange(req *http.Request) (*Response, error) {
	vt, ok := e.Client.Transport.(*validatingTransport)
	if !ok {
		return nil, fmt.Errorf("apitest: the Env's client does not validate")
	}
	var mismatch error
	checked := *vt
	checked.report = func(err error) { mismatch = err } // called before RoundTrip returns
	client := &http.Client{Transport: &checked, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}, mismatch
}

func (e *Env) send(client *http.Client, req *http.Request) *Response {
	e.t.Helper()
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// validatingTransport checks every exchange against the spec, with kin-openapi and with a strict JSON
// Schema reading of it (strictSpec): a response that does not fit, or a request the spec forbids that
// the server accepted (2xx), is a disagreement. A forbidden request answered 4xx is fine: tests send bad
// input on purpose.
type validatingTransport struct {
	report func(error)
	base   http.RoundTripper
	router routers.Router
	doc    *openapi3.T
	strict *strictSpec
}

func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		sent = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(sent))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(sent)), nil }
	}
	res, err := v.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	exchanges.Add(1)
	resErr, reqErr := v.validate(req, sent, res, body)
	if resErr != nil {
		v.report(fmt.Errorf("%s %s answered %d, which does not match the spec: %w\nheaders: %v\nbody: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, resErr, res.Header, body))
	}
	if reqErr != nil {
		v.report(fmt.Errorf("%s %s answered %d to a request the spec forbids: %w\nrequest headers: %v\nrequest body: %s",
			req.Method, req.URL.RequestURI(), res.StatusCode, reqErr, req.Header, sent))
	}
	return res, nil
}

// validate checks the response, and the request when the server accepted it.
func (v *validatingTransport) validate(req *http.Request, sent []byte, res *http.Response, body []byte) (resErr, reqErr error) {
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		// Not a route of the spec: only echo's own 404 and 405 may answer, in the platform envelope, or
		// under the pages' paths as a page.
		if res.StatusCode != http.StatusNotFound && res.StatusCode != http.StatusMethodNotAllowed {
			return fmt.Errorf("no such route in the spec (%v)", err), nil
		}
		if apiroute.PagePath(req.URL.Path) {
			if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/html" {
				return fmt.Errorf("no such page, answered as %s rather than a page", mt), nil
			}
			return nil, nil
		}
		return ValidateSchema(v.doc, "PlatformError", body), nil
	}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/javascript" || mt == "text/javascript" || mt == "text/css" || mt == "text/html" {
		opts.ExcludeResponseBody = true // kin-openapi has no decoder for scripts, style sheets and pages
	}
	input := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	resErr = errors.Join(
		openapi3filter.ValidateResponse(req.Context(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: input,
			Status:                 res.StatusCode,
			Header:                 res.Header,
			Body:                   io.NopCloser(bytes.NewReader(body)),
			Options:                opts,
		}),
		v.strict.response(route.Path, req.Method, res.StatusCode, res.Header.Get("Content-Type"), body),
	)
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return resErr, nil
	}
	// Parameters by kin-openapi (simple schemas); the body strictly.
	paramOpts := &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	reqErr = errors.Join(
		openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route, Options: paramOpts,
		}),
		v.strict.request(route.Path, req.Method, req.Header.Get("Content-Type"), sent),
	)
	return resErr, reqErr
}

// ValidateSchema checks a JSON body against a named schema of the spec's components.
func ValidateSchema(doc *openapi3.T, schema string, body []byte) error {
	ref, ok := doc.Components.Schemas[schema]
	if !ok {
		return fmt.Errorf("spec has no schema %s", schema)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return ref.Value.VisitJSON(v)
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Reset empties the buffer.
func (b *SyncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Seed creates a complete program (account, workspace, program with key, partner, link) in the server's
// database.
func (e *Env) Seed(opts seed.Options) seed.Result {
	e.t.Helper()
	r, err := seed.Run(context.Background(), e.DB.DB, opts)
	if err != nil {
		e.t.Fatalf("seed: %v", err)
	}
	return r
}

// Bearer is the header pair for an Authorization: Bearer token.
func Bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// Count runs a SELECT count(*) … and returns the number.
func (e *Env) Count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.DB.Get(&n, query, args...); err != nil {
		e.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Clock is a test's clock: it stands still unless the test moves it, except that every reading is one
// nanosecond after the previous one, so that ids made from the time stay unique.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a clock at start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Nanosecond)
	return c.t
}

// PinnedClock is a Clock standing 10 seconds into a rate-limit window (a minute) that has just passed:
// a test's requests all fall in that window, and a 429 always asks to wait 50 seconds.
func PinnedClock() *Clock {
	return NewClock(time.Now().Add(-10 * time.Second).Truncate(time.Minute).Add(10 * time.Second))
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
