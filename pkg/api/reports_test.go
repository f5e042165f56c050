package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The reports (docs/rules.md#reports), through the real server: every answer is checked against the spec by
// apitest. pkg/reports' test holds the figures to a naive count of every kind of change; this one follows
// events made through the API into both routes.

// performance is the program's performance with query q.
func (f *ledgerFixture) performance(q string) map[string]any {
	f.t.Helper()
	return f.data(f.do(http.MethodGet, f.base+"/performance?"+q, nil), http.StatusOK)
}

// performers are the partners' performance with query q: each partner's name and the named totals.
func (f *ledgerFixture) performers(q string, fields ...string) []map[string]any {
	f.t.Helper()
	var out []map[string]any
	for _, p := range f.data(f.do(http.MethodGet, f.base+"/performance/partners?"+q, nil), http.StatusOK)["partners"].([]any) {
		row := map[string]any{"name": p.(map[string]any)["name"]}
		for _, k := range fields {
			row[k] = p.(map[string]any)[k]
		}
		out = append(out, row)
	}
	return out
}

func TestPerformance(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	_, bURL := f.partner("Bea", "bea@example.com")
	var seeded string
	if err := f.env.DB.Get(&seeded, `SELECT name FROM partners WHERE id = $1`, f.r.PartnerID); err != nil {
		t.Fatal(err)
	}
	// The seeded partner: a click, a lead and a 50.00 USD sale, 10.00 of it refunded; Bea: two of each,
	// one sale 30.00 USD and one 20.00 EUR. A crawler's click counts nowhere.
	c1 := f.sale("p1", 5000, "USD", "")
	c2 := f.sale("p2", 3000, "USD", bURL)
	c3 := f.sale("p3", 2000, "EUR", bURL)
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "p1", "refund_amount_cents": 1000}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	if res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": bURL}, "User-Agent", "Googlebot/2.1 (+http://www.google.com/bot.html)"); res.Status != http.StatusOK {
		t.Fatalf("bot click: %d %s", res.Status, res.Body)
	}
	// A visitor of Bea's leaves a provisional lead (the browser's; the program requires the server's): the
	// click counts, the lead nowhere until it settles.
	visit := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": bURL}, "User-Agent", chromeUA)
	if visit.Status != http.StatusOK {
		t.Fatalf("click: %d %s", visit.Status, visit.Body)
	}
	if res := lead(f.env, map[string]any{"click_id": visit.JSON(t)["click_id"]}); res.Status != http.StatusOK || res.JSON(t)["provisional"] != true {
		t.Fatalf("provisional lead: %d %s", res.Status, res.Body)
	}
	// What the commissions now earn, as the ledger shows them (the refund reversed part of the first).
	earned := map[string]float64{}
	for _, c := range f.list(f.do(http.MethodGet, f.base+"/commissions", nil), http.StatusOK) {
		earned[c["currency"].(string)] += c["amount_cents"].(float64) - c["reversed_amount_cents"].(float64)
	}
	if earned["USD"] >= c1["amount_cents"].(float64)+c2["amount_cents"].(float64) || earned["EUR"] != c3["amount_cents"].(float64) {
		t.Fatalf("commissions earned %v: the refund reversed nothing?", earned)
	}

	today := f.clock.Now().UTC().Format(time.DateOnly)
	p := f.performance("")
	// Conversion is per customer (3 of 4 clicks), the lead rate settled leads per click.
	want := map[string]any{"clicks": 4.0, "bot_clicks": 1.0, "leads": 3.0, "sales": 3.0, "customers": 3.0, "revenue_cents": 7000.0,
		"commission_cents": earned["USD"], "partners": 2.0, "conversion_rate": 0.75, "lead_rate": 0.75, "average_order_cents": 3500.0}
	zero := map[string]any{"clicks": 0.0, "bot_clicks": 0.0, "leads": 0.0, "sales": 0.0, "customers": 0.0, "revenue_cents": 0.0, "commission_cents": 0.0,
		"partners": 0.0, "conversion_rate": 0.0, "lead_rate": 0.0, "average_order_cents": 0.0}
	if d := cmp.Diff(want, p["totals"]); d != "" {
		t.Errorf("30 days' totals (-want +got):\n%s", d)
	}
	if d := cmp.Diff(zero, p["previous"]); d != "" {
		t.Errorf("the 30 days before (-want +got):\n%s", d)
	}
	series := p["series"].([]any)
	if p["period"] != "30d" || p["currency"] != "USD" || p["date_to"] != today || len(series) != 30 || series[0].(map[string]any)["date"] != p["date_from"] {
		t.Fatalf("period %v %v…%v, %d days", p["period"], p["date_from"], p["date_to"], len(series))
	}
	if d := cmp.Diff(map[string]any{"date": today, "clicks": 4.0, "leads": 3.0, "sales": 3.0, "revenue_cents": 7000.0, "commission_cents": earned["USD"]},
		series[29]); d != "" {
		t.Errorf("today (-want +got):\n%s", d)
	}
	if series[28].(map[string]any)["clicks"] != 0.0 {
		t.Errorf("yesterday: %v", series[28])
	}
	eur := f.performance("currency=EUR&period=7d")["totals"].(map[string]any)
	if eur["sales"] != 3.0 || eur["revenue_cents"] != 2000.0 || eur["commission_cents"] != earned["EUR"] || eur["average_order_cents"] != 2000.0 {
		t.Errorf("EUR: %v", eur)
	}
	if all := f.performance("period=all"); all["previous"] != nil || all["date_from"] != today || len(all["series"].([]any)) != 1 {
		t.Errorf("all: from %v, previous %v, %d days", all["date_from"], all["previous"], len(all["series"].([]any)))
	}

	// Per partner: by revenue (the default), by clicks, in euros, the first one only.
	if d := cmp.Diff([]map[string]any{{"name": seeded, "revenue_cents": 4000.0, "clicks": 1.0}, {"name": "Bea", "revenue_cents": 3000.0, "clicks": 3.0}},
		f.performers("", "revenue_cents", "clicks")); d != "" {
		t.Errorf("by revenue (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]map[string]any{{"name": "Bea", "clicks": 3.0, "conversion_rate": 0.6667, "lead_rate": 0.6667},
		{"name": seeded, "clicks": 1.0, "conversion_rate": 1.0, "lead_rate": 1.0}},
		f.performers("sort=clicks", "clicks", "conversion_rate", "lead_rate")); d != "" {
		t.Errorf("by clicks (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]map[string]any{{"name": seeded, "revenue_cents": 0.0}, {"name": "Bea", "revenue_cents": 2000.0}},
		f.performers("currency=EUR&order=asc", "revenue_cents")); d != "" {
		t.Errorf("in euros, ascending (-want +got):\n%s", d)
	}
	if got := f.performers("sort=leads&limit=1"); len(got) != 1 || got[0]["name"] != "Bea" {
		t.Errorf("the first by leads: %v", got)
	}

	// Eight days on, the week is empty and the week before holds it all.
	f.clock.Advance(8 * 24 * time.Hour)
	week := f.performance("period=7d")
	if d := cmp.Diff(zero, week["totals"]); d != "" {
		t.Errorf("this week (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, week["previous"]); d != "" {
		t.Errorf("last week (-want +got):\n%s", d)
	}
	if got := f.performers("period=7d"); len(got) != 0 {
		t.Errorf("partners this week: %v", got)
	}
	if all := f.performance("period=all"); all["date_from"] != today || len(all["series"].([]any)) != 9 {
		t.Errorf("all: from %v, %d days", all["date_from"], len(all["series"].([]any)))
	}
}

// Who may read the reports (tracking:list: owner, admin, analyst), and what bad parameters answer.
func TestPerformanceRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	base := "/api/v1/programs/" + itoa(r.ProgramID)
	for _, path := range []string{base + "/performance", base + "/performance/partners"} {
		for role, want := range map[string]int{"admin": 200, "analyst": 200, "billing": 403} {
			if res := env.Do(http.MethodGet, path, nil, apitest.Bearer(member(t, env, r.AdvertiserID, role))...); res.Status != want {
				t.Errorf("%s as %s: %d, want %d", path, role, res.Status, want)
			}
		}
		platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(r.APIKey)...), 401, "UnauthorizedError",
			"This route needs an account login token, not a program API key — run reftrack login and send its token")
		stranger := env.Seed(seed.Options{})
		if res := env.Do(http.MethodGet, path, nil, apitest.Bearer(stranger.AccountToken)...); res.Status != http.StatusForbidden {
			t.Errorf("%s by a stranger: %d", path, res.Status)
		}
		for _, q := range []string{"period=1y", "period=", "currency=GBPX", "currency=usd"} {
			if res := env.Do(http.MethodGet, path+"?"+q, nil, apitest.Bearer(r.AccountToken)...); res.Status != http.StatusBadRequest {
				t.Errorf("%s?%s: %d %s", path, q, res.Status, res.Body)
			}
		}
	}
	owner := apitest.Bearer(r.AccountToken)
	for _, q := range []string{"sort=name", "order=up", "limit=0", "limit=101", "limit=" + url.QueryEscape("1 ")} {
		if res := env.Do(http.MethodGet, base+"/performance/partners?"+q, nil, owner...); res.Status != http.StatusBadRequest {
			t.Errorf("partners?%s: %d %s", q, res.Status, res.Body)
		}
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/programs/999999/performance", nil, owner...), 404, "NotFoundError", "Program not found")
}
