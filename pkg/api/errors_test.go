package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/synthetic"
)

var testRoutes = sync.OnceValues(func() (*route.Table, error) {
	doc, err := openapi.Spec()
	if err != nil {
		return nil, err
	}
	return route.Load(doc)
})

// runErrorHandler writes err for a request to route (echo's path) and returns the status and decoded body.
func runErrorHandler(t *testing.T, path string, err error) (int, map[string]any) {
	t.Helper()
	table, lerr := testRoutes()
	if lerr != nil {
		t.Fatal(lerr)
	}
	policy := route.Default
	for _, p := range table.All() {
		if p.EchoPath == path {
			policy = p
			break
		}
	}
	e := echo.New()
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	ctx := route.NewContext(request.With(req.Context(), &request.Meta{ID: "rid-1"}), policy)
	req = req.WithContext(ctx)
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	c.SetPath(path)
	(&errorWriter{log: slog.New(slog.NewTextHandler(io.Discard, nil))}).handle(err, c)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body: %v: %s", err, rec.Body)
	}
	return rec.Code, body
}

func TestErrorShapesPerRoute(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Spec()
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
		// Every error carries error.code, in both envelopes, on every route (the CLI's and the click's
		// included, which had none before issue 15).
		{"click 500 uses the route's message", "/api/v1/track/click", boom, 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Click tracking failed", "details": map[string]any{}, "code": "internal_error"}}},
		{"sale 500 adds internal_error", "/api/v1/track/sale", boom, 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Sale tracking failed", "details": map[string]any{}, "code": "internal_error"}}},
		{"sale keeps a documented 500 message", "/api/v1/track/sale", apierr.Internal("Failed to create commission", boom), 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to create commission", "details": map[string]any{}, "code": "internal_error"}}},
		{"refund 400 adds invalid_request", "/api/v1/track/refund", apierr.Invalid("transaction_id is required"), 400, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "transaction_id is required", "details": map[string]any{}, "code": "invalid_request"}}},
		{"sale keeps a chosen code", "/api/v1/track/sale", apierr.New(apierr.KindNoAttribution, "partnerId required to create commission"), 400, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "partnerId required to create commission", "details": map[string]any{}, "code": "no_attribution"}}},
		{"readiness 500 is typed", "/api/v1/programs/me/readiness", boom, 500, "ReadinessInternalErrorBody",
			map[string]any{"error": map[string]any{"code": "internal_error", "message": "Failed to compute readiness. Retry shortly.", "retry_after_seconds": 10.0}}},
		{"CLI 500 repeats the request id", "/api/v1/cli/init", boom, 500, "CliPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to create program (request_id: rid-1)", "details": map[string]any{"request_id": "rid-1"}, "code": "internal_error"}}},
		{"CLI keeps a documented 500 message", "/api/v1/cli/test-event", apierr.Internal("Failed to run synthetic chain", boom), 500, "CliPlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Failed to run synthetic chain (request_id: rid-1)", "details": map[string]any{"request_id": "rid-1"}, "code": "internal_error"}}},
		{"other routes: generic 500", "/api/v1/programs/:programId", boom, 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Internal server error", "details": map[string]any{}, "code": "internal_error"}}},
		{"echo error keeps its status", "/api/v1/programs/:programId", echo.NewHTTPError(http.StatusBadRequest, "Invalid format for parameter programId"), 400, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "Invalid format for parameter programId", "details": map[string]any{}, "code": "invalid_request"}}},
		{"CLI login of a suspended account", "/api/v1/cli/auth/callback", logins.ErrSuspended, 403, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 403.0, "name": "ForbiddenError", "message": "Your account has been suspended.", "details": map[string]any{"code": "ACCOUNT_BLOCKED"}, "code": "account_suspended"}}},
		{"click 403 program mismatch", "/api/v1/track/click", apikeys.ErrProgramMismatch, 403, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 403.0, "name": "ForbiddenError", "message": "program_id does not match the API key", "details": map[string]any{}, "code": "forbidden"}}},
		{"lead 400", "/api/v1/track/lead", leads.ErrIdentifierRequired, 400, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 400.0, "name": "BadRequestError", "message": "click_id or customer_key is required", "details": map[string]any{}, "code": "invalid_request"}}},
		{"CLI 410 retired route", "/api/v1/cli/stripe-connect", apierr.New(apierr.KindGone, "retired"), 410, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 410.0, "name": "GoneError", "message": "retired", "details": map[string]any{}, "code": "gone"}}},
		{"management 409", "/api/v1/programs/:programId/links", &programs.ShortLinkTakenError{ShortLink: "spring"}, 409, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 409.0, "name": "ConflictError", "message": "short_link spring is already taken", "details": map[string]any{}, "code": "conflict"}}},
		{"echo 404", "", echo.ErrNotFound, 404, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 404.0, "name": "NotFoundError", "message": "Not Found", "details": map[string]any{}, "code": "not_found"}}},
		{"echo 405", "", echo.ErrMethodNotAllowed, 405, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 405.0, "name": "MethodNotAllowedError", "message": "Method Not Allowed", "details": map[string]any{}, "code": "method_not_allowed"}}},
		{"echo 413", "", echo.ErrStatusRequestEntityTooLarge, 413, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 413.0, "name": "PayloadTooLargeError", "message": "Request Entity Too Large", "details": map[string]any{}, "code": "payload_too_large"}}},
		{"echo 415", "", echo.ErrUnsupportedMediaType, 415, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 415.0, "name": "UnsupportedMediaTypeError", "message": "Unsupported Media Type", "details": map[string]any{}, "code": "unsupported_media_type"}}},
		{"echo 5xx never leaks its message", "/api/v1/programs/:programId", echo.NewHTTPError(http.StatusBadGateway, "upstream 10.0.0.7 refused"), 500, "PlatformError",
			map[string]any{"data": nil, "error": map[string]any{"status": 500.0, "name": "InternalServerError", "message": "Internal server error", "details": map[string]any{}, "code": "internal_error"}}},
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
	t.Parallel()
	shared := apierr.Internal("Internal server error", nil)
	runErrorHandler(t, "/api/v1/cli/init", shared)
	if shared.Message != "Internal server error" || shared.Details != nil {
		t.Errorf("the handler changed the error it was given: %+v", shared)
	}
}

// Every kind of error has an answer, and every refusal of the domain is answered as such, never as a
// failure of the service.
func TestEveryRefusalIsAnswered(t *testing.T) {
	t.Parallel()
	for _, k := range apierr.Kinds {
		if r, ok := kinds[k]; !ok || r.status < 400 || k.Code() == "" {
			t.Errorf("kind %s: rule %+v", k, r)
		}
	}
	if len(kinds) != len(apierr.Kinds) {
		t.Errorf("the error table has %d kinds, apierr.Kinds %d", len(kinds), len(apierr.Kinds))
	}
	refusals := []error{
		auth.ErrMalformedHeader, auth.ErrEmptyToken, auth.ErrNoAccountToken, auth.ErrProgramKeyForAccount, auth.ErrCSRF, apikeys.ErrProgramMismatch, &auth.RetiredKeyError{},
		apikeys.ErrUnknown, apikeys.ErrNoKey, apikeys.ErrNoProgram, accounts.ErrInvalidToken, accounts.ErrSuspended,
		accounts.ErrNotMember, accounts.ErrNoWorkspace, accounts.ErrOwnerGrantOnly, accounts.ErrAlreadyMember,
		accounts.ErrInvalidRole, &accounts.RoleError{Role: "billing", Action: "program:write"}, accounts.ErrNoMembership,
		accounts.ErrNotYourWorkspace,
		clicks.ErrAffiliateURLRequired, clicks.ErrInvalidAffiliateURL, clicks.ErrNoAff, clicks.ErrLinkNotFound,
		clicks.ErrLinkMisconfigured, clicks.ErrLinkDisabled, &clicks.LinkError{Err: clicks.ErrOriginNotAllowed, Origin: "https://a.example"},
		&leads.StatusError{Status: "lead"}, leads.ErrIdentifierRequired, leads.ErrCustomerNotFound, leads.ErrOtherProgram,
		leads.ErrOriginNotAllowed, &sales.DuplicateError{SaleID: 1}, sales.ErrCustomerNotFound, sales.ErrOtherProgram,
		sales.ErrNoPartnerProgram, sales.ErrNoPartner, sales.ErrSaleNotFound, &sales.RefundTooLargeError{Remaining: 5},
		&synthetic.CapError{RetryAfter: time.Minute}, logins.ErrSessionNotFound, logins.ErrSessionUsed, logins.ErrSessionExpired,
		logins.ErrConsumed, logins.ErrSuspended, logins.ErrEmailTaken, identity.ErrInvalidToken, identity.ErrBadEmail,
		programs.ErrNotFound, programs.ErrLinkNotFound, programs.ErrPartnerNotFound, &programs.ShortLinkTakenError{ShortLink: "x"},
		programs.ErrRateNotPositive, programs.ErrPercentRateTooHigh, programs.ErrFixedRateTooHigh, programs.ErrRateDecimals,
		&programs.WindowError{Field: "cookie_window_days"}, programs.ErrDomain, programs.ErrOrigin, programs.ErrDurationMonths,
		&programs.CommissionTypeError{Type: "tiered"},
		programs.ErrNotMember, payments.ErrNotConnected, &payments.SignatureError{Err: errors.New("x")},
		&payments.EventError{Reason: "x"},
	}
	w := &errorWriter{}
	for _, err := range refusals {
		e := w.resolve(context.Background(), fmt.Errorf("wrapped: %w", err), route.Default)
		if _, ok := kinds[e.Kind]; !ok || e.Kind == apierr.KindInternal || e.Message == "" {
			t.Errorf("%T %v answers %+v", err, err, e)
		}
	}
	// Failures worded for the client: still 500s.
	for err, want := range map[error]string{
		&sales.CommissionError{Err: errors.New("x")}:                    "Failed to create commission",
		fmt.Errorf("%w: %w", synthetic.ErrChainFailed, errors.New("x")): "Failed to run synthetic chain",
	} {
		if e := w.resolve(context.Background(), err, route.Default); e.Kind != apierr.KindInternal || e.Message != want {
			t.Errorf("%v answers %+v", err, e)
		}
	}
}

func TestNormaliseJSON(t *testing.T) {
	t.Parallel()
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

// TestErrorCodesAreDocumented keeps the one list of error codes in step: every code a kind answers is in
// the spec's x-reftrack-error-codes with the kind's status, and every code listed there is answered by a
// kind or marked reserved; the ErrorCode schema's description and docs/errors.md's table list the same codes
// with the same statuses.
func TestErrorCodesAreDocumented(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	schema := doc.Components.Schemas["ErrorCode"]
	if schema == nil || schema.Value.Type == nil || !schema.Value.Type.Is("string") || len(schema.Value.Enum) != 0 {
		t.Fatal("the spec has no ErrorCode schema of type string without an enum (clients must tolerate new codes)")
	}
	raw, err := json.Marshal(schema.Value.Extensions["x-reftrack-error-codes"])
	if err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		Code     string `json:"code"`
		Status   int    `json:"status"`
		Meaning  string `json:"meaning"`
		Reserved bool   `json:"reserved"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&listed); err != nil || len(listed) == 0 {
		t.Fatalf("x-reftrack-error-codes: %v (%s)", err, raw)
	}

	spec := map[string]int{}
	for _, c := range listed {
		if c.Code == "" || c.Status < 400 || c.Meaning == "" {
			t.Errorf("x-reftrack-error-codes entry %+v: code, status and meaning are required", c)
		}
		if _, dup := spec[c.Code]; dup {
			t.Errorf("x-reftrack-error-codes lists %s twice", c.Code)
		}
		spec[c.Code] = c.Status
		rule, answered := kinds[apierr.Kind(c.Code)]
		switch {
		case c.Reserved && answered:
			t.Errorf("%s is marked reserved but a kind answers it", c.Code)
		case !c.Reserved && !answered:
			t.Errorf("%s is listed but no kind answers it (mark it reserved, or remove it)", c.Code)
		case answered && rule.status != c.Status:
			t.Errorf("%s: listed with status %d, answered with %d", c.Code, c.Status, rule.status)
		}
	}
	for k, rule := range kinds {
		if status, ok := spec[k.Code()]; !ok || status != rule.status {
			t.Errorf("kind %s answers %d %s, which x-reftrack-error-codes does not list", k, rule.status, k.Code())
		}
	}

	reference, err := os.ReadFile("../../docs/errors.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"the ErrorCode description": schema.Value.Description, "docs/errors.md": string(reference)} {
		if diff := cmp.Diff(spec, codeTable(text)); diff != "" {
			t.Errorf("%s's table of codes differs from x-reftrack-error-codes (-spec +%s):\n%s", name, name, diff)
		}
	}
}

// codeTable reads the rows "| `code` | status | meaning |" of a Markdown table.
func codeTable(text string) map[string]int {
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]{3}) \\| .+\\|$")
	out := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(text, -1) {
		out[m[1]], _ = strconv.Atoi(m[2])
	}
	return out
}
