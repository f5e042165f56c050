package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/apierr"
)

// runErrorHandler writes err for a request to route and returns the status and decoded body.
func runErrorHandler(t *testing.T, route string, err error) (int, map[string]any) {
	t.Helper()
	e := echo.New()
	req := httptest.NewRequest(http.MethodPost, route, nil)
	req = req.WithContext(context.WithValue(req.Context(), metaKey{}, &requestMeta{id: "rid-1"}))
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	c.SetPath(route)
	writeError(slog.New(slog.NewTextHandler(io.Discard, nil)), err, c, nil)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body: %v: %s", err, rec.Body)
	}
	return rec.Code, body
}

func TestErrorShapesPerRoute(t *testing.T) {
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("pq: relation does not exist")
	tests := []struct {
		name   string
		route  string
		err    error
		status int
		schema string
		want   map[string]any
	}{
		{"click 500 uses the route's message", "/api/v1/track/click", boom, 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Click tracking failed", "details": map[string]any{}}}},
		{"sale 500 adds internal_error", "/api/v1/track/sale", boom, 500, "CodedPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Sale tracking failed", "details": map[string]any{}, "code": "internal_error"}}},
		{"sale keeps a documented 500 message", "/api/v1/track/sale", apierr.Internal("Failed to create commission", boom), 500, "CodedPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to create commission", "details": map[string]any{}, "code": "internal_error"}}},
		{"refund 400 adds invalid_request", "/api/v1/track/refund", apierr.BadRequest("transaction_id is required"), 400, "CodedPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "transaction_id is required", "details": map[string]any{}, "code": "invalid_request"}}},
		{"sale keeps a chosen code", "/api/v1/track/sale", apierr.BadRequest("partnerId required to create commission").WithCode("no_attribution"), 400, "CodedPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "partnerId required to create commission", "details": map[string]any{}, "code": "no_attribution"}}},
		{"readiness 500 is typed", "/api/v1/programs/me/readiness", boom, 500, "ReadinessInternalErrorBody",
			map[string]any{"error": map[string]any{"code": "internal_error", "message": "Failed to compute readiness. Retry shortly.", "retry_after_seconds": 10.0}}},
		{"CLI 500 repeats the request id", "/api/v1/cli/init", boom, 500, "CliPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to create program (request_id: rid-1)", "details": map[string]any{"request_id": "rid-1"}}}},
		{"CLI keeps a documented 500 message", "/api/v1/cli/test-event", apierr.Internal("Failed to run synthetic chain", boom), 500, "CliPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to run synthetic chain (request_id: rid-1)", "details": map[string]any{"request_id": "rid-1"}}}},
		{"other routes: generic 500", "/api/v1/programs/:programId", boom, 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Internal server error", "details": map[string]any{}}}},
		{"echo error keeps its status", "/api/v1/programs/:programId", echo.NewHTTPError(http.StatusBadRequest, "Invalid format for parameter programId"), 400, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "Invalid format for parameter programId", "details": map[string]any{}}}},
		{"echo 5xx never leaks its message", "/api/v1/programs/:programId", echo.NewHTTPError(http.StatusBadGateway, "upstream 10.0.0.7 refused"), 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Internal server error", "details": map[string]any{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := runErrorHandler(t, tt.route, tt.err)
			if status != tt.status {
				t.Errorf("status = %d, want %d", status, tt.status)
			}
			if diff := cmp.Diff(tt.want, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			raw, _ := json.Marshal(body)
			var v any
			_ = json.Unmarshal(raw, &v)
			if err := doc.Components.Schemas[tt.schema].Value.VisitJSON(v); err != nil {
				t.Errorf("body does not match %s: %v", tt.schema, err)
			}
		})
	}
}

func TestSharedErrorIsNotModified(t *testing.T) {
	shared := apierr.Internal("Internal server error", nil)
	runErrorHandler(t, "/api/v1/cli/init", shared)
	if shared.Message != "Internal server error" || shared.Details != nil {
		t.Errorf("the handler changed the error it was given: %+v", shared)
	}
}

func TestEchoPath(t *testing.T) {
	for in, want := range map[string]string{
		"/healthz":                           "/healthz",
		"/api/tracking/events/{programId}":   "/api/tracking/events/:programId",
		"/api/v1/programs/{programId}/links": "/api/v1/programs/:programId/links",
		"/a/{b}/c/{d}":                       "/a/:b/c/:d",
	} {
		if got := echoPath(in); got != want {
			t.Errorf("echoPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormaliseJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":1,"b":null}`, `{"a":1}`},
		{`{"a":{"b":null,"c":[{"d":null,"e":2}]}}`, `{"a":{"c":[{"e":2}]}}`},
		{`{"n": 12345678901234567890, "s":"x"}`, `{"n": 12345678901234567890, "s":"x"}`}, // unchanged: sent as is
		{`[1,null]`, `[1,null]`},
	}
	for _, tt := range tests {
		got, err := normaliseJSON([]byte(tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if string(got) != tt.want {
			t.Errorf("normaliseJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{`{`, `{"a":1} x`, `nul`} {
		if _, err := normaliseJSON([]byte(bad)); err == nil {
			t.Errorf("normaliseJSON(%s) accepted invalid JSON", bad)
		}
	}
}
