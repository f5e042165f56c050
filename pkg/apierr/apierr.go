// Package apierr holds the errors reftrack answers to clients and renders the two envelopes of the
// interface: the platform envelope ({"data": null, "error": {status, name, message, details, code}}) and
// the typed envelope ({"error": {code, message, ...}}), both carrying error.code, the error's Kind; and the
// OAuth error of the development issuer's token endpoint ({"error", "error_description"}). Pages answer an
// HTML page, which the HTTP layer renders.
//
// Handlers return an Error (a kind and a message) for what they refuse themselves, and domain errors as
// they are; the HTTP layer's one error table turns both into a Response (status, code, envelope) by the
// route's policy and writes it in one place.
package apierr

import (
	"fmt"
	"net/http"
)

// Envelope selects the body shape of an error.
type Envelope int

const (
	// Platform is {"data": null, "error": {"status", "name", "message", "details", "code"}}.
	Platform Envelope = iota
	// Typed is {"error": {"code", "message", ...}} with no data key.
	Typed
	// Page is an HTML page stating the message, for the pages a browser opens (login, sign-out, the
	// development issuer's form); the HTTP layer renders it.
	Page
	// OAuth is RFC 6749's {"error", "error_description"}, for the development issuer's token endpoint.
	OAuth
)

// Error is an error answered to the client. Cause is logged, never sent.
type Error struct {
	Kind Kind
	// Message is error.message; on a 5xx, "" takes the route's wording.
	Message string
	// Details is the platform envelope's error.details.
	Details map[string]any
	// Typed-envelope extras, written when set.
	RetryAfterSeconds *int
	Hint              string
	DocsURL           string

	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s %s: %v", e.Kind, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New is an error of kind with message.
func New(kind Kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// Invalid is a 400 for a malformed request (the most common refusal).
func Invalid(message string) *Error { return New(KindInvalid, message) }

// NULInField is a 400 for text holding a NUL character, which PostgreSQL cannot store; field names the
// member. The CLI refuses the same text before sending, with these words.
func NULInField(field string) *Error { return Invalid(field + " must not contain NUL characters") }

// Internal is a failure on the service side worded by the handler ("" takes the route's wording); cause
// is only logged.
func Internal(message string, cause error) *Error {
	e := New(KindInternal, message)
	e.Cause = cause
	return e
}

// WithDetail adds a key to error.details.
func (e *Error) WithDetail(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// WithRetryAfter sets error.retry_after_seconds (typed envelope) and, on a 429, the Retry-After header.
func (e *Error) WithRetryAfter(seconds int) *Error { e.RetryAfterSeconds = &seconds; return e }

// WithCause records the underlying error for the log.
func (e *Error) WithCause(err error) *Error { e.Cause = err; return e }

// Name is the platform envelope's error.name for an HTTP status.
func Name(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "BadRequestError"
	case http.StatusUnauthorized:
		return "UnauthorizedError"
	case http.StatusForbidden:
		return "ForbiddenError"
	case http.StatusNotFound:
		return "NotFoundError"
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowedError"
	case http.StatusConflict:
		return "ConflictError"
	case http.StatusGone:
		return "GoneError"
	case http.StatusRequestEntityTooLarge:
		return "PayloadTooLargeError"
	case http.StatusUnsupportedMediaType:
		return "UnsupportedMediaTypeError"
	case http.StatusUnprocessableEntity:
		return "UnprocessableEntityError"
	case http.StatusNotImplemented:
		return "NotImplementedError"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailableError"
	}
	if status >= 500 {
		return "InternalServerError"
	}
	return "BadRequestError"
}

// Warning is one entry of the top-level "warnings" array (API key rotation).
type Warning struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Hint     string `json:"hint"`
	RotateBy string `json:"rotate_by"`
	DocsURL  string `json:"docs_url"`
}

// Response is an error as it is written: status, envelope and code decided by the HTTP layer.
type Response struct {
	Status   int
	Envelope Envelope
	// Code is error.code, written in both envelopes.
	Code    string
	Message string
	Details map[string]any

	RetryAfterSeconds *int
	Hint              string
	DocsURL           string
	// WithStatus writes error.status in the typed envelope (rate_limited).
	WithStatus bool
	// TopLevel adds "success": false and "message" beside the typed error (the click route's 410).
	TopLevel bool
}

type platformBody struct {
	Data     *struct{}     `json:"data"` // always null
	Error    platformError `json:"error"`
	Warnings []Warning     `json:"warnings,omitempty"`
}

type platformError struct {
	Status  int            `json:"status"`
	Name    string         `json:"name"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
	Code    string         `json:"code"`
}

type typedBody struct {
	Success  *bool      `json:"success,omitempty"`
	Message  string     `json:"message,omitempty"`
	Error    typedError `json:"error"`
	Warnings []Warning  `json:"warnings,omitempty"`
}

type typedError struct {
	Code              string `json:"code"`
	Message           string `json:"message"`
	Status            int    `json:"status,omitempty"`
	RetryAfterSeconds *int   `json:"retry_after_seconds,omitempty"`
	Hint              string `json:"hint,omitempty"`
	DocsURL           string `json:"docs_url,omitempty"`
}

// oauthBody is RFC 6749's error answer (section 5.2).
type oauthBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// Body is the JSON body of r, with warnings (if any) at the top level (a Page is rendered by the HTTP
// layer; here it is the platform body).
func (r Response) Body(warnings []Warning) any {
	if r.Envelope == OAuth {
		code := "invalid_request"
		if r.Status >= 500 {
			code = "server_error"
		}
		return oauthBody{Error: code, Description: r.Message}
	}
	if r.Envelope == Typed {
		b := typedBody{
			Error: typedError{
				Code:              r.Code,
				Message:           r.Message,
				RetryAfterSeconds: r.RetryAfterSeconds,
				Hint:              r.Hint,
				DocsURL:           r.DocsURL,
			},
			Warnings: warnings,
		}
		if r.WithStatus {
			b.Error.Status = r.Status
		}
		if r.TopLevel {
			b.Success = new(bool)
			b.Message = r.Message
		}
		return b
	}
	details := r.Details
	if details == nil {
		details = map[string]any{}
	}
	return platformBody{
		Error: platformError{
			Status:  r.Status,
			Name:    Name(r.Status),
			Message: r.Message,
			Details: details,
			Code:    r.Code,
		},
		Warnings: warnings,
	}
}
