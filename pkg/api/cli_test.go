package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// startLogin begins a CLI login session and returns its state.
func startLogin(t *testing.T, env *apitest.Env) map[string]any {
	t.Helper()
	res := env.Do(http.MethodPost, "/api/v1/cli/auth/start", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("start: %d %s", res.Status, res.Body)
	}
	return res.JSON(t)["data"].(map[string]any)
}

// devIDToken asks the development issuer for an id_token.
func devIDToken(t *testing.T, env *apitest.Env, email string) string {
	t.Helper()
	res := env.Do(http.MethodPost, "/dev/oidc/id-token", map[string]any{"email": email, "name": "Ada"})
	if res.Status != http.StatusOK {
		t.Fatalf("id-token: %d %s", res.Status, res.Body)
	}
	return res.JSON(t)["id_token"].(string)
}

// cliLogin runs the whole CLI login for email and returns the poll's data.
func cliLogin(t *testing.T, env *apitest.Env, email string) map[string]any {
	t.Helper()
	state := startLogin(t, env)["state"].(string)
	if res := env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": state, "id_token": devIDToken(t, env, email)}); res.Status != http.StatusOK {
		t.Fatalf("callback: %d %s", res.Status, res.Body)
	}
	res := env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil)
	data := res.JSON(t)["data"].(map[string]any)
	if res.Status != http.StatusOK || data["status"] != "complete" {
		t.Fatalf("poll: %d %s", res.Status, res.Body)
	}
	return data
}

// --- login session -------------------------------------------------------------------------------------

func TestCliLoginSession(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	start := startLogin(t, env)
	state := start["state"].(string)
	if start["auth_url"] != env.URL+"/login?state="+url.QueryEscape(state) || start["poll_url"] != env.URL+"/api/v1/cli/auth/poll?state="+url.QueryEscape(state) {
		t.Errorf("start = %v", start)
	}
	if exp, _ := time.Parse(time.RFC3339, start["expires_at"].(string)); time.Until(exp) < 4*time.Minute || time.Until(exp) > 5*time.Minute {
		t.Errorf("expires_at = %v", start["expires_at"])
	}
	poll := func() *apitest.Response {
		return env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil)
	}
	if d := poll().JSON(t)["data"].(map[string]any); d["status"] != "pending" || d["token"] != nil {
		t.Errorf("pending poll = %v", d)
	}

	res := env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": state, "id_token": devIDToken(t, env, "Ada@Example.com")})
	if res.Status != http.StatusOK || res.JSON(t)["data"].(map[string]any)["email"] != "ada@example.com" {
		t.Fatalf("callback: %d %s", res.Status, res.Body)
	}
	done := poll()
	d := done.JSON(t)["data"].(map[string]any)
	token, _ := d["token"].(string)
	if d["status"] != "complete" || !strings.HasPrefix(token, "rtu_") || d["email"] != "ada@example.com" || d["advertiser_id"] == nil || d["expires_at"] == nil {
		t.Fatalf("complete poll = %s", done.Body)
	}
	// The first login created the account, its workspace and the owner membership.
	if n := env.Count(`SELECT count(*) FROM accounts a JOIN workspace_members m ON m.account_id = a.id AND m.role = 'owner'
		WHERE a.email = 'ada@example.com' AND a.oidc_subject IS NOT NULL AND m.workspace_id = $1`, int64(d["advertiser_id"].(float64))); n != 1 {
		t.Error("account and workspace not created")
	}
	// The token works on the account routes.
	if res := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(token)...); res.Status != http.StatusOK {
		t.Errorf("programs with the new token: %d %s", res.Status, res.Body)
	}
	platformError(t, poll(), 400, "BadRequestError", "Session already consumed")
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": state, "id_token": devIDToken(t, env, "ada@example.com")}),
		404, "NotFoundError", "Session not found or already used")

	// A second login of the same person reaches the same account.
	again := cliLogin(t, env, "ada@example.com")
	if again["advertiser_id"] != d["advertiser_id"] || env.Count(`SELECT count(*) FROM accounts`) != 1 {
		t.Errorf("second login = %v", again)
	}
}

// Clients that send every request as JSON call auth/start with a body: the original CLI sends
// Content-Type: application/json and no body, others send {}. The spec declares that optional body.
func TestCliAuthStartTakesTheBodiesClientsSend(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	// 200
	for name, body := range map[string]any{"no body": nil, "JSON type, empty": "", "{}": "{}", "members": map[string]any{"client": "cli"}} {
		res := env.Do(http.MethodPost, "/api/v1/cli/auth/start", body)
		if res.Status != http.StatusOK {
			t.Errorf("%s: %d %s", name, res.Status, res.Body)
			continue
		}
		if data := res.JSON(t)["data"].(map[string]any); data["state"] == "" || data["poll_url"] == "" {
			t.Errorf("%s: data = %v", name, data)
		}
	}
	// 400: a body that is not a JSON object starts nothing.
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/auth/start", "[]"), 400, "BadRequestError", "Invalid request body: value must be an object")
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/auth/start", "{"), 400, "BadRequestError", "Request body must be valid JSON")
	if n := env.Count(`SELECT count(*) FROM login_sessions`); n != 4 {
		t.Errorf("%d login sessions, want 4", n)
	}
}

func TestCliLoginErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	callback := func(body any) *apitest.Response { return env.Do(http.MethodPost, "/api/v1/cli/auth/callback", body) }
	state := startLogin(t, env)["state"].(string)
	token := devIDToken(t, env, "grace@example.com")

	// 400
	platformError(t, callback(map[string]any{"state": state}), 400, "BadRequestError", "Missing required fields: state, id_token")
	platformError(t, callback(map[string]any{"id_token": token}), 400, "BadRequestError", "Missing required fields: state, id_token")
	other, err := identity.NewDevIssuer("https://issuer.example.com", "reftrack", nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := other.Mint("grace@example.com", "", "")
	if err != nil {
		t.Fatal(err)
	}
	platformError(t, callback(map[string]any{"state": state, "id_token": foreign}), 400, "BadRequestError", "Invalid id_token")
	platformError(t, callback(map[string]any{"state": state, "id_token": "not.a.jwt"}), 400, "BadRequestError", "Invalid id_token")
	expired := startLogin(t, env)["state"].(string)
	if _, err := env.DB.Exec(`UPDATE login_sessions SET expires_at = now() - interval '1 second' WHERE state = $1`, expired); err != nil {
		t.Fatal(err)
	}
	platformError(t, callback(map[string]any{"state": expired, "id_token": token}), 400, "BadRequestError", "Session expired")
	if d := env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(expired), nil).JSON(t)["data"].(map[string]any); d["status"] != "expired" {
		t.Errorf("expired poll = %v", d)
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/auth/poll", nil), 400, "BadRequestError", "Missing state parameter")
	platformError(t, env.Do(http.MethodPost, "/dev/oidc/id-token", map[string]any{"email": "not an email"}), 400, "BadRequestError", "A valid email is required")

	// 404
	platformError(t, callback(map[string]any{"state": "nope", "id_token": token}), 404, "NotFoundError", "Session not found or already used")
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state=nope", nil), 404, "NotFoundError", "Session not found")

	// 403: a suspended account cannot log in, and nothing is signed in.
	r := env.Seed(seed.Options{Email: "suspended@example.com"})
	if _, err := env.DB.Exec(`UPDATE accounts SET suspended_at = now() WHERE email = $1`, r.AccountEmail); err != nil {
		t.Fatal(err)
	}
	e := platformError(t, callback(map[string]any{"state": state, "id_token": devIDToken(t, env, r.AccountEmail)}), 403, "ForbiddenError", "Your account has been suspended.")
	if e["code"] != "account_suspended" || e["details"].(map[string]any)["code"] != "ACCOUNT_BLOCKED" {
		t.Errorf("code = %v, details = %v; want account_suspended and ACCOUNT_BLOCKED", e["code"], e["details"])
	}
	if d := env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil).JSON(t)["data"].(map[string]any); d["status"] != "pending" {
		t.Errorf("poll after a refused login = %v", d)
	}
}

// Logging in with the email of an account made by `reftrackd seed` reaches that account.
func TestCliLoginReachesSeededAccount(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{Email: "owner@brand.example"})
	d := cliLogin(t, env, "owner@brand.example")
	if int64(d["advertiser_id"].(float64)) != r.AdvertiserID {
		t.Errorf("advertiser_id = %v, want %d", d["advertiser_id"], r.AdvertiserID)
	}
	progs := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(d["token"].(string))...).JSON(t)["data"].([]any)
	if len(progs) != 1 || int64(progs[0].(map[string]any)["id"].(float64)) != r.ProgramID {
		t.Errorf("programs = %v", progs)
	}
}

// --- account routes ------------------------------------------------------------------------------------

func TestCliInit(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	token := cliLogin(t, env, "maker@example.com")["token"].(string)
	auth := apitest.Bearer(token)
	valid := map[string]any{"name": "Acme Pro", "domain": "acme.example.com", "commission_type": "percent", "commission_rate": 30}

	// 401
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", valid), 401, "UnauthorizedError", "Authentication required — run reftrack login first")
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", valid, apitest.Bearer("rtu_unknown")...), 401, "UnauthorizedError", "Invalid or expired token — run the login command again")
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", valid, apitest.Bearer("rt_"+strings.Repeat("a", 40))...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key — run reftrack login and send its token")
	// 400
	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"name": "x", "domain": "d"}, "Missing required fields: name, domain, commission_type, commission_rate"},
		{map[string]any{"name": "x", "domain": "d", "commission_type": "bounty", "commission_rate": 3}, "Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed"},
		{map[string]any{"name": "x", "domain": "d", "commission_type": "fixed", "commission_rate": "25"}, "commission_rate must be a positive number"},
		{map[string]any{"name": "x", "domain": "d", "commission_type": "fixed", "commission_rate": -1}, "commission_rate must be a positive number"},
	} {
		platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", tc.body, auth...), 400, "BadRequestError", tc.msg)
	}
	// 403
	other := env.Seed(seed.Options{})
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "x", "domain": "d", "commission_type": "fixed",
		"commission_rate": 5, "advertiser_id": other.AdvertiserID}, auth...), 403, "ForbiddenError", "advertiser_id does not match the authenticated account")
	if _, err := env.DB.Exec(`DELETE FROM workspace_members WHERE email = 'nomember@example.com'`); err != nil {
		t.Fatal(err)
	}
	lonely := cliLogin(t, env, "nomember@example.com")["token"].(string)
	if _, err := env.DB.Exec(`DELETE FROM workspace_members WHERE email = 'nomember@example.com'`); err != nil {
		t.Fatal(err)
	}
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/init", valid, apitest.Bearer(lonely)...), 403, "ForbiddenError", "No advertiser found for this account — run the login command again")
	if n := env.Count(`SELECT count(*) FROM programs`); n != 1 {
		t.Fatalf("refused calls created programs: %d", n)
	}

	// 201
	body := valid
	body["cookie_duration"], body["duration_months"], body["advertiser_id"] = 30, 12, cliLoginAdvertiser(t, env, token)
	res := env.Do(http.MethodPost, "/api/v1/cli/init", body, auth...)
	if res.Status != http.StatusCreated {
		t.Fatalf("init: %d %s", res.Status, res.Body)
	}
	d := res.JSON(t)["data"].(map[string]any)
	key, _ := d["api_key"].(string)
	if !strings.HasPrefix(key, "rt_") || d["domain"] != "acme.example.com" || !strings.HasPrefix(d["program_slug"].(string), "acme-pro-") {
		t.Errorf("init = %v", d)
	}
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND commission_rate = 30 AND cookie_window_days = 30
		AND commission_duration_months = 12`, d["program_id"]); n != 1 {
		t.Error("program not stored as asked")
	}
	if st := env.Do(http.MethodGet, "/api/v1/cli/status", nil, apitest.Bearer(key)...); st.Status != http.StatusOK {
		t.Errorf("the new key does not work: %d %s", st.Status, st.Body)
	}
}

func cliLoginAdvertiser(t *testing.T, env *apitest.Env, token string) int64 {
	t.Helper()
	var id int64
	if err := env.DB.Get(&id, `SELECT m.workspace_id FROM workspace_members m JOIN login_tokens t ON t.account_id = m.account_id
		WHERE t.token_hash = sha256(convert_to($1, 'UTF8'))`, token); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCliPrograms(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{CommissionType: "recurring_percent", CommissionRate: "12.5"})
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/programs", nil), 401, "UnauthorizedError", "Missing Authorization header. Run the login command first.")
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer("rtu_x")...), 401, "UnauthorizedError", "Invalid or expired token. Run the login command to refresh.")
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key. Run the login command first.")
	res := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(r.AccountToken)...)
	list := res.JSON(t)["data"].([]any)
	if res.Status != http.StatusOK || len(list) != 1 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	p := list[0].(map[string]any)
	if p["commission"] != "12.5% recurring" || p["partners"] != 1.0 || p["status"] != "active" || p["domain"] != "shop.example.com" {
		t.Errorf("program = %v", p)
	}
	token := cliLogin(t, env, "fixed@example.com")["token"].(string)
	env.Do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "F", "domain": "f.example", "commission_type": "fixed", "commission_rate": 25}, apitest.Bearer(token)...)
	if got := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(token)...).JSON(t)["data"].([]any)[0].(map[string]any)["commission"]; got != "$25.00" {
		t.Errorf("fixed commission = %v", got)
	}
}

// --- program-key routes --------------------------------------------------------------------------------

func TestCliStatus(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "st")
	key := apitest.Bearer(r.APIKey)

	res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...)
	if res.Status != http.StatusOK || res.Header.Get("X-Request-ID") != "" {
		t.Fatalf("%d %v %s", res.Status, res.Header, res.Body)
	}
	d := res.JSON(t)["data"].(map[string]any)
	ev := d["recent_events"].(map[string]any)
	if d["program_id"] != float64(r.ProgramID) || ev["clicks_24h"] != 1.0 || ev["leads_24h"] != 1.0 || ev["sales_24h"] != 0.0 ||
		d["stripe_connected"] != false || d["active_partners"] != 1.0 || d["dns_verified"] != false {
		t.Errorf("status = %v", d)
	}
	if res := env.Do(http.MethodGet, "/api/v1/cli/status?program_id="+itoa(r.ProgramID), nil, key...); res.Status != http.StatusOK {
		t.Errorf("own program_id: %d", res.Status)
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/status?program_id=999999", nil, key...), 403, "ForbiddenError", "program_id does not match the API key")

	for _, tc := range []struct{ header, msg string }{
		{"", "Missing or malformed Authorization header. Expected: Bearer <api_token>"},
		{"Bearer ", "Missing API token"},
		{"Bearer rt_unknown", "Invalid API token. No program matches this key: it may have been regenerated. Ask a workspace owner of the program to regenerate the key in Settings → API keys and use the new one; creating a new program does not help."},
	} {
		var h []string
		if tc.header != "" {
			h = []string{"Authorization", tc.header}
		}
		res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, h...)
		platformError(t, res, 401, "UnauthorizedError", tc.msg)
		if res.Header.Get("X-Request-ID") != "" {
			t.Error("a status 401 carries X-Request-ID")
		}
	}
}

func TestCliTestEvents(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	key := apitest.Bearer(r.APIKey)
	post := func(body any) *apitest.Response {
		return env.Do(http.MethodPost, "/api/v1/cli/test-event", body, key...)
	}

	platformError(t, post(map[string]any{"event_type": "refund"}), 400, "BadRequestError", "Invalid event_type: refund. Valid: click, lead, sale")
	platformError(t, post(map[string]any{"event_type": "sale", "program_id": 999999}), 403, "ForbiddenError", "program_id does not match the API key")

	for _, et := range []string{"click", "lead", "sale"} {
		res := post(map[string]any{"event_type": et, "program_id": itoa(r.ProgramID)})
		d := res.JSON(t)["data"].(map[string]any)
		if res.Status != http.StatusOK || d["event_type"] != et || d["received"] != true || d["attributed"] != true || d["event_id"] == nil {
			t.Errorf("%s: %d %s", et, res.Status, res.Body)
		}
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE NOT is_test`) + env.Count(`SELECT count(*) FROM clicks WHERE NOT is_test`); n != 0 {
		t.Errorf("%d test records not marked is_test", n)
	}
	// The markers the spec's `test` parameter of the events list documents (the dashboard labels by them).
	if n := env.Count(`SELECT count(*) FROM clicks WHERE session_id NOT LIKE 'synthetic-%'`) + env.Count(`SELECT count(*) FROM leads WHERE customer_key NOT LIKE 'synthetic\_%'`) +
		env.Count(`SELECT count(*) FROM sales WHERE processor_event_id NOT LIKE 'synthetic\_txn\_%'`); n != 0 {
		t.Errorf("%d test records without their synthetic marker", n)
	}
	if n := env.Count(`SELECT count(*) FROM clicks`) + env.Count(`SELECT count(*) FROM leads`) + env.Count(`SELECT count(*) FROM sales`); n != 6 {
		t.Errorf("%d test records, want 6 (three clicks, two leads, a sale)", n)
	}

	res := post(map[string]any{"type": "chain"})
	d := res.JSON(t)["data"].(map[string]any)
	v := d["verdict"].(map[string]any)
	if res.Status != http.StatusOK || d["type"] != "chain" || d["attributed"] != true || v["click"] != "attributed" || v["lead"] != "attributed" || v["sale"] != "attributed" {
		t.Fatalf("chain: %d %s", res.Status, res.Body)
	}
	for i := 1; i < 10; i++ {
		if res := post(map[string]any{"type": "chain"}); res.Status != http.StatusOK {
			t.Fatalf("chain %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	capped := post(map[string]any{"type": "chain"})
	body := capped.JSON(t)
	e, _ := body["error"].(map[string]any)
	if capped.Status != http.StatusTooManyRequests || e["code"] != "rate_limited" || e["message"] != "Too many synthetic chains (max 10/program/hour)." ||
		e["retry_after_seconds"] == nil || capped.Header.Get("Retry-After") == "" || body["data"] != nil {
		t.Errorf("11th chain: %d %v %s", capped.Status, capped.Header, capped.Body)
	}
	if n := env.Count(`SELECT count(*) FROM synthetic_chains`); n != 10 {
		t.Errorf("%d chains stored, want 10", n)
	}
	// Readiness's live gate carries the last chain's verdict.
	live := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...).JSON(t)["gates"].(map[string]any)["live"].(map[string]any)
	if v, _ := live["verdict"].(map[string]any); v["click"] != "attributed" || v["lead"] != "attributed" || v["sale"] != "attributed" {
		t.Errorf("live gate = %v", live)
	}
	// The synthetic partner is a fixture: partner counts leave it out.
	st := env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...).JSON(t)["data"].(map[string]any)
	if st["active_partners"] != 1.0 {
		t.Errorf("active_partners = %v, want the seeded partner only", st["active_partners"])
	}
}

// --- login pages ------------------------------------------------------------------------------------------

// noRedirects sends requests through the spec-checking client without following redirects.
func noRedirects(env *apitest.Env) *http.Client {
	return &http.Client{Transport: env.Client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// With the development issuer the login page is a form that signs the session in.
func TestLoginPageDevelopmentForm(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	start := startLogin(t, env)
	res, err := env.Client.Get(start["auth_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<form method="post" action="/login">`) || !strings.Contains(page, start["state"].(string)) {
		t.Fatalf("login page: %d %s", res.StatusCode, page)
	}
	res, err = env.Client.PostForm(env.URL+"/login", url.Values{"state": {start["state"].(string)}, "email": {"lin@example.com"}, "name": {"Lin"}})
	if err != nil {
		t.Fatal(err)
	}
	if page := readAll(t, res); res.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in as lin@example.com") {
		t.Fatalf("submit: %d %s", res.StatusCode, page)
	}
	if d := env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(start["state"].(string)), nil).JSON(t)["data"].(map[string]any); d["status"] != "complete" || d["email"] != "lin@example.com" {
		t.Errorf("poll = %v", d)
	}
	res, err = env.Client.Get(env.URL + "/login?state=unknown")
	if err != nil {
		t.Fatal(err)
	}
	if page := readAll(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "unknown or was already used") {
		t.Errorf("unknown state: %d %s", res.StatusCode, page)
	}
}

// With a configured issuer the login page runs the authorization-code flow with PKCE. The issuer here
// is another reftrack server's development issuer, reached over HTTP like any real one.
func TestLoginPageCodeFlowWithPKCE(t *testing.T) {
	t.Parallel()
	issuerEnv := apitest.New(t)
	env := apitest.Start(t, apitest.Options{Config: func(c *config.Config) {
		c.OIDCIssuer = issuerEnv.URL + "/dev/oidc"
	}})
	start := startLogin(t, env)
	state := start["state"].(string)

	res, err := noRedirects(env).Get(start["auth_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, res)
	authorize, _ := url.Parse(res.Header.Get("Location"))
	q := authorize.Query()
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(authorize.String(), issuerEnv.URL+"/dev/oidc/authorize?") ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("state") != state ||
		q.Get("redirect_uri") != env.URL+"/login/callback" {
		t.Fatalf("redirect: %d %s", res.StatusCode, authorize)
	}

	res, err = issuerEnv.Client.Get(authorize.String())
	if err != nil {
		t.Fatal(err)
	}
	form := readAll(t, res)
	fields := url.Values{"email": {"pkce@example.com"}, "name": {"Pat"}}
	for _, m := range regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`).FindAllStringSubmatch(form, -1) {
		fields.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	res, err = noRedirects(issuerEnv).PostForm(issuerEnv.URL+"/dev/oidc/authorize", fields)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, res)
	back := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(back, env.URL+"/login/callback?") {
		t.Fatalf("issuer redirect: %d %s", res.StatusCode, back)
	}
	res, err = env.Client.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	if page := readAll(t, res); res.StatusCode != http.StatusOK || !strings.Contains(page, "Signed in as pkce@example.com") {
		t.Fatalf("callback: %d %s", res.StatusCode, page)
	}
	d := env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil).JSON(t)["data"].(map[string]any)
	if d["status"] != "complete" || d["email"] != "pkce@example.com" {
		t.Errorf("poll = %v", d)
	}
	if n := env.Count(`SELECT count(*) FROM accounts WHERE oidc_issuer = $1`, issuerEnv.URL+"/dev/oidc"); n != 1 {
		t.Error("account not tied to the configured issuer")
	}
	// A replayed code is refused by the issuer: the page says so and nothing changes.
	res, err = env.Client.Get(back)
	if err != nil {
		t.Fatal(err)
	}
	if page := readAll(t, res); res.StatusCode != http.StatusBadRequest {
		t.Errorf("replay: %d %s", res.StatusCode, page)
	}
	// The development issuer is off on this server.
	platformError(t, env.Do(http.MethodPost, "/dev/oidc/id-token", map[string]any{"email": "x@example.com"}), 404, "NotFoundError",
		"No development issuer: this server signs in through OIDC_ISSUER")
}

// CLI 500s name the request id in the message and in details, and carry it in the header too.
func TestCliServerErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	key := apitest.Bearer(r.APIKey)
	check := func(res *apitest.Response, prefix string) {
		t.Helper()
		id := res.Header.Get("X-Request-ID")
		e := platformError(t, res, 500, "InternalServerError", fmt.Sprintf("%s (request_id: %s)", prefix, id))
		if id == "" || e["details"].(map[string]any)["request_id"] != id {
			t.Errorf("%s: header %q, details %v", prefix, id, e["details"])
		}
	}
	for _, q := range []string{`ALTER TABLE synthetic_chains RENAME TO synthetic_chains_gone`, `ALTER TABLE login_sessions RENAME TO login_sessions_gone`} {
		if _, err := env.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	check(env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"type": "chain"}, key...), "Failed to run synthetic chain")
	check(env.Do(http.MethodPost, "/api/v1/cli/auth/start", nil), "Failed to start auth session")
	check(env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state=x", nil), "Failed to poll auth session")
	check(env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": "x", "id_token": "y"}), "Auth callback failed")
	if _, err := env.DB.Exec(`ALTER TABLE referral_links RENAME TO referral_links_gone`); err != nil {
		t.Fatal(err)
	}
	check(env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"event_type": "click"}, key...), "Failed to process test event")
}

// A refusal met inside the chain or a test event (here the commission store failing under the sale) is
// the route's own failure, not the refusal's answer.
func TestCliTestEventFailuresInsideTheChain(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	for _, q := range []string{
		`CREATE FUNCTION fail_commission() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'commission store down'; END $$`,
		`CREATE TRIGGER fail_commission BEFORE INSERT ON commissions FOR EACH ROW EXECUTE FUNCTION fail_commission()`,
	} {
		if _, err := env.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for body, prefix := range map[string]string{
		`{"type":"chain"}`:      "Failed to run synthetic chain",
		`{"event_type":"sale"}`: "Failed to process test event",
	} {
		res := env.Do(http.MethodPost, "/api/v1/cli/test-event", body, apitest.Bearer(r.APIKey)...)
		platformError(t, res, 500, "InternalServerError", fmt.Sprintf("%s (request_id: %s)", prefix, res.Header.Get("X-Request-ID")))
	}
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded", n)
	}
}

func TestCliServerErrorsOnAccountRoutes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	if _, err := env.DB.Exec(`ALTER TABLE programs RENAME TO programs_gone`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, prefix, token string
		body                        any
	}{
		{http.MethodPost, "/api/v1/cli/init", "Failed to create program", r.AccountToken,
			map[string]any{"name": "x", "domain": "x.example", "commission_type": "percent", "commission_rate": 5}},
		{http.MethodGet, "/api/v1/cli/programs", "Failed to list programs", r.AccountToken, nil},
		{http.MethodGet, "/api/v1/cli/status", "Failed to get status", r.APIKey, nil},
	} {
		res := env.Do(tc.method, tc.path, tc.body, apitest.Bearer(tc.token)...)
		id := res.Header.Get("X-Request-ID")
		platformError(t, res, 500, "InternalServerError", fmt.Sprintf("%s (request_id: %s)", tc.prefix, id))
		if id == "" {
			t.Errorf("%s: no X-Request-ID on a 500", tc.path)
		}
	}
}

// A retired key gets the typed 401 on the CLI's key routes (without X-Request-ID on status).
func TestCliRetiredKey(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	markRotation(t, env, r.ProgramID, time.Now().Add(-time.Minute))
	res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, apitest.Bearer(r.APIKey)...)
	e, _ := res.JSON(t)["error"].(map[string]any)
	if res.Status != http.StatusUnauthorized || e["code"] != "api_key_rotation_required" || res.Header.Get("X-Request-ID") != "" {
		t.Errorf("status: %d %v %s", res.Status, res.Header, res.Body)
	}
	res = env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"event_type": "click"}, apitest.Bearer(r.APIKey)...)
	if e, _ := res.JSON(t)["error"].(map[string]any); res.Status != http.StatusUnauthorized || e["code"] != "api_key_rotation_required" {
		t.Errorf("test-event: %d %s", res.Status, res.Body)
	}
}

// The CLI routes share one bucket of 60 a minute per key; the 61st answers 429 rate_limited, and on
// GET /cli/status without X-Request-ID.
func TestCliRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now}) // one window for the whole test
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	key := apitest.Bearer(r.APIKey)
	for i := 0; i < 60; i++ {
		path := "/api/v1/cli/status"
		if i%2 == 1 {
			path = "/api/v1/cli/status?program_id=" + itoa(r.ProgramID)
		}
		if res := env.Do(http.MethodGet, path, nil, key...); res.Status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...)
	e, _ := res.JSON(t)["error"].(map[string]any)
	if res.Status != http.StatusTooManyRequests || e["code"] != "rate_limited" || res.Header.Get("Retry-After") == "" ||
		res.Header.Get("X-RateLimit-Remaining") != "0" || res.Header.Get("X-Request-ID") != "" {
		t.Errorf("61st: %d %v %s", res.Status, res.Header, res.Body)
	}
	if res := env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"event_type": "click"}, key...); res.Status != http.StatusTooManyRequests || res.Header.Get("X-Request-ID") == "" {
		t.Errorf("test-event in the same bucket: %d %v", res.Status, res.Header)
	}
	if res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, apitest.Bearer(other.APIKey)...); res.Status != http.StatusOK {
		t.Errorf("another key's bucket: %d", res.Status)
	}
}

// `reftrack status`, readiness and the dashboard (which shows readiness's counts) count the same events:
// bot clicks, test events (the synthetic chain's too) and provisional leads count nowhere.
func TestOneWayOfCounting(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	key := apitest.Bearer(r.APIKey)
	customerWithLead(t, env, r, "real") // a click and a settled lead
	sale(env, r.APIKey, map[string]any{"transaction_id": "counted", "amount_cents": 100, "customer_key": "real"})
	env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "Twitterbot/1.0")
	browserClick := click(t, env, r)["click_id"].(string)
	if res := lead(env, map[string]any{"click_id": browserClick}); res.Status != http.StatusOK || res.JSON(t)["provisional"] != true {
		t.Fatalf("provisional lead: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"type": "chain"}, key...); res.Status != http.StatusOK {
		t.Fatalf("chain: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT (SELECT count(*) FROM clicks) + (SELECT count(*) FROM leads) + (SELECT count(*) FROM sales)`); n != 9 {
		t.Fatalf("%d events stored, want 9 (two real clicks and a bot's, two leads, a sale, and the chain's three)", n)
	}
	status := env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...).JSON(t)["data"].(map[string]any)["recent_events"].(map[string]any)
	counts := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...).JSON(t)["counts_24h"].(map[string]any)
	want := map[string]float64{"clicks": 2, "leads": 1, "sales": 1}
	for name, n := range want {
		if status[name+"_24h"] != n || counts[name] != n {
			t.Errorf("%s: status %v, readiness %v, want %v", name, status[name+"_24h"], counts[name], n)
		}
	}
}

// Domain verification: status shows the TXT record to add; the server looks it up at most once a minute
// while the domain is unverified, records the first match for good, and readiness shows the same.
func TestDomainVerification(t *testing.T) {
	t.Parallel()
	clock := apitest.PinnedClock()
	dns := &apitest.FakeDNS{}
	env := apitest.Start(t, apitest.Options{Clock: clock.Now, DNS: dns})
	r := env.Seed(seed.Options{})
	key := apitest.Bearer(r.APIKey)
	var domain, token string
	if err := env.DB.QueryRow(`SELECT domain, dns_token FROM programs WHERE id = $1`, r.ProgramID).Scan(&domain, &token); err != nil {
		t.Fatal(err)
	}
	name, value := "_reftrack."+domain, "reftrack-verification="+token
	status := func() map[string]any {
		t.Helper()
		return env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...).JSON(t)["data"].(map[string]any)
	}
	domainCheck := func() map[string]any {
		t.Helper()
		for _, c := range env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...).JSON(t)["checks"].([]any) {
			if c := c.(map[string]any); c["id"] == "domain_verified" {
				return c
			}
		}
		t.Fatal("no domain_verified check")
		return nil
	}

	st := status()
	want := map[string]any{"name": name, "type": "TXT", "value": value}
	if st["dns_verified"] != false || !cmp.Equal(st["dns_record"], want) {
		t.Fatalf("unverified status: dns_verified %v, dns_record %v; want false, %v", st["dns_verified"], st["dns_record"], want)
	}
	if c := domainCheck(); c["status"] != "unknown" || !strings.Contains(c["hint"].(string), name) || !strings.Contains(c["hint"].(string), value) {
		t.Errorf("unverified check = %v", c)
	}
	if n := dns.Lookups(); n != 1 {
		t.Errorf("%d lookups after two requests in the same minute, want 1", n)
	}
	dns.Set(name, "v=spf1 -all", "reftrack-verification=someone-else")
	clock.Advance(61 * time.Second)
	if status()["dns_verified"] != false || dns.Lookups() != 2 {
		t.Fatalf("another program's token verified the domain (lookups %d)", dns.Lookups())
	}
	dns.Set(name, "v=spf1 -all", value)
	if status()["dns_verified"] != false || dns.Lookups() != 2 {
		t.Fatalf("looked up again within the minute (lookups %d)", dns.Lookups())
	}
	clock.Advance(61 * time.Second)
	if status()["dns_verified"] != true {
		t.Fatal("the record was added and a minute passed, but the domain is not verified")
	}
	if c := domainCheck(); c["status"] != "pass" {
		t.Errorf("verified check = %v", c)
	}
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND dns_verified_at = $2`, r.ProgramID, clock.Now()); n != 1 {
		t.Error("dns_verified_at not recorded at the clock's time")
	}
	clock.Advance(time.Hour)
	dns.Set(name) // the record removed: a verified domain stays verified, and is not looked up again
	if status()["dns_verified"] != true || dns.Lookups() != 3 {
		t.Errorf("after verification: dns_verified %v, lookups %d (want true, 3)", status()["dns_verified"], dns.Lookups())
	}
}

// POST /api/v1/cli/auth/logout revokes the token it carries, and that token only.
func TestCliLogoutRevokesTheToken(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	res := env.Do(http.MethodPost, "/api/v1/cli/auth/logout", nil, apitest.Bearer(r.AccountToken)...)
	if res.Status != http.StatusOK || !cmp.Equal(res.JSON(t), map[string]any{"data": map[string]any{"logged_out": true}}) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(r.AccountToken)...), 401, "UnauthorizedError",
		"Invalid or expired token. Run the login command to refresh.")
	if res := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(other.AccountToken)...); res.Status != http.StatusOK {
		t.Errorf("another account's token: %d", res.Status)
	}
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/auth/logout", nil, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key. Run the login command first.")
}
