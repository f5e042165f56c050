package api_test

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/api"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

func markRotation(t *testing.T, env *apitest.Env, programID int64, rotateBy time.Time) apikeys.Key {
	t.Helper()
	k, err := apikeys.MarkRotation(context.Background(), env.DB.DB, programID, rotateBy)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A marked key works until its deadline, with the rotation signals on every response.
func TestMarkedKeySignals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "c")
	deadline := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
	k := markRotation(t, env, r.ProgramID, deadline)

	check := func(name string, res *apitest.Response) {
		t.Helper()
		h := res.Header
		if h.Get("Deprecation") != "@"+strconv.FormatInt(k.MarkedAt.Unix(), 10) || h.Get("Sunset") != deadline.Format(http.TimeFormat) ||
			h.Get("Link") != "<"+config.DefaultDocsURL+">; rel=deprecation" {
			t.Errorf("%s: headers %v", name, h)
		}
		ws, _ := res.JSON(t)["warnings"].([]any)
		if len(ws) != 1 {
			t.Fatalf("%s: warnings = %v", name, ws)
		}
		w := ws[0].(map[string]any)
		if w["code"] != "api_key_rotation_required" || w["rotate_by"] != deadline.Format(time.RFC3339) ||
			w["docs_url"] != config.DefaultDocsURL || w["message"] == "" || w["hint"] == "" {
			t.Errorf("%s: warning %v", name, w)
		}
	}
	ok := sale(env, r.APIKey, map[string]any{"transaction_id": "k1", "amount_cents": 100, "customer_key": "c"})
	if ok.Status != http.StatusOK {
		t.Fatalf("sale with a marked key: %d %s", ok.Status, ok.Body)
	}
	check("sale 200", ok)
	check("sale 409", sale(env, r.APIKey, map[string]any{"transaction_id": "k1", "amount_cents": 100, "customer_key": "c"}))
	check("refund 200", refund(env, r.APIKey, map[string]any{"transaction_id": "k1"}))
	check("readiness 200", env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...))
	check("lead 400", lead(env, map[string]any{"customer_key": "c"}, apitest.Bearer(r.APIKey)...))

	// Responses without the key carry none.
	if res := lead(env, `{}`); res.Header.Get("Deprecation") != "" || res.JSON(t)["warnings"] != nil {
		t.Errorf("a keyless request got rotation signals: %v", res.Header)
	}
}

// After the deadline every route the key authenticates answers 401 api_key_rotation_required.
func TestRetiredKey(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	markRotation(t, env, r.ProgramID, time.Now().Add(-time.Minute))
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"sale", http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "x", "amount_cents": 1}},
		{"refund", http.MethodPost, "/api/v1/track/refund", map[string]any{"transaction_id": "x"}},
		{"readiness", http.MethodGet, "/api/v1/programs/me/readiness", nil},
		{"lead (server mode)", http.MethodPost, "/api/v1/track/lead", map[string]any{"customer_key": "c"}},
		{"click (test mode)", http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL, "additional_data": map[string]any{"test_mode": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := env.Do(tc.method, tc.path, tc.body, apitest.Bearer(r.APIKey)...)
			if res.Status != http.StatusUnauthorized {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			body := res.JSON(t)
			e, _ := body["error"].(map[string]any)
			if _, hasData := body["data"]; hasData || e["code"] != "api_key_rotation_required" || e["hint"] == nil ||
				e["docs_url"] != config.DefaultDocsURL || e["message"] == nil {
				t.Errorf("body = %v", body)
			}
		})
	}
}

func TestRegeneratedKeyReplacesTheOld(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	res := env.Do(http.MethodPost, "/api/v1/programs/"+itoa(r.ProgramID)+"/api-key", nil, apitest.Bearer(r.AccountToken)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	data := res.JSON(t)["data"].(map[string]any)
	newKey := data["api_key"].(string)
	if !regexp.MustCompile(`^rt_[0-9A-Za-z]{40}$`).MatchString(newKey) || data["masked"] != "rt_…"+newKey[len(newKey)-4:] {
		t.Errorf("data = %v", data)
	}
	codedError(t, sale(env, r.APIKey, map[string]any{"transaction_id": "x", "amount_cents": 1}), 401, "UnauthorizedError", "unauthorized", "Invalid API token")
	if res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(newKey)...); res.Status != http.StatusOK {
		t.Errorf("new key: %d %s", res.Status, res.Body)
	}
	// Masked afterwards.
	info := env.Do(http.MethodGet, "/api/v1/programs/"+itoa(r.ProgramID)+"/api-key", nil, apitest.Bearer(r.AccountToken)...).JSON(t)["data"].(map[string]any)
	if info["masked"] != data["masked"] || info["rotation"] != nil {
		t.Errorf("key info = %v", info)
	}
}

// A client that sends every request as JSON may regenerate with an empty object; the body is ignored.
func TestRegenerateKeyTakesAnEmptyJSONBody(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	path := "/api/v1/programs/" + itoa(r.ProgramID) + "/api-key"
	// 400: not a JSON object; the key stays.
	platformError(t, env.Do(http.MethodPost, path, "[]", apitest.Bearer(r.AccountToken)...), 400, "BadRequestError", "Invalid request body: value must be an object")
	if res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("key after a refused regeneration: %d %s", res.Status, res.Body)
	}
	// 200
	for _, body := range []any{"", "{}"} {
		res := env.Do(http.MethodPost, path, body, apitest.Bearer(r.AccountToken)...)
		if res.Status != http.StatusOK || !strings.HasPrefix(res.JSON(t)["data"].(map[string]any)["api_key"].(string), "rt_") {
			t.Errorf("body %q: %d %s", body, res.Status, res.Body)
		}
	}
}

// --- readiness -----------------------------------------------------------------------------------------

func TestReadiness401(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, tt := range []struct{ header, msg string }{
		{"", "Missing or malformed Authorization header. Expected: Bearer <api_token>."},
		{"Token abc", "Missing or malformed Authorization header. Expected: Bearer <api_token>."},
		{"Bearer", "Missing API token."},
		{"Bearer rt_nope", "Invalid API token."},
	} {
		var h []string
		if tt.header != "" {
			h = []string{"Authorization", tt.header}
		}
		res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, h...)
		body := res.JSON(t)
		e, _ := body["error"].(map[string]any)
		if _, hasData := body["data"]; res.Status != 401 || hasData || e["code"] != "invalid_key" || e["message"] != tt.msg {
			t.Errorf("%q: %d %v", tt.header, res.Status, body)
		}
	}
}

func TestReadinessProgresses(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	get := func() map[string]any {
		t.Helper()
		res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...)
		if res.Status != http.StatusOK {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		return res.JSON(t)
	}
	checks := func(body map[string]any) map[string]string {
		out := map[string]string{}
		for _, c := range body["checks"].([]any) {
			m := c.(map[string]any)
			out[m["id"].(string)] = m["status"].(string)
			if m["hint"] == "" {
				t.Errorf("check %v has no hint", m)
			}
		}
		return out
	}
	b := get()
	if b["state"] != "ready" || b["blocker"] != "tracking" || b["integration_verified"] != false || b["program_id"] != float64(r.ProgramID) {
		t.Errorf("fresh program: %v", b)
	}
	if c := checks(b); c["tracker_click_seen"] != "fail" || c["allowed_origins_set"] != "fail" || c["sale_seen"] != "fail" {
		t.Errorf("fresh checks: %v", c)
	}
	if _, err := env.DB.Exec(`UPDATE programs SET allowed_origins = '{https://shop.example.com}'`); err != nil {
		t.Fatal(err)
	}
	customerWithLead(t, env, r, "c")
	b = get()
	if b["state"] != "integration_verified" || b["blocker"] != "live" || b["integration_verified"] != true {
		t.Errorf("after click and lead: %v", b)
	}
	sale(env, r.APIKey, map[string]any{"transaction_id": "live", "amount_cents": 100, "customer_key": "c"})
	b = get()
	counts := b["counts_24h"].(map[string]any)
	last := b["last_event_at"].(map[string]any)
	if b["state"] != "live_verified" || b["blocker"] != nil || counts["clicks"] != 1.0 || counts["leads"] != 1.0 || counts["sales"] != 1.0 ||
		last["click"] == nil || last["lead"] == nil || last["sale"] == nil || b["poll"].(map[string]any)["retry_after_seconds"] != 30.0 {
		t.Errorf("after a sale: %v", b)
	}
	if c := checks(b); c["processor_connected"] != "unknown" || c["sale_seen"] != "pass" || c["server_lead_seen"] != "pass" {
		t.Errorf("checks: %v", c)
	}
}

func TestReadinessRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now}) // one window for the whole test
	r := env.Seed(seed.Options{})
	for i := 0; i < 30; i++ {
		env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...)
	}
	assertRateLimited(t, env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...), 30)
}

// A workspace owner's regeneration is recorded in the audit log once, with the account as actor and the
// server's clock as time; refused regenerations (another role, a body that is not an object, a program
// the account cannot see) record nothing.
func TestRegenerateKeyIsAudited(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	env := apitest.Start(t, apitest.Options{Clock: apitest.NewClock(at).Now})
	r := env.Seed(seed.Options{Email: "owner@example.com"})
	path := "/api/v1/programs/" + itoa(r.ProgramID) + "/api-key"
	// Refused: nothing recorded.
	admin := member(t, env, r.AdvertiserID, "admin")
	if res := env.Do(http.MethodPost, path, nil, apitest.Bearer(admin)...); res.Status != http.StatusForbidden {
		t.Errorf("admin: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodPost, path, "[]", apitest.Bearer(r.AccountToken)...); res.Status != http.StatusBadRequest {
		t.Errorf("bad body: %d %s", res.Status, res.Body)
	}
	other := env.Seed(seed.Options{})
	if res := env.Do(http.MethodPost, path, nil, apitest.Bearer(other.AccountToken)...); res.Status < 400 {
		t.Errorf("another account: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM audit_log`); n != 0 {
		t.Fatalf("refused regenerations left %d audit records", n)
	}
	// 200: one record.
	res := env.Do(http.MethodPost, path, nil, apitest.Bearer(r.AccountToken)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	masked := res.JSON(t)["data"].(map[string]any)["masked"].(string)
	var got []struct {
		At        time.Time `db:"at"`
		Actor     string    `db:"actor"`
		AccountID *int64    `db:"actor_account_id"`
		Action    string    `db:"action"`
		Target    string    `db:"target"`
		Detail    string    `db:"detail"`
	}
	if err := env.DB.Select(&got, `SELECT at, actor, actor_account_id, action, target, detail::text AS detail FROM audit_log`); err != nil {
		t.Fatal(err)
	}
	var ownerID int64
	if err := env.DB.Get(&ownerID, `SELECT id FROM accounts WHERE email = 'owner@example.com'`); err != nil {
		t.Fatal(err)
	}
	want := `{"new_key": "` + masked + `", "old_key": "rt_…` + r.APIKey[len(r.APIKey)-4:] + `"}`
	if len(got) != 1 || got[0].Actor != "owner@example.com" || got[0].AccountID == nil || *got[0].AccountID != ownerID ||
		got[0].Action != "api_key.regenerate" || got[0].Target != "program:"+itoa(r.ProgramID) ||
		got[0].At.Sub(at) < 0 || got[0].At.Sub(at) > time.Second || got[0].Detail != want {
		t.Errorf("audit records = %+v, want one by owner@example.com (account %d) at %s with %s", got, ownerID, at, want)
	}
}

// The dashboard's regeneration (session cookie and CSRF token) is recorded the same way, by the signed-in
// owner; without the CSRF token it is refused and recorded nowhere.
func TestDashboardRegenerationIsAudited(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	b := newBrowserLike(t, env)
	csrf := b.signIn(r.AccountEmail)
	session := "reftrack_session=" + b.cookie(dashboard.SessionCookie)
	path := "/api/v1/programs/" + itoa(r.ProgramID) + "/api-key"
	if res := env.Do(http.MethodPost, path, nil, "Cookie", session); res.Status != http.StatusForbidden {
		t.Fatalf("without CSRF: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM audit_log`); n != 0 {
		t.Fatalf("a refused regeneration left %d audit records", n)
	}
	if res := env.Do(http.MethodPost, path, nil, "Cookie", session, "X-CSRF-Token", csrf); res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM audit_log a JOIN accounts c ON c.id = a.actor_account_id
		WHERE a.actor = $1 AND c.email = $1 AND a.action = 'api_key.regenerate' AND a.target = $2`,
		r.AccountEmail, "program:"+itoa(r.ProgramID)); n != 1 {
		t.Errorf("audit records of the dashboard's regeneration = %d, want 1", n)
	}
}

// An account login token sent where a program API key is needed is refused with the interface's message
// and a hint saying which credential the route takes (details.hint in the platform envelope, hint in the
// typed one); a key that matches nothing gets no hint.
func TestAccountTokenSentAsAKeyIsTold(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	for _, route := range []struct{ path, message string }{
		{"/api/v1/track/sale", "Invalid API token"},
		{"/api/v1/track/refund", "Invalid API token"},
		{"/api/v1/track/lead", "Invalid API token"},
	} {
		body := map[string]any{"transaction_id": "t-1", "amount_cents": 100, "currency": "USD", "customer_key": "c-1", "click_id": "x"}
		e := platformError(t, env.Do(http.MethodPost, route.path, body, apitest.Bearer(r.AccountToken)...), 401, "UnauthorizedError", route.message)
		if d, _ := e["details"].(map[string]any); d["hint"] != api.AccountTokenHint {
			t.Errorf("%s with an account token: details %v", route.path, e["details"])
		}
		e = platformError(t, env.Do(http.MethodPost, route.path, body, apitest.Bearer("rt_nope")...), 401, "UnauthorizedError", route.message)
		if d, _ := e["details"].(map[string]any); d["hint"] != nil {
			t.Errorf("%s with an unknown key: details %v", route.path, e["details"])
		}
	}
	res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.AccountToken)...)
	e, _ := res.JSON(t)["error"].(map[string]any)
	if res.Status != 401 || e["code"] != "invalid_key" || e["message"] != "Invalid API token." || e["hint"] != api.AccountTokenHint {
		t.Errorf("readiness with an account token: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded", n)
	}
}
