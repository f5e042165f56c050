package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// routeErrors is what the interface fixes, per route, about errors the handler did not choose itself: the
// generic 500 message, whether every error carries error.code (sale and refund), whether the request id
// is repeated in 5xx bodies (CLI), and whether 5xx use the typed envelope (readiness).
type routeErrors struct {
	internal     string
	codes        bool
	cliRequestID bool
	typed5xx     bool
}

var routeErrorRules = map[string]routeErrors{
	"/api/v1/track/click":           {internal: "Click tracking failed"},
	"/api/v1/track/lead":            {internal: "Lead tracking failed"},
	"/api/v1/track/sale":            {internal: "Sale tracking failed", codes: true},
	"/api/v1/track/refund":          {internal: "Refund tracking failed", codes: true},
	"/api/v1/programs/me/readiness": {internal: "Failed to compute readiness. Retry shortly.", typed5xx: true},
	"/api/v1/cli/auth/start":        {internal: "Failed to start auth session", cliRequestID: true},
	"/api/v1/cli/auth/callback":     {internal: "Auth callback failed", cliRequestID: true},
	"/api/v1/cli/auth/poll":         {internal: "Failed to poll auth session", cliRequestID: true},
	"/api/v1/cli/init":              {internal: "Failed to create program", cliRequestID: true},
	"/api/v1/cli/programs":          {internal: "Failed to list programs", cliRequestID: true},
	"/api/v1/cli/status":            {internal: "Failed to get status", cliRequestID: true},
	"/api/v1/cli/test-event":        {internal: "Failed to process test event", cliRequestID: true},
	"/api/v1/cli/stripe-connect":    {cliRequestID: true},
}

// saleCodes is error.code on sale and refund for a status, where the handler chose none.
var saleCodes = map[int]string{
	http.StatusBadRequest:            "invalid_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "invalid_request",
	http.StatusConflict:              "duplicate_transaction",
	http.StatusRequestEntityTooLarge: "invalid_request",
	http.StatusUnprocessableEntity:   "unsupported_currency",
	http.StatusInternalServerError:   "internal_error",
	http.StatusNotImplemented:        "not_implemented",
}

// readinessRetrySeconds is the retry hint of the readiness route's 500.
const readinessRetrySeconds = 10

// handleError is echo's HTTPErrorHandler: every error of every route is written here, in the envelope
// its route uses. Internals are logged with the request id and never sent.
func (s *Server) handleError(err error, c echo.Context) {
	writeError(s.deps.Logger, err, c, s.warnings(c.Request().Context()))
}

func writeError(logger *slog.Logger, err error, c echo.Context, warnings []apierr.Warning) {
	ctx := c.Request().Context()
	if c.Response().Committed {
		logger.WarnContext(ctx, "error after the response was written", "request_id", RequestID(ctx), "err", err)
		return
	}
	e := toAPIError(err)
	rules := routeErrorRules[c.Path()]
	if e.Status >= 500 && e.Status != http.StatusNotImplemented {
		logger.ErrorContext(ctx, "request failed", "request_id", RequestID(ctx), "route", c.Path(), "err", err)
		e = shape5xx(e, rules, RequestID(ctx))
	}
	if rules.codes && e.Envelope == apierr.Platform && e.Code == "" {
		e.Code = saleCodes[e.Status]
	}
	if e.Status == http.StatusTooManyRequests && e.RetryAfterSeconds != nil {
		c.Response().Header().Set("Retry-After", strconv.Itoa(*e.RetryAfterSeconds))
	}
	var werr error
	if c.Request().Method == http.MethodHead {
		werr = c.NoContent(e.Status)
	} else {
		werr = c.JSON(e.Status, e.Body(warnings))
	}
	if werr != nil {
		logger.WarnContext(ctx, "write error response", "request_id", RequestID(ctx), "err", werr)
	}
}

// toAPIError maps any error to the error answered: our own errors as they are, echo's (routing, binding)
// by their status, everything else to a 500.
func toAPIError(err error) *apierr.Error {
	var e *apierr.Error
	if errors.As(err, &e) {
		cp := *e // the handler may share e; shaping must not change it
		return &cp
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if he.Code >= 500 {
			return apierr.Internal("Internal server error", err)
		}
		msg, ok := he.Message.(string)
		if !ok || msg == "" {
			msg = http.StatusText(he.Code)
		}
		return apierr.New(he.Code, msg).WithCause(err)
	}
	return apierr.Internal("Internal server error", err)
}

// shape5xx applies the route's rules to a server error: its generic message unless the handler chose a
// documented one, the request id in CLI messages, the typed envelope on readiness.
func shape5xx(e *apierr.Error, rules routeErrors, requestID string) *apierr.Error {
	if rules.internal != "" && e.Message == "Internal server error" {
		e.Message = rules.internal
	}
	switch {
	case rules.typed5xx:
		e.Envelope = apierr.Typed
		e.Code = "internal_error"
		e.WithRetryAfter(readinessRetrySeconds)
	case rules.cliRequestID:
		e.Message = fmt.Sprintf("%s (request_id: %s)", e.Message, requestID)
		e.Details = map[string]any{"request_id": requestID}
	}
	return e
}
