package sdk_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/reftrack/reftrack/sdk"
)

// ErrorFromResponse reads both of the service's envelopes, and tells an answer that is not the service's
// apart; a 2xx is no error. (The CLI's tests drive it against the real server.)
func TestErrorFromResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   *sdk.APIError
	}{
		{"success", 200, nil, `{"data": {}}`, nil},
		{"created", 201, nil, `{"data": {}}`, nil},
		{"platform envelope", 403, http.Header{"X-Request-Id": {"req_1"}},
			`{"data": null, "error": {"status": 403, "name": "ForbiddenError", "message": "Your account has been suspended.", "details": {"code": "ACCOUNT_BLOCKED"}, "code": "account_suspended"}}`,
			&sdk.APIError{Status: 403, Code: "account_suspended", Name: "ForbiddenError", Message: "Your account has been suspended.",
				Details: map[string]any{"code": "ACCOUNT_BLOCKED"}, RequestID: "req_1"}},
		{"typed envelope with a wait", 429, http.Header{"X-Request-Id": {"req_2"}, "Retry-After": {"7"}},
			`{"error": {"code": "rate_limited", "message": "Too many synthetic chains (max 10/program/hour).", "status": 429, "retry_after_seconds": 7}}`,
			&sdk.APIError{Status: 429, Code: "rate_limited", Message: "Too many synthetic chains (max 10/program/hour).", RequestID: "req_2", RetryAfter: 7 * time.Second}},
		{"typed envelope with a hint", 401, nil,
			`{"error": {"code": "api_key_rotation_required", "message": "This API key passed its rotation deadline.", "hint": "Regenerate it.", "docs_url": "https://docs.example/keys"}}`,
			&sdk.APIError{Status: 401, Code: "api_key_rotation_required", Message: "This API key passed its rotation deadline.", Hint: "Regenerate it.", DocsURL: "https://docs.example/keys"}},
		{"a proxy's page", 502, nil, `<html>upstream down</html>`,
			&sdk.APIError{Status: 502, Code: sdk.CodeUnexpectedResponse, Message: "Bad Gateway: <html>upstream down</html>"}},
		{"an envelope without a code", 400, nil, `{"error": {"message": "no code"}}`,
			&sdk.APIError{Status: 400, Code: sdk.CodeUnexpectedResponse, Message: `Bad Request: {"error": {"message": "no code"}}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := &http.Response{StatusCode: tc.status, Header: tc.header}
			if res.Header == nil {
				res.Header = http.Header{}
			}
			got := sdk.ErrorFromResponse(res, []byte(tc.body))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ErrorFromResponse = %#v, want %#v", got, tc.want)
			}
		})
	}
}
