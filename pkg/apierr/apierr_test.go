package apierr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func render(t *testing.T, r Response, w []Warning) map[string]any {
	t.Helper()
	b, err := json.Marshal(r.Body(w))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestBodies(t *testing.T) {
	t.Parallel()
	five := 5
	tests := []struct {
		name string
		resp Response
		warn []Warning
		want map[string]any
	}{
		{
			name: "platform",
			resp: Response{Status: 400, Code: "invalid_request", Message: "affiliate_url is required"},
			want: map[string]any{"data": nil, "error": map[string]any{
				"status": 400.0, "name": "BadRequestError", "message": "affiliate_url is required", "details": map[string]any{}, "code": "invalid_request",
			}},
		},
		{
			name: "platform with code and details",
			resp: Response{Status: 409, Message: "Duplicate transaction_id. This sale has already been recorded.", Code: "duplicate_transaction", Details: map[string]any{"sale_id": 7}},
			want: map[string]any{"data": nil, "error": map[string]any{
				"status": 409.0, "name": "ConflictError", "message": "Duplicate transaction_id. This sale has already been recorded.",
				"details": map[string]any{"sale_id": 7.0}, "code": "duplicate_transaction",
			}},
		},
		{
			name: "platform with warnings",
			resp: Response{Status: 404, Code: "not_found", Message: "Sale not found for transaction_id"},
			warn: []Warning{{Code: "api_key_rotation_required", Message: "m", Hint: "h", RotateBy: "2026-12-01T00:00:00Z", DocsURL: "https://d"}},
			want: map[string]any{"data": nil, "error": map[string]any{
				"status": 404.0, "name": "NotFoundError", "message": "Sale not found for transaction_id", "details": map[string]any{}, "code": "not_found",
			}, "warnings": []any{map[string]any{"code": "api_key_rotation_required", "message": "m", "hint": "h", "rotate_by": "2026-12-01T00:00:00Z", "docs_url": "https://d"}}},
		},
		{
			name: "typed rate limited",
			resp: Response{Status: 429, Envelope: Typed, Code: "rate_limited", Message: "Too many requests", WithStatus: true, RetryAfterSeconds: &five},
			want: map[string]any{"error": map[string]any{"code": "rate_limited", "message": "Too many requests", "status": 429.0, "retry_after_seconds": 5.0}},
		},
		{
			name: "typed link disabled",
			resp: Response{Status: 410, Envelope: Typed, Code: "link_disabled", Message: "This referral link is disabled", Hint: "h", TopLevel: true},
			want: map[string]any{"success": false, "message": "This referral link is disabled", "error": map[string]any{"code": "link_disabled", "message": "This referral link is disabled", "hint": "h"}},
		},
		{
			name: "oauth",
			resp: Response{Status: 413, Envelope: OAuth, Code: "invalid_request", Message: "Request body is larger than the limit of 64 KiB"},
			want: map[string]any{"error": "invalid_request", "error_description": "Request body is larger than the limit of 64 KiB"},
		},
		{
			name: "oauth server error",
			resp: Response{Status: 500, Envelope: OAuth, Message: "Internal server error"},
			want: map[string]any{"error": "server_error", "error_description": "Internal server error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, render(t, tt.resp, tt.warn)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{
		400: "BadRequestError", 401: "UnauthorizedError", 403: "ForbiddenError", 404: "NotFoundError", 409: "ConflictError",
		410: "GoneError", 413: "PayloadTooLargeError", 422: "UnprocessableEntityError", 500: "InternalServerError",
		501: "NotImplementedError", 502: "InternalServerError",
	} {
		if got := Name(status); got != want {
			t.Errorf("Name(%d) = %q, want %q", status, got, want)
		}
	}
}

func TestCauseIsWrappedNotSent(t *testing.T) {
	t.Parallel()
	cause := errors.New("pq: connection refused")
	e := Internal("Sale tracking failed", cause)
	if !errors.Is(e, cause) {
		t.Error("errors.Is(e, cause) = false")
	}
	if e.Kind != KindInternal || e.Message != "Sale tracking failed" {
		t.Errorf("error = %+v", e)
	}
	body := render(t, Response{Status: http.StatusInternalServerError, Message: e.Message}, nil)
	if got := body["error"].(map[string]any)["message"]; got != "Sale tracking failed" {
		t.Errorf("message = %v", got)
	}
	if strings.Contains(fmt.Sprint(body), "connection refused") {
		t.Errorf("the cause reached the body: %v", body)
	}
}
