package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// POST /api/v1/workspaces/{advertiserId}/programs: what `reftrack init` does, for the dashboard.
func TestCreateProgram(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	path := "/api/v1/workspaces/" + itoa(r.AdvertiserID) + "/programs"
	owner := apitest.Bearer(r.AccountToken)
	programs := func() int {
		t.Helper()
		var n int
		if err := env.DB.Get(&n, `SELECT count(*) FROM programs WHERE workspace_id = $1`, r.AdvertiserID); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := programs()

	res := env.Do(http.MethodPost, path, map[string]any{"name": "  Acme Pro ", "domain": "https://Acme.example.com/", "commission_type": "percent",
		"commission_rate": 20, "cookie_window_days": 30, "lead_auth": "browser_allowed", "allowed_origins": []string{"https://acme.example.com"},
		"duration_months": nil}, owner...)
	if res.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", res.Status, res.Body)
	}
	data := res.JSON(t)["data"].(map[string]any)
	p, key := data["program"].(map[string]any), data["api_key"].(string)
	for k, want := range map[string]any{"name": "Acme Pro", "domain": "acme.example.com", "commission_type": "percent", "commission_rate": 20.0,
		"cookie_window_days": 30.0, "lead_auth": "browser_allowed", "advertiser_id": float64(r.AdvertiserID)} {
		if p[k] != want {
			t.Errorf("%s = %v, want %v", k, p[k], want)
		}
	}
	if origins := p["allowed_origins"].([]any); len(origins) != 1 || origins[0] != "https://acme.example.com" {
		t.Errorf("allowed_origins = %v", origins)
	}
	// The key is the new program's, at once.
	if res := env.Do(http.MethodGet, "/api/v1/cli/status", nil, apitest.Bearer(key)...); res.Status != http.StatusOK ||
		res.JSON(t)["data"].(map[string]any)["program_id"] != p["id"] {
		t.Errorf("the new key: %d %s", res.Status, res.Body)
	}
	// It is listed and shown to the owner like any other program.
	if res := env.Do(http.MethodGet, "/api/v1/programs/"+itoa(int64(p["id"].(float64))), nil, owner...); res.Status != http.StatusOK {
		t.Errorf("show: %d %s", res.Status, res.Body)
	}

	// Refusals: their messages, and nothing created.
	valid := map[string]any{"name": "Shop", "domain": "shop.example.com", "commission_type": "fixed", "commission_rate": 5}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range valid {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		body map[string]any
		msg  string
	}{
		{with("name", nil), "Missing required fields: name, domain, commission_type, commission_rate"},
		{with("name", "   "), "Missing required fields: name, domain, commission_type, commission_rate"},
		{with("name", strings.Repeat("n", 201)), "name must be a string of 1 to 200 characters"},
		{with("commission_type", "bogus"), "Invalid commission_type: bogus. Valid: percent, fixed, recurring_percent, recurring_fixed"},
		{with("commission_rate", "5"), "commission_rate must be a positive number"},
		{with("commission_rate", 0), "commission_rate must be a positive number"},
		{map[string]any{"name": "Shop", "domain": "shop.example.com", "commission_type": "percent", "commission_rate": 101}, "commission_rate must be at most 100 for percent commissions"},
		{with("domain", "shop.example.com/path"), "domain must be a host name such as shop.example.com"},
		{with("cookie_window_days", 0), "cookie_window_days must be between 1 and 3650"},
		{with("cookie_window_days", "30"), "cookie_window_days must be between 1 and 3650"},
		{with("lead_auth", "always"), "lead_auth must be server_required or browser_allowed"},
		{with("allowed_origins", []string{"acme.example.com"}), "allowed_origins entries must be origins such as https://shop.example.com"},
		{with("allowed_origins", "https://acme.example.com"), "allowed_origins entries must be origins such as https://shop.example.com"},
	} {
		platformError(t, env.Do(http.MethodPost, path, tc.body, owner...), http.StatusBadRequest, "BadRequestError", tc.msg)
	}
	if got := programs(); got != before+1 {
		t.Errorf("%d programs, want %d: a refusal created one", got, before+1)
	}

	// Who may: owner and admin; an analyst or billing member is refused, as are strangers and API keys.
	for role, want := range map[string]int{"admin": 201, "analyst": 403, "billing": 403} {
		if res := env.Do(http.MethodPost, path, valid, apitest.Bearer(member(t, env, r.AdvertiserID, role))...); res.Status != want {
			t.Errorf("%s: %d, want %d: %s", role, res.Status, want, res.Body)
		}
	}
	stranger := env.Seed(seed.Options{})
	if res := env.Do(http.MethodPost, path, valid, apitest.Bearer(stranger.AccountToken)...); res.Status != http.StatusForbidden {
		t.Errorf("a stranger: %d %s", res.Status, res.Body)
	}
	platformError(t, env.Do(http.MethodPost, path, valid, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key — run reftrack login and send its token")
	if got := programs(); got != before+2 {
		t.Errorf("%d programs, want %d (the owner's and the admin's)", got, before+2)
	}
}
