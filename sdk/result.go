package sdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reftrack/reftrack/sdk/client"
)

// Decoded success bodies, as the published OpenAPI document defines them.
type (
	// Lead is the answer to a recorded (or provisional) lead.
	Lead = client.LeadResponse
	// Sale is the answer to a recorded sale and its commission.
	Sale = client.SaleRecorded
	// SaleNotAttributed is the 200 answer when the click was older than the program's attribution window:
	// nothing was recorded and the same InvoiceID may be sent again with a later payment.
	SaleNotAttributed = client.SaleWindowExpired
	// Refund is the answer to a refund.
	Refund = client.RefundResponse
	// Warning is a key-rotation warning from a response body.
	Warning = client.Warning
)

// Codes the SDK sets itself, and the service's codes it acts on. Every other APIError.Code is the
// service's own `error.code` (the list is in docs/errors.md and the spec's ErrorCode schema, and may grow:
// treat a code you do not know by Status).
const (
	// CodeInvalidRequest is the service's code for a malformed request (400). The checks the SDK makes
	// before sending use it too, with Status 0, Attempts 0 and the message the service would answer.
	CodeInvalidRequest = "invalid_request"
	// CodeNetwork means no HTTP answer arrived (Status 0); the cause is wrapped.
	CodeNetwork = "network_error"
	// CodeUnexpectedResponse means an answer arrived that is not one of the service's envelopes, for
	// example a proxy's or load balancer's error page; Status is its status and Message quotes it.
	CodeUnexpectedResponse = "unexpected_response"
	// CodeDuplicateTransaction is the 409 of a sale whose InvoiceID was already recorded.
	CodeDuplicateTransaction = "duplicate_transaction"
)

// Result is the outcome of one Track call, after any retries.
type Result struct {
	// OK is true for a 2xx answer. A 200 sale may still be SaleNotAttributed.
	OK bool
	// Status is the HTTP status of the last answer; 0 when none arrived (a check made before sending,
	// or a network failure).
	Status int
	// Error describes why the call did not succeed; nil when OK.
	Error *APIError
	// Warnings are the body's key-rotation warnings (the key still works, but rotate it).
	Warnings []Warning
	// Rotation carries the Deprecation, Sunset and Link headers of a key marked for rotation.
	Rotation *Rotation
	// RequestID is the X-Request-ID of the last answer.
	RequestID string
	// Attempts is how many requests were sent (0 when a check failed before sending).
	Attempts int
	// Data is the raw JSON body of the last answer.
	Data json.RawMessage

	// Exactly one of these is set on a 200, by the method called.
	Lead              *Lead
	Sale              *Sale
	SaleNotAttributed *SaleNotAttributed
	Refund            *Refund
}

// Err returns Error as an error, or nil when the call succeeded.
func (r Result) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error
}

// AlreadyRecorded reports a 409 duplicate_transaction: the sale was recorded before (possibly by an
// earlier attempt of this very call), so treat it as success and do not resend.
func (r Result) AlreadyRecorded() bool {
	return r.Status == http.StatusConflict && r.Error != nil && r.Error.Code == CodeDuplicateTransaction
}

// Rotation describes a program key marked for mandatory rotation.
type Rotation struct {
	// MarkedAt is when the key was marked (Deprecation header).
	MarkedAt time.Time
	// Sunset is the deadline after which the key stops working (Sunset header).
	Sunset time.Time
	// DocsURL explains the rotation (Link header, rel=deprecation).
	DocsURL string
}

// APIError is a failed call: an error answer of the service in either of its envelopes, a check the SDK
// made before sending, or a network failure. Use errors.As to get it from Result.Err().
type APIError struct {
	// Status is the HTTP status; 0 when no answer arrived.
	Status int
	// Code is never empty: the service's `error.code` (every error of every route carries one), or
	// CodeInvalidRequest / CodeNetwork / CodeUnexpectedResponse set by the SDK.
	Code string
	// Name is the platform envelope's error class (for example "BadRequestError").
	Name string
	// Message is the service's message; documented messages are stable.
	Message string
	// Details is the platform envelope's `error.details` (for example sale_id on a 409).
	Details map[string]any
	// RequestID is the answer's X-Request-ID.
	RequestID string
	// Hint and DocsURL come with typed errors such as api_key_rotation_required.
	Hint    string
	DocsURL string
	// RetryAfter is the wait the service asked for (429, or a readiness 500).
	RetryAfter time.Duration

	cause error
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString("reftrack: ")
	if e.Status != 0 {
		b.WriteString(strconv.Itoa(e.Status) + " ")
	}
	if e.Code != "" {
		b.WriteString(e.Code + ": ")
	}
	b.WriteString(e.Message)
	if e.RequestID != "" {
		b.WriteString(" (request_id " + e.RequestID + ")")
	}
	return b.String()
}

// Unwrap returns the cause of a network failure (for example context.DeadlineExceeded).
func (e *APIError) Unwrap() error { return e.cause }

// SaleID is the recorded sale's id on a 409 duplicate_transaction, when the sale is in the key's
// program.
func (e *APIError) SaleID() (int64, bool) {
	v, ok := e.Details["sale_id"].(float64)
	return int64(v), ok
}

// wireError is either envelope's `error` member.
type wireError struct {
	Status            int            `json:"status"`
	Name              string         `json:"name"`
	Message           string         `json:"message"`
	Code              string         `json:"code"`
	Details           map[string]any `json:"details"`
	Hint              string         `json:"hint"`
	DocsURL           string         `json:"docs_url"`
	RetryAfterSeconds *int           `json:"retry_after_seconds"`
}

// decodeAnswer fills the parts of a Result every route shares from one HTTP answer.
func decodeAnswer(res *http.Response, body []byte) Result {
	r := Result{
		OK:        res.StatusCode >= 200 && res.StatusCode < 300,
		Status:    res.StatusCode,
		RequestID: res.Header.Get("X-Request-ID"),
		Data:      json.RawMessage(body),
		Rotation:  rotationHeaders(res.Header),
	}
	var env struct {
		Error    json.RawMessage `json:"error"`
		Warnings []Warning       `json:"warnings"`
	}
	jsonErr := json.Unmarshal(body, &env)
	r.Warnings = env.Warnings
	if r.OK {
		return r
	}
	e := &APIError{Status: res.StatusCode, RequestID: r.RequestID}
	var w wireError
	// Both of the service's envelopes carry error.code and error.message on every error.
	if jsonErr == nil && len(env.Error) > 0 && json.Unmarshal(env.Error, &w) == nil && w.Code != "" && w.Message != "" {
		e.Code, e.Name, e.Message, e.Details, e.Hint, e.DocsURL = w.Code, w.Name, w.Message, w.Details, w.Hint, w.DocsURL
		if w.RetryAfterSeconds != nil {
			e.RetryAfter = time.Duration(*w.RetryAfterSeconds) * time.Second
		}
	} else {
		// Not one of the service's envelopes: a proxy or load balancer answered.
		e.Code = CodeUnexpectedResponse
		e.Message = http.StatusText(res.StatusCode)
		if s := strings.TrimSpace(string(body)); s != "" && len(s) <= 200 {
			e.Message += ": " + s
		}
	}
	if d, ok := retryAfterHeader(res.Header.Get("Retry-After"), time.Now()); ok {
		e.RetryAfter = d
	}
	r.Error = e
	return r
}

// ErrorFromResponse is the APIError of an answer of any reftrack route, decoded as the Track methods
// decode theirs: both envelopes, the X-Request-ID and Retry-After headers, and an answer that is not the
// service's (CodeUnexpectedResponse). It is nil for a 2xx answer. Use it with the generated client of
// [Client.API], whose calls return the raw answer: ErrorFromResponse(res.HTTPResponse, res.Body). body
// is the answer's body, read in full (res.Body is not read).
func ErrorFromResponse(res *http.Response, body []byte) *APIError {
	return decodeAnswer(res, body).Error
}

// rotationHeaders reads the RFC 9745 Deprecation and RFC 8594 Sunset headers of a marked key.
func rotationHeaders(h http.Header) *Rotation {
	dep, sunset := h.Get("Deprecation"), h.Get("Sunset")
	if dep == "" && sunset == "" {
		return nil
	}
	rot := &Rotation{}
	if secs, err := strconv.ParseInt(strings.TrimPrefix(dep, "@"), 10, 64); err == nil {
		rot.MarkedAt = time.Unix(secs, 0).UTC()
	}
	if t, err := http.ParseTime(sunset); err == nil {
		rot.Sunset = t.UTC()
	}
	for _, link := range strings.Split(h.Get("Link"), ",") {
		target, params, _ := strings.Cut(strings.TrimSpace(link), ";")
		if strings.Contains(params, "rel=deprecation") || strings.Contains(params, `rel="deprecation"`) {
			rot.DocsURL = strings.Trim(strings.TrimSpace(target), "<>")
		}
	}
	return rot
}

// retryAfterHeader reads Retry-After as seconds or as an HTTP date.
func retryAfterHeader(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// localError is a check made before sending, with the service's own message for the same mistake.
func localError(message string) Result {
	return Result{Error: &APIError{Code: CodeInvalidRequest, Message: message}}
}

// networkError is a failure with no HTTP answer.
func networkError(err error) Result {
	return Result{Error: &APIError{Code: CodeNetwork, Message: err.Error(), cause: err}}
}

func (r Result) String() string {
	if r.OK {
		return fmt.Sprintf("%d OK", r.Status)
	}
	return r.Error.Error()
}
