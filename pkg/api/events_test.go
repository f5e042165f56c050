package api_test

import (
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The events list: members with tracking:list, normalized events newest first, test events excluded,
// exact pagination.
func TestEventsList(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "e1")
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "ev_1", "amount_cents": 4900, "customer_key": "e1"}); res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	// Test events never appear.
	if res := env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"type": "chain"}, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("chain: %d", res.Status)
	}
	path := "/api/tracking/events/" + itoa(r.ProgramID)
	owner := apitest.Bearer(r.AccountToken)

	res := env.Do(http.MethodGet, path, nil, owner...)
	body := res.JSON(t)
	data := body["data"].([]any)
	pg := body["meta"].(map[string]any)["pagination"].(map[string]any)
	if res.Status != http.StatusOK || len(data) != 3 || pg["total"] != 3.0 || pg["page"] != 1.0 || pg["pageSize"] != 10.0 || pg["pageCount"] != 1.0 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	first := data[0].(map[string]any)
	if first["event_type"] != "conversion" || first["amount_cents"] != 4900.0 || first["processor_event_id"] != "ev_1" || first["currency"] != "USD" {
		t.Errorf("newest event = %v", first)
	}
	if last := data[2].(map[string]any); last["event_type"] != "click" || last["click_id"] == nil || last["converted"] != true {
		t.Errorf("oldest event = %v", last)
	}

	// Paging and filters.
	page2 := env.Do(http.MethodGet, path+"?pageSize=2&page=2", nil, owner...).JSON(t)
	if d := page2["data"].([]any); len(d) != 1 || d[0].(map[string]any)["event_type"] != "click" {
		t.Errorf("page 2 = %v", page2)
	}
	if p := page2["meta"].(map[string]any)["pagination"].(map[string]any); p["pageCount"] != 2.0 || p["total"] != 3.0 {
		t.Errorf("pagination = %v", p)
	}
	leads := env.Do(http.MethodGet, path+"?eventType=lead", nil, owner...).JSON(t)["data"].([]any)
	if len(leads) != 1 || leads[0].(map[string]any)["customer_key"] != "e1" {
		t.Errorf("leads = %v", leads)
	}
	if d := env.Do(http.MethodGet, path+"?dateTo=2000-01-01T00:00:00Z", nil, owner...).JSON(t); len(d["data"].([]any)) != 0 ||
		d["meta"].(map[string]any)["pagination"].(map[string]any)["pageCount"] != 0.0 {
		t.Errorf("nothing before 2000: %v", d)
	}
	if d := env.Do(http.MethodGet, path+"?page=9", nil, owner...).JSON(t)["data"].([]any); len(d) != 0 {
		t.Errorf("page past the end = %v", d)
	}

	// Roles: tracking:list belongs to owner, admin and analyst.
	for role, want := range map[string]int{"admin": 200, "analyst": 200, "billing": 403} {
		if res := env.Do(http.MethodGet, path, nil, apitest.Bearer(member(t, env, r.AdvertiserID, role))...); res.Status != want {
			t.Errorf("%s: %d, want %d", role, res.Status, want)
		}
	}
	// 400, 401, 403, 404
	if res := env.Do(http.MethodGet, path+"?pageSize=101", nil, owner...); res.Status != http.StatusBadRequest {
		t.Errorf("pageSize 101: %d", res.Status)
	}
	// A program API key is refused with a message saying which credential the route takes.
	e := platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
		"This route needs an account login token, not a program API key — run reftrack login and send its token")
	if e["code"] != "unauthorized" {
		t.Errorf("code = %v", e["code"])
	}
	stranger := env.Seed(seed.Options{})
	if res := env.Do(http.MethodGet, path, nil, apitest.Bearer(stranger.AccountToken)...); res.Status != http.StatusForbidden {
		t.Errorf("non-member: %d", res.Status)
	}
	platformError(t, env.Do(http.MethodGet, "/api/tracking/events/999999", nil, owner...), 404, "NotFoundError", "Program not found")
}
