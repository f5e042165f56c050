package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

func lead(env *apitest.Env, body any, headers ...string) *apitest.Response {
	return env.Do(http.MethodPost, "/api/v1/track/lead", body, headers...)
}

func customerStatus(t *testing.T, env *apitest.Env, programID int64, key string) string {
	t.Helper()
	var s string
	if err := env.DB.Get(&s, `SELECT status FROM customers WHERE program_id = $1 AND customer_key = $2`, programID, key); err != nil {
		t.Fatalf("customer %s: %v", key, err)
	}
	return s
}

// --- 200: server mode --------------------------------------------------------------------------------

func TestServerLeadSettles(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	clickID := click(t, env, r)["click_id"].(string)
	res := lead(env, map[string]any{"click_id": clickID, "customer_key": "user-1", "email": "ada@example.com"}, apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	leadID := body["lead_id"]
	want := map[string]any{"success": true, "message": "Lead tracked successfully", "lead_id": leadID, "customer_key": "user-1",
		"attribution": map[string]any{"status": "attributed", "click_id": clickID, "partner_id": float64(r.PartnerID), "program_id": float64(r.ProgramID)}}
	if diff := cmp.Diff(want, body); diff != "" || leadID == nil {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if s := customerStatus(t, env, r.ProgramID, "user-1"); s != "lead" {
		t.Errorf("customer status = %s", s)
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE id = $1 AND status = 'settled' AND source = 'server' AND email = 'ada@example.com'`, leadID); n != 1 {
		t.Error("settled lead not stored")
	}
	if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND converted`, clickID); n != 1 {
		t.Error("click not marked converted")
	}
	if n := env.Count(`SELECT sum(leads) FROM performance_hourly_live WHERE program_id = $1`, r.ProgramID); n != 1 {
		t.Errorf("leads counted = %d", n)
	}
	// A repeat is refused with the customer's status.
	platformError(t, lead(env, map[string]any{"click_id": clickID, "customer_key": "user-1"}, apitest.Bearer(r.APIKey)...),
		400, "BadRequestError", "Customer status cannot be updated to lead. Current status: lead")
	platformError(t, lead(env, map[string]any{"customer_key": "user-1"}, apitest.Bearer(r.APIKey)...),
		400, "BadRequestError", "Customer status cannot be updated to lead. Current status: lead")
	if n := env.Count(`SELECT count(*) FROM leads`); n != 1 {
		t.Errorf("%d leads, want 1", n)
	}
}

func TestFirstClickWins(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	second := env.Seed(seed.Options{}) // another partner's link, bound to its own program
	if _, err := env.DB.Exec(`UPDATE referral_links SET program_id = $1 WHERE id = $2`, r.ProgramID, second.LinkID); err != nil {
		t.Fatal(err)
	}
	first := click(t, env, r)["click_id"].(string)
	lead(env, map[string]any{"click_id": first, "customer_key": "c1"}, apitest.Bearer(r.APIKey)...)
	later := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": "https://shop.example.com/?aff=" + second.ShortLink},
		"User-Agent", iphoneUA).JSON(t)["click_id"].(string)
	// A sale naming the later click still pays the first partner.
	res := env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "t1", "amount_cents": 1000, "customer_key": "c1", "click_id": later},
		apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	if got := res.JSON(t)["attribution"].(map[string]any)["partner_id"]; got != float64(r.PartnerID) {
		t.Errorf("sale attributed to partner %v, want the first click's %d", got, r.PartnerID)
	}
}

// --- 200: browser mode --------------------------------------------------------------------------------

func TestProvisionalLeadAndSettlement(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{}) // server_required
	clickID := click(t, env, r)["click_id"].(string)
	provisional := map[string]any{"success": true, "provisional": true, "lead_id": nil, "customer_key": nil,
		"message":     "Lead recorded as provisional. This program requires server-side (Bearer) lead tracking to settle attribution.",
		"attribution": map[string]any{"status": "provisional", "click_id": clickID, "partner_id": float64(r.PartnerID), "program_id": float64(r.ProgramID)}}
	browser := map[string]any{"click_id": clickID, "customer_key": "user-9", "email": "b@example.com"}

	for _, headers := range [][]string{nil, {"Authorization", "Bearer"}, {"Authorization", "Bearer    "}, {"Authorization", "Basic abc"}} {
		res := lead(env, browser, headers...)
		if res.Status != http.StatusOK {
			t.Fatalf("%v: %d %s", headers, res.Status, res.Body)
		}
		if diff := cmp.Diff(provisional, res.JSON(t)); diff != "" {
			t.Errorf("%v: body (-want +got):\n%s", headers, diff)
		}
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE status = 'provisional' AND customer_id IS NULL`); n != 1 {
		t.Errorf("%d provisional leads, want 1 (repeats record nothing)", n)
	}
	if n := env.Count(`SELECT count(*) FROM customers`); n != 0 {
		t.Errorf("a browser lead bound a customer (%d customers)", n)
	}
	// A sale does not settle it.
	res := env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "t-prov", "amount_cents": 500, "click_id": clickID}, apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE status = 'provisional'`); n != 1 {
		t.Error("a sale settled the provisional lead")
	}

	// A server-mode lead for a fresh click settles that click's provisional lead.
	click2 := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", iphoneUA).JSON(t)["click_id"].(string)
	lead(env, map[string]any{"click_id": click2}, "User-Agent", "browser")
	res = lead(env, map[string]any{"click_id": click2, "customer_key": "user-10"}, apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK || res.JSON(t)["provisional"] != nil {
		t.Fatalf("server lead: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM leads l JOIN customers c ON c.id = l.customer_id
		WHERE l.click_id = $1 AND l.status = 'settled' AND c.customer_key = 'user-10'`, click2); n != 1 {
		t.Error("the provisional lead was not settled by the server-mode lead")
	}
	// After settlement a browser lead still answers provisional and records nothing.
	before := env.Count(`SELECT count(*) FROM leads`)
	res = lead(env, map[string]any{"click_id": click2, "customer_key": "user-10"})
	if res.Status != http.StatusOK || res.JSON(t)["provisional"] != true {
		t.Errorf("browser lead after settlement: %d %s", res.Status, res.Body)
	}
	if env.Count(`SELECT count(*) FROM leads`) != before || customerStatus(t, env, r.ProgramID, "user-10") != "lead" {
		t.Error("a browser lead after settlement changed state")
	}
}

func TestBrowserAllowedLead(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{LeadAuth: "browser_allowed"})
	clickID := click(t, env, r)["click_id"].(string)
	res := lead(env, map[string]any{"click_id": clickID, "customer_key": "b-1"})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	if body["provisional"] != nil || body["message"] != "Lead tracked successfully" || body["customer_key"] != "b-1" {
		t.Errorf("body = %v", body)
	}
	if s := customerStatus(t, env, r.ProgramID, "b-1"); s != "lead" {
		t.Errorf("status = %s", s)
	}
	platformError(t, lead(env, map[string]any{"click_id": clickID, "customer_key": "b-1"}), 400, "BadRequestError",
		"Customer status cannot be updated to lead. Current status: lead")
}

func TestTestModeLead(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	clickID := click(t, env, r)["click_id"].(string)
	res := lead(env, map[string]any{"click_id": clickID, "customer_key": "t-1", "additional_data": map[string]any{"test_mode": true, "program_id": r.ProgramID}},
		apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	data, _ := res.JSON(t)["data"].(map[string]any)
	if data["test_mode"] != true || data["programId"] != float64(r.ProgramID) || data["eventId"] == nil {
		t.Errorf("data = %v", data)
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE id = $1 AND is_test`, data["eventId"]); n != 1 {
		t.Error("test lead not marked is_test")
	}
}

// --- 400 ------------------------------------------------------------------------------------------------

func TestLead400(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	otherClick := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": other.AffiliateURL}, "User-Agent", chromeUA).JSON(t)["click_id"]
	key := apitest.Bearer(r.APIKey)
	// A customer of the other program.
	lead(env, map[string]any{"click_id": otherClick, "customer_key": "theirs"}, apitest.Bearer(other.APIKey)...)

	tests := []struct {
		name    string
		body    any
		headers []string
		msg     string
	}{
		{"neither id", `{}`, key, "click_id or customer_key is required"},
		{"empty ids", `{"click_id":"","customer_key":""}`, key, "click_id or customer_key is required"},
		{"null ids", `{"click_id":null,"customer_key":null}`, nil, "click_id or customer_key is required"},
		{"unknown customer_key", `{"customer_key":"nobody"}`, key, "Customer not found. Provide a valid click_id or customer_key."},
		{"unknown click", `{"click_id":"nope"}`, key, "Customer not found. Provide a valid click_id or customer_key."},
		{"browser, no click", `{"customer_key":"nobody"}`, nil, "Customer not found. Provide a valid click_id or customer_key."},
		{"another program's customer_key", `{"customer_key":"theirs"}`, key, "Customer not found. Provide a valid click_id or customer_key."},
		{"another program's click", map[string]any{"click_id": otherClick, "customer_key": "x"}, key, "Customer does not belong to this program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			platformError(t, lead(env, tt.body, tt.headers...), 400, "BadRequestError", tt.msg)
		})
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE program_id = $1`, r.ProgramID); n != 0 {
		t.Errorf("%d leads recorded by refused requests", n)
	}
}

// --- 401, 403 ---------------------------------------------------------------------------------------------

func TestLead401And403(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{Origins: []string{"https://www.shop.example.com"}})
	other := env.Seed(seed.Options{})
	clickID := click(t, env, r)["click_id"].(string)

	platformError(t, lead(env, map[string]any{"click_id": clickID}, apitest.Bearer("rt_wrong")...), 401, "UnauthorizedError", "Invalid API token")
	platformError(t, lead(env, map[string]any{"click_id": clickID, "additional_data": map[string]any{"test_mode": true, "program_id": other.ProgramID}},
		apitest.Bearer(r.APIKey)...), 403, "ForbiddenError", "program_id does not match the API key")
	platformError(t, lead(env, map[string]any{"click_id": clickID}, "Origin", "https://evil.example"), 403, "ForbiddenError",
		"Origin https://evil.example is not allowed for this program")
	if n := env.Count(`SELECT count(*) FROM leads`); n != 0 {
		t.Errorf("%d leads recorded by refused requests", n)
	}
	// The allowed origin passes, and the browser may read the answer.
	res := lead(env, map[string]any{"click_id": clickID}, "Origin", "https://www.shop.example.com")
	if res.Status != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "https://www.shop.example.com" {
		t.Errorf("allowed origin: %d %v", res.Status, res.Header)
	}
}

// --- 429 ------------------------------------------------------------------------------------------------

func TestLeadRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now}) // one window for the whole test
	for i := 1; i <= 30; i++ {
		if res := lead(env, `{}`); res.Status != http.StatusBadRequest || res.Header.Get("X-RateLimit-Limit") != "30" {
			t.Fatalf("request %d: %d %v", i, res.Status, res.Header)
		}
	}
	assertRateLimited(t, lead(env, `{}`), 30)
}

// Concurrent leads binding the same customer_key to one click make one customer and one lead: one is
// recorded, the others are refused with the status it left; leads with their own keys each get theirs.
func TestConcurrentLeads(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	clickID := click(t, env, r)["click_id"].(string)
	const racers, others = 8, 6 // 22 leads in all: under the route's limit of 30 a minute per address
	statuses := make(chan int, racers+others)
	var wg sync.WaitGroup
	for i := range racers + others {
		key := "racer"
		if i >= racers {
			key = fmt.Sprintf("own-%d", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := lead(env, map[string]any{"click_id": clickID, "customer_key": key}, apitest.Bearer(r.APIKey)...)
			if key != "racer" && res.Status != http.StatusOK {
				t.Errorf("lead %s: %d %s", key, res.Status, res.Body)
			}
			if key == "racer" {
				statuses <- res.Status
			}
		}()
	}
	wg.Wait()
	close(statuses)
	got := map[int]int{}
	for s := range statuses {
		got[s]++
	}
	if want := map[int]int{200: 1, 400: racers - 1}; !cmp.Equal(got, want) {
		t.Errorf("racers' statuses = %v, want %v", got, want)
	}
	if n := env.Count(`SELECT count(*) FROM customers WHERE program_id = $1 AND status = 'lead'`, r.ProgramID); n != 1+others {
		t.Errorf("%d customers at lead, want %d", n, 1+others)
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE program_id = $1 AND status = 'settled'`, r.ProgramID); n != 1+others {
		t.Errorf("%d settled leads, want %d", n, 1+others)
	}
	if n := env.Count(`SELECT count(*) FROM leads l JOIN customers c ON c.id = l.customer_id WHERE c.customer_key = 'racer'`); n != 1 {
		t.Errorf("%d leads for the racers' key, want 1", n)
	}
	if n := env.Count(`SELECT sum(leads) FROM performance_hourly_live WHERE program_id = $1`, r.ProgramID); n != 1+others {
		t.Errorf("leads counted = %d, want %d", n, 1+others)
	}

	// A visitor already stored (its row read by every racer, then changed by the first write) gets one
	// lead too: the others' writes find it changed, and deciding again refuses them.
	if _, err := env.DB.Exec(`INSERT INTO customers (program_id, customer_key, partner_id, status)
		VALUES ($1, 'visitor', $2, 'visitor')`, r.ProgramID, r.PartnerID); err != nil {
		t.Fatal(err)
	}
	results := make(chan int, racers)
	for range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- lead(env, map[string]any{"customer_key": "visitor"}, apitest.Bearer(r.APIKey)...).Status
		}()
	}
	wg.Wait()
	close(results)
	got = map[int]int{}
	for s := range results {
		got[s]++
	}
	if want := map[int]int{200: 1, 400: racers - 1}; !cmp.Equal(got, want) {
		t.Errorf("the visitor's racers' statuses = %v, want %v", got, want)
	}
	if n := env.Count(`SELECT count(*) FROM leads l JOIN customers c ON c.id = l.customer_id WHERE c.customer_key = 'visitor'`); n != 1 {
		t.Errorf("%d leads for the stored visitor, want 1", n)
	}
}
