package api_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

var generatedID = regexp.MustCompile(`^[0-9a-f]{32}$`)

// platformCodes are the error.code values a platform-envelope error of each status may carry (the
// documented list; typed-envelope codes such as invalid_key and link_disabled are not among them).
var platformCodes = map[int][]string{
	400: {"invalid_request", "no_attribution"},
	401: {"unauthorized"},
	403: {"forbidden", "account_suspended"},
	404: {"not_found"},
	405: {"method_not_allowed"},
	409: {"conflict", "duplicate_transaction"},
	410: {"gone"},
	413: {"payload_too_large"},
	415: {"unsupported_media_type"},
	422: {"unsupported_currency"},
	500: {"internal_error"},
	503: {"service_unavailable"},
}

// platformError checks a platform-envelope body, including that it carries an error.code of its status
// (every error of every route does), and returns its error object.
func platformError(t *testing.T, res *apitest.Response, status int, name, message string) map[string]any {
	t.Helper()
	if res.Status != status {
		t.Fatalf("status = %d, want %d; body %s", res.Status, status, res.Body)
	}
	body := res.JSON(t)
	if d, ok := body["data"]; !ok || d != nil {
		t.Errorf("data = %v (present %v), want null", d, ok)
	}
	e, _ := body["error"].(map[string]any)
	if e["status"] != float64(status) || e["name"] != name || e["message"] != message {
		t.Errorf("error = %v, want status %d, name %s, message %q", e, status, name, message)
	}
	if code, _ := e["code"].(string); !slices.Contains(platformCodes[status], code) {
		t.Errorf("error.code = %v, want one of %v for a %d", e["code"], platformCodes[status], status)
	}
	return e
}

// --- 200 -------------------------------------------------------------------------------------------

// /livez is what balancers check: 200 while serving, 503 from the start of a drain (cmd/reftrackd's
// serve test drives a real SIGTERM-style drain).
func TestLivez(t *testing.T) {
	t.Parallel()
	var draining atomic.Bool
	env := apitest.Start(t, apitest.Options{Draining: draining.Load})
	res := env.Do(http.MethodGet, "/livez", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("status = %d", res.Status)
	}
	if diff := cmp.Diff(map[string]any{"status": "ok"}, res.JSON(t)); diff != "" {
		t.Error(diff)
	}
	draining.Store(true)
	res = env.Do(http.MethodGet, "/livez", nil)
	if res.Status != http.StatusServiceUnavailable {
		t.Fatalf("draining: status = %d", res.Status)
	}
	if diff := cmp.Diff(map[string]any{"status": "draining"}, res.JSON(t)); diff != "" {
		t.Error(diff)
	}
	// Everything else still answers while draining.
	if res := env.Do(http.MethodGet, "/healthz", nil); res.Status != http.StatusOK {
		t.Errorf("healthz while draining: %d", res.Status)
	}
	if res := env.Do(http.MethodGet, "/readyz", nil); res.Status != http.StatusOK {
		t.Errorf("readyz while draining: %d %s", res.Status, res.Body) // the checks say which failed
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	res := env.Do(http.MethodGet, "/healthz", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("status = %d", res.Status)
	}
	if diff := cmp.Diff(map[string]any{"status": "ok"}, res.JSON(t)); diff != "" {
		t.Error(diff)
	}
	if id := res.Header.Get("X-Request-ID"); !generatedID.MatchString(id) {
		t.Errorf("X-Request-ID = %q, want a generated id", id)
	}
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	t.Run("200 migrated database", func(t *testing.T) {
		res := apitest.New(t).Do(http.MethodGet, "/readyz", nil)
		if res.Status != http.StatusOK {
			t.Fatalf("status = %d, body %s", res.Status, res.Body)
		}
		want := map[string]any{"status": "ready", "checks": map[string]any{"database": "ok", "migrations": "ok"}}
		if diff := cmp.Diff(want, res.JSON(t)); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("503 schema not migrated", func(t *testing.T) {
		t.Parallel()
		env := apitest.Start(t, apitest.Options{DB: dbtest.Empty(t)})
		res := env.Do(http.MethodGet, "/readyz", nil)
		if res.Status != http.StatusServiceUnavailable {
			t.Fatalf("status = %d, body %s", res.Status, res.Body)
		}
		checks := res.JSON(t)["checks"].(map[string]any)
		if checks["database"] != "ok" || !strings.Contains(checks["migrations"].(string), "no migration applied") {
			t.Errorf("checks = %v", checks)
		}
	})
	t.Run("503 database unreachable", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		// The server's pool closed under it (env.DB.Close would drop the database the test hands back).
		env.DB.DB.Close()
		res := env.Do(http.MethodGet, "/readyz", nil)
		if res.Status != http.StatusServiceUnavailable {
			t.Fatalf("status = %d, body %s", res.Status, res.Body)
		}
		want := map[string]any{"status": "unavailable", "checks": map[string]any{"database": "unreachable", "migrations": "unknown"}}
		if diff := cmp.Diff(want, res.JSON(t)); diff != "" {
			t.Error(diff)
		}
	})
}

func TestSpecIsServed(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	res := env.Do(http.MethodGet, "/openapi.yaml", nil)
	if res.Status != http.StatusOK || !bytes.Equal(res.Body, openapi.YAML) {
		t.Fatalf("GET /openapi.yaml: status %d, %d bytes, want the embedded file (%d bytes)", res.Status, len(res.Body), len(openapi.YAML))
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type = %q", ct)
	}
	res = env.Do(http.MethodGet, "/openapi.json", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("GET /openapi.json: status %d", res.Status)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	res.Decode(t, &doc)
	if doc.OpenAPI != "3.0.3" || len(doc.Paths) != len(env.Doc.Paths.Map()) {
		t.Errorf("openapi.json: version %q, %d paths; want 3.0.3 and %d", doc.OpenAPI, len(doc.Paths), len(env.Doc.Paths.Map()))
	}
}

// --- request ids -------------------------------------------------------------------------------------

func TestRequestID(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	tests := []struct {
		name, sent string
		keep       bool
	}{
		{"client id kept", "req-42_a.b:c", true},
		{"id with spaces replaced", "two words", false},
		{"overlong id replaced", strings.Repeat("a", 129), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := env.Do(http.MethodGet, "/healthz", nil, "X-Request-ID", tt.sent).Header.Get("X-Request-ID")
			if tt.keep && got != tt.sent {
				t.Errorf("X-Request-ID = %q, want %q", got, tt.sent)
			}
			if !tt.keep && !generatedID.MatchString(got) {
				t.Errorf("X-Request-ID = %q, want a generated id", got)
			}
		})
	}
	// Error responses carry it too.
	res := env.Do(http.MethodGet, "/no/such/route", nil, "X-Request-ID", "abc")
	if res.Header.Get("X-Request-ID") != "abc" {
		t.Errorf("404 X-Request-ID = %q", res.Header.Get("X-Request-ID"))
	}
}

// --- 4xx from the framework ----------------------------------------------------------------------------

func TestUnknownRouteAndMethod(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	platformError(t, env.Do(http.MethodGet, "/no/such/route", nil), 404, "NotFoundError", "Not Found")
	platformError(t, env.Do(http.MethodDelete, "/healthz", nil), 405, "MethodNotAllowedError", "Method Not Allowed")

	// A wrong method on a route with rules keeps the route's rules: its count and headers, its code, CORS.
	r := env.Seed(seed.Options{Origins: []string{"https://shop.example.com"}})
	res := env.Do(http.MethodGet, "/api/v1/track/sale", nil, apitest.Bearer(r.APIKey)...)
	e := platformError(t, res, 405, "MethodNotAllowedError", "Method Not Allowed")
	if e["code"] != "method_not_allowed" || res.Header.Get("X-RateLimit-Remaining") != "119" {
		t.Errorf("GET on the sale route: code %v, remaining %q", e["code"], res.Header.Get("X-RateLimit-Remaining"))
	}
	res = env.Do(http.MethodPut, "/api/v1/track/click", nil, "Origin", "https://shop.example.com")
	platformError(t, res, 405, "MethodNotAllowedError", "Method Not Allowed")
	if res.Header.Get("Access-Control-Allow-Origin") != "https://shop.example.com" || res.Header.Get("X-RateLimit-Limit") != "60" {
		t.Errorf("PUT on the click route: headers %v", res.Header)
	}
}

// Every error of every route carries error.code, in both envelopes: one refusal per area, with the code
// the documented list gives it.
func TestEveryErrorCarriesACode(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	key, account := apitest.Bearer(r.APIKey), apitest.Bearer(r.AccountToken)
	programs := "/api/v1/programs/" + itoa(r.ProgramID)
	tests := []struct {
		name, method, path string
		body               any
		headers            []string
		status             int
		code               string
		typed              bool
	}{
		{"click 400", http.MethodPost, "/api/v1/track/click", map[string]any{}, nil, 400, "invalid_request", false},
		{"click 413", http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": strings.Repeat("x", 70<<10)}, nil, 413, "payload_too_large", false},
		{"lead 400", http.MethodPost, "/api/v1/track/lead", map[string]any{}, nil, 400, "invalid_request", false},
		{"lead 401", http.MethodPost, "/api/v1/track/lead", map[string]any{"customer_key": "c"}, apitest.Bearer("rt_unknown"), 401, "unauthorized", false},
		{"lead 403", http.MethodPost, "/api/v1/track/lead", map[string]any{"customer_key": "c", "additional_data": map[string]any{"test_mode": true, "program_id": other.ProgramID}}, key, 403, "forbidden", false},
		{"sale 401", http.MethodPost, "/api/v1/track/sale", map[string]any{}, nil, 401, "unauthorized", false},
		{"refund 404", http.MethodPost, "/api/v1/track/refund", map[string]any{"transaction_id": "none"}, key, 404, "not_found", false},
		{"readiness 401", http.MethodGet, "/api/v1/programs/me/readiness", nil, nil, 401, "invalid_key", true},
		{"CLI poll 400", http.MethodGet, "/api/v1/cli/auth/poll", nil, nil, 400, "invalid_request", false},
		{"CLI callback 404", http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": "nope", "id_token": "x"}, nil, 404, "not_found", false},
		{"CLI init 401", http.MethodPost, "/api/v1/cli/init", map[string]any{}, nil, 401, "unauthorized", false},
		{"CLI status 403", http.MethodGet, "/api/v1/cli/status?program_id=" + itoa(other.ProgramID), nil, key, 403, "forbidden", false},
		{"CLI retired route 410", http.MethodPost, "/api/v1/cli/stripe-connect", nil, nil, 410, "gone", false},
		{"management 401", http.MethodGet, programs, nil, nil, 401, "unauthorized", false},
		{"management 403", http.MethodGet, programs, nil, apitest.Bearer(other.AccountToken), 403, "forbidden", false},
		{"management 404", http.MethodGet, "/api/v1/programs/999999", nil, account, 404, "not_found", false},
		{"management 409", http.MethodPost, "/api/v1/workspaces/" + itoa(r.AdvertiserID) + "/members", map[string]any{"email": r.AccountEmail, "role": "admin"}, account, 409, "conflict", false},
		{"dashboard me 401", http.MethodGet, "/api/v1/me", nil, nil, 401, "unauthorized", false},
		{"events list 400", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID) + "?dateFrom=today", nil, account, 400, "invalid_request", false},
		{"events list program key 401", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID), nil, key, 401, "unauthorized", false},
		{"daily counts 400", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID) + "/daily?dateFrom=2026-02-02&dateTo=2026-02-01", nil, account, 400, "invalid_request", false},
		{"webhook 400", http.MethodPost, "/api/v1/webhooks/stripe/" + itoa(r.ProgramID), map[string]any{}, nil, 400, "invalid_request", false},
		{"unknown route 404", http.MethodGet, "/no/such/route", nil, nil, 404, "not_found", false},
		{"unknown method 405", http.MethodDelete, "/healthz", nil, nil, 405, "method_not_allowed", false},
		{"wrong method on the sale route 405", http.MethodGet, "/api/v1/track/sale", nil, nil, 405, "method_not_allowed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := env.Do(tt.method, tt.path, tt.body, tt.headers...)
			if res.Status != tt.status {
				t.Fatalf("status = %d, want %d: %s", res.Status, tt.status, res.Body)
			}
			body := res.JSON(t)
			e, _ := body["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] == "" {
				t.Errorf("error = %v, want code %s and a message", e, tt.code)
			}
			if _, hasData := body["data"]; hasData == tt.typed {
				t.Errorf("envelope: data present %v, want the %s envelope", hasData, map[bool]string{true: "typed", false: "platform"}[tt.typed])
			}
		})
	}
}

// Management routes are validated against the spec before their handler runs.
func TestRequestValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	tests := []struct {
		name, method, path string
		body               any
		message            string
	}{
		{"enum", http.MethodPut, "/api/v1/programs/1/payment-processor", `{"provider":"paypal","webhook_secret":"whsec_1"}`,
			`Invalid request body: provider: value is not one of the allowed values ["stripe"]`},
		{"missing property", http.MethodPatch, "/api/v1/links/1", `{}`,
			`Invalid request body: enabled: property "enabled" is missing`},
		{"missing body", http.MethodPatch, "/api/v1/links/1", nil,
			"Invalid request body: value is required but missing"},
		{"path parameter", http.MethodGet, "/api/v1/programs/abc", nil,
			`Invalid path parameter programId: value abc: an invalid integer: invalid syntax`},
		{"query above maximum", http.MethodGet, "/api/tracking/events/1?pageSize=101", nil,
			"Invalid query parameter pageSize: number must be at most 100"},
		{"query enum", http.MethodGet, "/api/tracking/events/1?eventType=sale", nil,
			`Invalid query parameter eventType: value is not one of the allowed values ["click","lead","conversion"]`},
		// Formats and patterns are worded for people: the accepted form, never a regular expression.
		{"email format", http.MethodPost, "/api/v1/programs/1/partners", `{"name":"Pat","email":"Pat <pat@example.com>"}`,
			"Invalid request body: email: must be an email address such as ana@example.com"},
		{"date-time format", http.MethodGet, "/api/tracking/events/1?dateFrom=yesterday", nil,
			"Invalid query parameter dateFrom: must be an ISO 8601 date and time with a time zone, such as 2026-01-31T09:30:00Z"},
		{"date-time without a time zone", http.MethodGet, "/api/tracking/events/1?dateTo=2026-01-31T10:00:00", nil,
			"Invalid query parameter dateTo: must be an ISO 8601 date and time with a time zone, such as 2026-01-31T09:30:00Z"},
		{"date only where a date-time is needed", http.MethodGet, "/api/tracking/events/1?dateFrom=2026-01-31", nil,
			"Invalid query parameter dateFrom: must be an ISO 8601 date and time with a time zone, such as 2026-01-31T09:30:00Z"},
		{"date format", http.MethodGet, "/api/tracking/events/1/daily?dateTo=31.01.2026", nil,
			"Invalid query parameter dateTo: must be a date in the form YYYY-MM-DD, such as 2026-01-31"},
		{"pattern with an example", http.MethodPost, "/api/v1/programs/1/links", `{"partner_id":1,"short_link":"a b"}`,
			"Invalid request body: short_link: is not in the accepted form, such as spring-sale"},
		{"secret pattern", http.MethodPut, "/api/v1/programs/1/payment-processor", `{"provider":"stripe","webhook_secret":"sk_live_x"}`,
			"Invalid request body: webhook_secret: is not in the accepted form, such as whsec_1a2b3c"},
		{"not JSON", http.MethodPatch, "/api/v1/links/1", `{"enabled":`, "Request body must be valid JSON"},
		{"two JSON values", http.MethodPatch, "/api/v1/links/1", `{"enabled":true} {}`, "Request body must be valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := platformError(t, env.Do(tt.method, tt.path, tt.body), 400, "BadRequestError", tt.message)
			if e["code"] != "invalid_request" {
				t.Errorf("code = %v", e["code"])
			}
		})
	}
}

// The interface counts a JSON null as absent, and a JSON body is JSON whatever its Content-Type says.
func TestBodyNormalisation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// Dropping the null leaves no enabled, which the schema requires: proof the null was removed.
	platformError(t, env.Do(http.MethodPatch, "/api/v1/links/1", `{"enabled":null}`), 400, "BadRequestError",
		`Invalid request body: enabled: property "enabled" is missing`)
	// With the null dropped the rest validates and reaches the handler, which asks for a login.
	res := env.Do(http.MethodPatch, "/api/v1/links/1", `{"short_link":null,"enabled":true}`)
	if res.Status != http.StatusUnauthorized {
		t.Errorf("status = %d, body %s", res.Status, res.Body)
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", ""} {
		res := env.Do(http.MethodPatch, "/api/v1/links/1", `{"enabled":true}`, "Content-Type", ct)
		if res.Status != http.StatusUnauthorized {
			t.Errorf("Content-Type %q: status = %d, body %s", ct, res.Status, res.Body)
		}
	}
}

// --- 413 -----------------------------------------------------------------------------------------------

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	const limit = 64 << 10
	// A valid JSON object of exactly n bytes.
	object := func(n int) string {
		const head, tail = `{"email":"pat@example.com","name":"`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	t.Run("at the limit passes", func(t *testing.T) {
		res := env.Do(http.MethodPost, "/api/v1/programs/1/partners", object(limit))
		// Past the size check; the schema's maxLength refuses the name.
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), "maximum string length") {
			t.Errorf("status = %d, body %.200s", res.Status, res.Body)
		}
	})
	t.Run("413 over the limit", func(t *testing.T) {
		platformError(t, env.Do(http.MethodPost, "/api/v1/programs/1/partners", object(limit+1)), 413,
			"PayloadTooLargeError", "Request body is larger than the limit of 64 KiB")
	})
	t.Run("413 over the limit without Content-Length", func(t *testing.T) {
		// An io.Reader of unknown length is sent chunked, without Content-Length.
		req := env.NewRequest(http.MethodPost, "/api/v1/programs/1/partners", io.MultiReader(strings.NewReader(object(limit+1))))
		platformError(t, env.Send(req), 413, "PayloadTooLargeError", "Request body is larger than the limit of 64 KiB")
	})
}

// --- 500 -----------------------------------------------------------------------------------------------

func TestPanicIsA500WithoutInternals(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Routes: func(e *echo.Echo) {
		e.GET("/api/v1/programs/:programId", func(echo.Context) error { panic("secret internal detail") })
	}})
	// Signed in, so that the route's credential check lets the request reach the handler.
	token := env.Seed(seed.Options{}).AccountToken
	res := env.Do(http.MethodGet, "/api/v1/programs/1", nil, "X-Request-ID", "panic-1", "Authorization", "Bearer "+token)
	platformError(t, res, 500, "InternalServerError", "Internal server error")
	if strings.Contains(string(res.Body), "secret") {
		t.Errorf("body leaks the panic: %s", res.Body)
	}
	logs := env.Logs.String()
	if !strings.Contains(logs, "secret internal detail") || !strings.Contains(logs, `"request_id":"panic-1"`) {
		t.Errorf("the panic is not logged with its request id:\n%s", logs)
	}
}

// --- 501 -----------------------------------------------------------------------------------------------

// Every operation whose issue has not landed answers 501 in the platform envelope. Each issue that
// implements operations removes them here.
// Every operation of the spec is implemented: called bare (no credential, an empty body), none answers
// 501 or 404 for its route, and every answer matches the spec.
func TestEveryOperationAnswers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	idParam := regexp.MustCompile(`\{[A-Za-z]+\}`)
	for path, item := range env.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			t.Run(op.OperationID, func(t *testing.T) {
				var body any
				if op.RequestBody != nil {
					body = "{}"
				}
				res := env.Do(method, idParam.ReplaceAllString(path, "1"), body)
				if res.Status == http.StatusNotImplemented || res.Status == http.StatusMethodNotAllowed {
					t.Errorf("%s %s answered %d: %s", method, path, res.Status, res.Body)
				}
			})
		}
	}
}

// Every operation that requires a credential (x-reftrack-auth program-key, account or
// account-or-session) refuses a request without one, whatever its body, before it does anything else
// (operations whose requests the spec validates check the body first, so those get a valid one).
func TestRequiredCredentialsFromThePolicy(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	table, err := route.Load(env.Doc)
	if err != nil {
		t.Fatal(err)
	}
	idParam := regexp.MustCompile(`\{[A-Za-z]+\}`)
	validBodies := map[string]string{
		"createPartner": `{"name":"p","email":"p@example.com"}`, "updateProgram": `{"name":"n"}`, "createLink": `{"partner_id":1}`, "updateLink": `{"enabled":true}`,
		"setPaymentProcessor": `{"provider":"stripe","webhook_secret":"whsec_x"}`, "addWorkspaceMember": `{"email":"m@example.com","role":"admin"}`,
		"approveCommissions": `{"ids":[1]}`, "rejectCommission": `{"reason":"r"}`, "markPayoutPaid": `{"external_reference":"ref"}`,
		"markPayoutFailed": `{"reason":"r"}`, "createWebhookEndpoint": `{"url":"https://hooks.example.com"}`,
		"recoverWebhookDeliveries": `{"since":"2026-01-01T00:00:00Z"}`, "testWebhookEndpoint": `{"event_type":"sale.created"}`,
		"updateWebhookEndpoint": `{"enabled":true}`,
	}
	checked := 0
	for _, p := range table.All() {
		if p.Auth != route.ProgramKey && p.Auth != route.Account && p.Auth != route.AccountOrSession {
			continue
		}
		checked++
		var body any
		if p.Operation.RequestBody != nil {
			body = "{}"
			if b, ok := validBodies[p.OperationID]; ok {
				body = b
			}
		}
		res := env.Do(p.Method, idParam.ReplaceAllString(p.Path, "1"), body)
		if res.Status != http.StatusUnauthorized {
			t.Errorf("%s (%s) without a credential answered %d: %s", p.OperationID, p.Auth, res.Status, res.Body)
		}
	}
	if checked < 20 {
		t.Errorf("only %d operations require a credential", checked)
	}
}

// The access log records the client IP: the socket peer, and X-Forwarded-For only from a trusted proxy.
// (The line is written inside the handler chain, before the server sends a small buffered response, so
// it is in the log by the time Do returns.)
func TestClientIP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, trusted, want string
	}{
		{"untrusted X-Forwarded-For is ignored", "", `"remote_ip":"127.0.0.1"`},
		{"trusted proxy's X-Forwarded-For is believed", "127.0.0.0/8", `"remote_ip":"203.0.113.9"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
				if tt.trusted != "" {
					_, n, _ := net.ParseCIDR(tt.trusted)
					c.TrustedProxies = []*net.IPNet{n}
				}
			}})
			env.Do(http.MethodGet, "/healthz", nil, "X-Forwarded-For", "203.0.113.9")
			if logs := env.Logs.String(); !strings.Contains(logs, tt.want) {
				t.Errorf("log lacks %s:\n%s", tt.want, logs)
			}
		})
	}
}
