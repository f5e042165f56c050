package api_test

import (
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// Every field the interface lists as present on an event type is in every event of that type, null
// when it has no value; fields of the other types are absent.
func TestEventsListFieldsPerType(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	// A click with nothing but the link: no page, referrer, session, geo or device data.
	clickID := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "").JSON(t)["click_id"].(string)
	if res := lead(env, map[string]any{"click_id": clickID, "customer_key": "f1"}, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "fp_1", "amount_cents": 100, "customer_key": "f1"}); res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}

	// interface.md, "Normalized tracking event": the fields present on each type.
	listed := map[string][]string{
		"click": {"id", "event_type", "timestamp", "click_id", "session_id", "page_url", "referrer_url", "geo_country",
			"geo_region", "geo_city", "device_type", "device_os", "browser_name", "converted", "createdAt"},
		"lead": {"id", "event_type", "timestamp", "click_id", "session_id", "page_url", "customer_key", "converted", "createdAt"},
		"conversion": {"id", "event_type", "timestamp", "click_id", "amount_cents", "currency", "sale_type", "payment_status",
			"processor_event_id", "is_recurring", "createdAt"},
	}
	for typ, fields := range listed {
		t.Run(typ, func(t *testing.T) {
			data := env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID)+"?eventType="+typ, nil, apitest.Bearer(r.AccountToken)...).JSON(t)["data"].([]any)
			if len(data) != 1 {
				t.Fatalf("%d %s events, want 1", len(data), typ)
			}
			ev := data[0].(map[string]any)
			got := slices.Sorted(maps.Keys(ev))
			want := slices.Sorted(slices.Values(fields))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("fields of a %s (-listed +answered):\n%s", typ, diff)
			}
			if ev["event_type"] != typ {
				t.Errorf("event_type = %v", ev["event_type"])
			}
		})
	}
	// Fields without a value are null, not left out.
	click := env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID)+"?eventType=click", nil, apitest.Bearer(r.AccountToken)...).JSON(t)["data"].([]any)[0].(map[string]any)
	for _, f := range []string{"session_id", "page_url", "referrer_url", "geo_country", "geo_region", "geo_city"} {
		if v, ok := click[f]; !ok || v != nil {
			t.Errorf("click %s = %v (present %v), want null", f, v, ok)
		}
	}
	if click["click_id"] != clickID || click["converted"] != true {
		t.Errorf("click = %v", click)
	}
	leadEv := env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID)+"?eventType=lead", nil, apitest.Bearer(r.AccountToken)...).JSON(t)["data"].([]any)[0].(map[string]any)
	if v, ok := leadEv["session_id"]; !ok || v != nil || leadEv["customer_key"] != "f1" || leadEv["click_id"] != clickID {
		t.Errorf("lead = %v, want session_id null, customer_key f1, click_id %s", leadEv, clickID)
	}
}
