// Package apierr holds the errors reftrack answers to clients and renders the two envelopes of the
// interface: the platform envelope ({"data": null, "error": {status, name, message, details, code?}}) and
// the typed envelope ({"error": {code, message, ...}}). Handlers return these as values; the HTTP layer
// writes them in one place.
package apierr

import (
	"fmt"
	"net/http"
)

// Envelope selects the body shape of an Error.
type Envelope int

const (
	// Platform is {"data": null, "error": {"status", "name", "message", "details", "code"?}}.
	Platform Envelope = iota
	// Typed is {"error": {"code", "message", ...}} with no data key.
	Typed
)

// Error is an error answered to the client. Cause is logged, never sent.
type Error struct {
	Status   int
	Message  string
	Envelope Envelope
	// Code is error.code: always set in the typed envelope; in the platform envelope only where the
	// interface gives one (sale and refund).
	Code string
	// Details is the platform envelope's error.details.
	Details map[string]any

	// Typed-envelope extras, written when set.
	RetryAfterSeconds *int
	Hint              string
	DocsURL           string
	// WithStatus writes error.status in the typed envelope (rate_limited).
	WithStatus bool
	// LinkDisabled adds the top-level "success": false and "message" the click route keeps on its 410.
	LinkDisabled bool

	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Message, e.Cause)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New is a platform-envelope error.
func New(status int, message string) *Error {
	return &Error{Status: status, Message: message, Envelope: Platform}
}

// Constructors for the platform envelope's statuses.
func BadRequest(message string) *Error    { return New(http.StatusBadRequest, message) }
func Unauthorized(message string) *Error  { return New(http.StatusUnauthorized, message) }
func Forbidden(message string) *Error     { return New(http.StatusForbidden, message) }
func NotFound(message string) *Error      { return New(http.StatusNotFound, message) }
func Conflict(message string) *Error      { return New(http.StatusConflict, message) }
func Gone(message string) *Error          { return New(http.StatusGone, message) }
func Unprocessable(message string) *Error { return New(http.StatusUnprocessableEntity, message) }

// Internal is a 500 with a generic message; cause is only logged.
func Internal(message string, cause error) *Error {
	e := New(http.StatusInternalServerError, message)
	e.Cause = cause
	return e
}

// NewTyped is a typed-envelope error.
func NewTyped(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message, Envelope: Typed}
}

// WithCode sets error.code.
func (e *Error) WithCode(code string) *Error { e.Code = code; return e }

// WithDetail adds a key to error.details.
func (e *Error) WithDetail(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// WithRetryAfter sets error.retry_after_seconds (typed envelope).
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
	Code    string         `json:"code,omitempty"`
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

// Body is the JSON body of e, with warnings (if any) at the top level.
func (e *Error) Body(warnings []Warning) any {
	if e.Envelope == Typed {
		b := typedBody{
			Error: typedError{
				Code:              e.Code,
				Message:           e.Message,
				RetryAfterSeconds: e.RetryAfterSeconds,
				Hint:              e.Hint,
				DocsURL:           e.DocsURL,
			},
			Warnings: warnings,
		}
		if e.WithStatus {
			b.Error.Status = e.Status
		}
		if e.LinkDisabled {
			b.Success = new(bool)
			b.Message = e.Message
		}
		return b
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return platformBody{
		Error: platformError{
			Status:  e.Status,
			Name:    Name(e.Status),
			Message: e.Message,
			Details: details,
			Code:    e.Code,
		},
		Warnings: warnings,
	}
}
