// Package sdk is reftrack's Go server SDK: a brand's backend reports leads, sales and refunds with its
// program API key.
//
//	client := sdk.New(os.Getenv("REFTRACK_API_KEY"))
//	res := client.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_42", AmountCents: 4900,
//		Currency: "USD", InvoiceID: "in_1001"})
//	if err := res.Err(); err != nil && !res.AlreadyRecorded() { … }
//
// The Track methods never return a Go error for an API error: every outcome, including a network
// failure, is a [Result]. They retry what is safe to retry (429 after Retry-After, 5xx other than
// "Failed to create commission", network errors), bounded by the context and the [RetryPolicy]. A
// Client is safe for concurrent use.
//
// The client generated from the published OpenAPI document stays reachable for every other route
// through [Client.API].
package sdk

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/reftrack/reftrack/sdk/client"
)

// Version is this SDK's version, sent in the User-Agent.
const Version = "0.1.0"

// DefaultBaseURL is used when neither WithBaseURL nor REFTRACK_BASE_URL says otherwise.
const DefaultBaseURL = "http://localhost:8080"

// Client reports events to reftrack with one program API key.
type Client struct {
	apiKey    string
	baseURL   string
	userAgent string
	retry     RetryPolicy
	logger    *slog.Logger
	http      *http.Client
	gen       *client.ClientWithResponses

	// warned holds the rotation notices already logged, so each is logged once per Client.
	warnedMu sync.Mutex
	warned   map[string]bool
}

// Option configures a Client.
type Option func(*Client)

// WithBaseURL sets the service's address (default REFTRACK_BASE_URL, else http://localhost:8080).
func WithBaseURL(url string) Option {
	return func(c *Client) { c.baseURL = strings.TrimRight(url, "/") }
}

// WithHTTPClient sets the HTTP client (default: a client with a 30-second timeout per attempt).
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) { c.http = h }
}

// WithUserAgent puts product (for example "acme-billing/2.3") in front of the SDK's own User-Agent.
func WithUserAgent(product string) Option {
	return func(c *Client) {
		if product != "" {
			c.userAgent = product + " " + c.userAgent
		}
	}
}

// WithRetry sets the retry policy (default [DefaultRetryPolicy]; [NoRetry] turns retries off).
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) { c.retry = p.withDefaults() }
}

// WithLogger sets where retries (debug) and key-rotation notices (warn, once each) are logged
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.logger = l
		}
	}
}

// New returns a Client that authenticates with the program API key apiKey.
func New(apiKey string, opts ...Option) *Client {
	c := &Client{
		apiKey:    apiKey,
		baseURL:   DefaultBaseURL,
		userAgent: "reftrack-go/" + Version + " (" + runtime.Version() + ")",
		retry:     DefaultRetryPolicy(),
		logger:    slog.Default(),
		http:      &http.Client{Timeout: 30 * time.Second},
		warned:    map[string]bool{},
	}
	if v := os.Getenv("REFTRACK_BASE_URL"); v != "" {
		c.baseURL = strings.TrimRight(v, "/")
	}
	for _, o := range opts {
		o(c)
	}
	raw, err := client.NewClient(c.baseURL,
		client.WithHTTPClient(c.http),
		client.WithRequestEditorFn(c.authorize))
	if err != nil {
		// NewClient fails only when an option does; ours never do.
		panic("sdk: " + err.Error())
	}
	c.gen = &client.ClientWithResponses{ClientInterface: raw}
	return c
}

// API is the client generated from the published OpenAPI document, sending this Client's API key and
// User-Agent, for the routes the Track methods do not cover. Its calls are not retried.
func (c *Client) API() *client.ClientWithResponses { return c.gen }

// BaseURL is the address requests go to.
func (c *Client) BaseURL() string { return c.baseURL }

func (c *Client) authorize(_ context.Context, req *http.Request) error {
	if req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	req.Header.Set("User-Agent", c.userAgent)
	return nil
}

// warnOnce logs a key-rotation notice the first time this Client sees it.
func (c *Client) warnOnce(key string, msg string, attrs ...any) {
	c.warnedMu.Lock()
	seen := c.warned[key]
	c.warned[key] = true
	c.warnedMu.Unlock()
	if !seen {
		c.logger.Warn(msg, attrs...)
	}
}
