package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	"github.com/reftrack/reftrack/pkg/secret"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// member adds an account with role to the workspace and returns its login token.
func member(t *testing.T, env *apitest.Env, workspaceID int64, role string) string {
	t.Helper()
	tok, err := secret.New(secret.AccountTokenPrefix)
	if err != nil {
		t.Fatal(err)
	}
	email := role + "-" + tok.Last4 + "@example.com"
	var accountID int64
	if err := env.DB.Get(&accountID, `INSERT INTO accounts (email) VALUES ($1) RETURNING id`, email); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Exec(`INSERT INTO workspace_members (workspace_id, account_id, email, role) VALUES ($1, $2, $3, $4)`,
		workspaceID, accountID, email, role); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Exec(`INSERT INTO login_tokens (account_id, kind, token_hash, last4, expires_at) VALUES ($1, 'cli', $2, $3, now() + interval '1 day')`,
		accountID, tok.Hash, tok.Last4); err != nil {
		t.Fatal(err)
	}
	return tok.Plain
}

func TestManagementAuth(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	path := "/api/v1/programs/" + itoa(r.ProgramID)
	platformError(t, env.Do(http.MethodGet, path, nil), 401, "UnauthorizedError", "Authentication required — run reftrack login first")
	platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer("rtu_nope")...), 401, "UnauthorizedError", "Invalid or expired token — run the login command again")
	// A program API key is not an account credential, and the answer says which one the route needs.
	platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key — run reftrack login and send its token")
	platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(other.AccountToken)...), 403, "ForbiddenError", "You are not a member of this program's workspace")
	platformError(t, env.Do(http.MethodGet, "/api/v1/programs/999999", nil, apitest.Bearer(r.AccountToken)...), 404, "NotFoundError", "Program not found")
	// The dashboard session cookie works like the Bearer token.
	if res := env.Do(http.MethodGet, path, nil, "Cookie", "reftrack_session="+r.AccountToken); res.Status != http.StatusOK {
		t.Errorf("session cookie: %d %s", res.Status, res.Body)
	}
	// Suspended accounts are refused.
	if _, err := env.DB.Exec(`UPDATE accounts SET suspended_at = now() WHERE email = $1`, r.AccountEmail); err != nil {
		t.Fatal(err)
	}
	e := platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(r.AccountToken)...), 403, "ForbiddenError", "Your account has been suspended.")
	if e["code"] != "account_suspended" || e["details"].(map[string]any)["code"] != "ACCOUNT_BLOCKED" {
		t.Errorf("code = %v, details = %v; want account_suspended and ACCOUNT_BLOCKED", e["code"], e["details"])
	}
}

func TestProgramSettings(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	path := "/api/v1/programs/" + itoa(r.ProgramID)
	res := env.Do(http.MethodPatch, path, map[string]any{"allowed_origins": []string{"https://WWW.Shop.example.com/", "http://localhost:3000"},
		"lead_auth": "browser_allowed", "cookie_window_days": 30, "attribution_window_days": 45, "commission_type": "fixed", "commission_rate": 12.5,
		"name": "Renamed"}, apitest.Bearer(r.AccountToken)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	p := res.JSON(t)["data"].(map[string]any)
	if p["name"] != "Renamed" || p["lead_auth"] != "browser_allowed" || p["cookie_window_days"] != 30.0 || p["attribution_window_days"] != 45.0 ||
		p["commission_type"] != "fixed" || p["commission_rate"] != 12.5 || p["api_key_masked"] != "rt_…"+r.APIKey[len(r.APIKey)-4:] {
		t.Errorf("program = %v", p)
	}
	if o := p["allowed_origins"].([]any); len(o) != 2 || o[0] != "https://www.shop.example.com" || o[1] != "http://localhost:3000" {
		t.Errorf("allowed_origins = %v", o)
	}
	// The click route sees the new origins at once.
	if res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "Origin", "http://localhost:3000"); res.Status != http.StatusOK ||
		res.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Errorf("click from a new origin: %d %v", res.Status, res.Header)
	}
	platformError(t, env.Do(http.MethodPatch, path, map[string]any{"allowed_origins": []string{"https://a.example/path"}}, apitest.Bearer(r.AccountToken)...),
		400, "BadRequestError", "allowed_origins entries must be origins such as https://shop.example.com")
}

func TestPartnersLinksAndTheSwitch(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	auth := apitest.Bearer(r.AccountToken)
	base := "/api/v1/programs/" + itoa(r.ProgramID)
	res := env.Do(http.MethodPost, base+"/partners", map[string]any{"name": "Pat", "email": "pat@example.com"}, auth...)
	if res.Status != http.StatusCreated {
		t.Fatalf("partner: %d %s", res.Status, res.Body)
	}
	partnerID := res.JSON(t)["data"].(map[string]any)["id"].(float64)
	res = env.Do(http.MethodPost, base+"/links", map[string]any{"partner_id": partnerID, "short_link": "pat-2026"}, auth...)
	if res.Status != http.StatusCreated {
		t.Fatalf("link: %d %s", res.Status, res.Body)
	}
	link := res.JSON(t)["data"].(map[string]any)
	if link["short_link"] != "pat-2026" || link["enabled"] != true || link["referral_url"] != "https://shop.example.com/?aff=pat-2026" {
		t.Errorf("link = %v", link)
	}
	platformError(t, env.Do(http.MethodPost, base+"/links", map[string]any{"partner_id": partnerID, "short_link": "pat-2026"}, auth...),
		409, "ConflictError", "short_link pat-2026 is already taken")
	platformError(t, env.Do(http.MethodPost, base+"/links", map[string]any{"partner_id": 999999}, auth...),
		400, "BadRequestError", "partner_id is not a partner of this program")
	generated := env.Do(http.MethodPost, base+"/links", map[string]any{"partner_id": partnerID}, auth...).JSON(t)["data"].(map[string]any)
	if s, _ := generated["short_link"].(string); len(s) != 8 {
		t.Errorf("generated short_link = %v", generated["short_link"])
	}
	if n := len(env.Do(http.MethodGet, base+"/links", nil, auth...).JSON(t)["data"].([]any)); n != 3 {
		t.Errorf("%d links listed, want 3", n)
	}
	if n := len(env.Do(http.MethodGet, base+"/partners", nil, auth...).JSON(t)["data"].([]any)); n != 2 {
		t.Errorf("%d partners listed, want 2", n)
	}

	// The on/off switch: Active → Disabled → Active.
	linkPath := "/api/v1/links/" + itoa(int64(link["id"].(float64)))
	clickPat := func() int {
		return env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": "https://shop.example.com/?aff=pat-2026"}).Status
	}
	if s := clickPat(); s != http.StatusOK {
		t.Fatalf("active link: %d", s)
	}
	if res := env.Do(http.MethodPatch, linkPath, map[string]any{"enabled": false}, auth...); res.Status != http.StatusOK || res.JSON(t)["data"].(map[string]any)["enabled"] != false {
		t.Fatalf("turn off: %d %s", res.Status, res.Body)
	}
	if s := clickPat(); s != http.StatusGone {
		t.Errorf("disabled link: %d", s)
	}
	env.Do(http.MethodPatch, linkPath, map[string]any{"enabled": true}, auth...)
	if s := clickPat(); s != http.StatusOK {
		t.Errorf("re-enabled link: %d", s)
	}
	platformError(t, env.Do(http.MethodPatch, "/api/v1/links/999999", map[string]any{"enabled": true}, auth...), 404, "NotFoundError", "Referral link not found")
}

// Every role against every management route.
func TestManagementRoles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	base := "/api/v1/programs/" + itoa(r.ProgramID)
	routes := []struct {
		name, method, path string
		body               any
		allowed            map[string]bool
	}{
		{"get program", http.MethodGet, base, nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"list partners", http.MethodGet, base + "/partners", nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"list links", http.MethodGet, base + "/links", nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"show key", http.MethodGet, base + "/api-key", nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"change settings", http.MethodPatch, base, map[string]any{"name": "x"}, map[string]bool{"owner": true, "admin": true}},
		{"add partner", http.MethodPost, base + "/partners", map[string]any{"name": "p", "email": "p@example.com"}, map[string]bool{"owner": true, "admin": true}},
		{"add link", http.MethodPost, base + "/links", map[string]any{"partner_id": r.PartnerID}, map[string]bool{"owner": true, "admin": true}},
		{"switch link", http.MethodPatch, "/api/v1/links/" + itoa(r.LinkID), map[string]any{"enabled": true}, map[string]bool{"owner": true, "admin": true}},
		{"regenerate key", http.MethodPost, base + "/api-key", nil, map[string]bool{"owner": true}},
		{"show payment processor", http.MethodGet, base + "/payment-processor", nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"program readiness", http.MethodGet, base + "/readiness", nil, map[string]bool{"owner": true, "admin": true, "analyst": true, "billing": true}},
		{"list events", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID), nil, map[string]bool{"owner": true, "admin": true, "analyst": true}},
		{"count events per day", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID) + "/daily", nil, map[string]bool{"owner": true, "admin": true, "analyst": true}},
		{"connect payment processor", http.MethodPut, base + "/payment-processor", map[string]any{"provider": "stripe", "webhook_secret": "whsec_role"},
			map[string]bool{"owner": true, "admin": true}},
	}
	for _, role := range []string{"owner", "admin", "analyst", "billing"} {
		token := member(t, env, r.AdvertiserID, role)
		for _, rt := range routes {
			t.Run(role+"/"+rt.name, func(t *testing.T) {
				res := env.Do(rt.method, rt.path, rt.body, apitest.Bearer(token)...)
				if rt.allowed[role] {
					if res.Status >= 300 {
						t.Errorf("%d %s", res.Status, res.Body)
					}
					return
				}
				e := platformError(t, res, 403, "ForbiddenError", res.JSON(t)["error"].(map[string]any)["message"].(string))
				if msg, _ := e["message"].(string); !strings.HasPrefix(msg, "Your role ("+role+") does not allow this") {
					t.Errorf("message = %q", msg)
				}
			})
		}
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "c")
	sale(env, r.APIKey, map[string]any{"transaction_id": "m", "amount_cents": 100, "customer_key": "c"})
	res := env.Do(http.MethodGet, "/metrics", nil)
	text := string(res.Body)
	for _, want := range []string{
		`reftrack_events_recorded_total{test="false",type="click"} 1`,
		`reftrack_events_recorded_total{test="false",type="lead"} 1`,
		`reftrack_events_recorded_total{test="false",type="sale"} 1`,
		`reftrack_http_requests_total{method="POST",route="/api/v1/track/sale",status="200"} 1`,
		`reftrack_http_request_duration_seconds_bucket{method="POST",route="/api/v1/track/click",le=`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// replicasOnRedis starts two servers (replicas) on one database that keep their rate-limit counts in one
// Redis, under keys of their own, with one pinned clock (so they agree on the window); it skips the test
// when no Redis answers on 127.0.0.1:6379.
func replicasOnRedis(t *testing.T) (a, b *apitest.Env) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Skipf("no Redis: %v", err)
	}
	suffix, _ := secret.RandomString(8)
	clock := apitest.PinnedClock().Now
	store := ratelimit.NewRedis(client, "reftrack-test:"+suffix+":")
	a = apitest.Start(t, apitest.Options{Clock: clock, LimitStore: store})
	b = apitest.Start(t, apitest.Options{Clock: clock, LimitStore: store, DB: a.DB})
	return a, b
}

// With Redis the limit is shared: two servers (replicas) on one Redis count together.
func TestRateLimitSharedThroughRedis(t *testing.T) {
	t.Parallel()
	a, b := replicasOnRedis(t)
	for i := 0; i < 30; i++ {
		env := a
		if i%2 == 1 {
			env = b
		}
		if res := lead(env, `{}`); res.Header.Get("X-RateLimit-Remaining") != itoa(int64(29-i)) {
			t.Fatalf("request %d: remaining %s", i, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
	assertRateLimited(t, lead(b, `{}`), 30)
}
