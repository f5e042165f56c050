package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// countKey is one row of the counts; countFigures its figures.
type countKey struct {
	Program  int64     `db:"program_id"`
	At       time.Time `db:"at"`
	Partner  int64     `db:"partner_id"`
	Currency string    `db:"currency"`
}

type countFigures struct {
	Clicks      int64 `db:"clicks"`
	BotClicks   int64 `db:"bot_clicks"`
	Leads       int64 `db:"leads"`
	Provisional int64 `db:"provisional_leads"`
	Sales       int64 `db:"sales"`
	Customers   int64 `db:"customers"`
	Revenue     int64 `db:"revenue_cents"`
	Commission  int64 `db:"commission_cents"`
}

// recount counts the events' rows by the counting rules (pkg/counting), written out once more in SQL
// over the rows as they stand, per unit of time ('hour', 'day' or 'month'): a test event nowhere; a click
// as a click or a bot's; a lead by the class stored with it, for its click's partner (else its
// customer's); a sale with its revenue less refunds, its customer on their first sale, and its
// commission (unless rejected) less reversals and clawbacks.
const recount = `WITH ev AS (
	SELECT program_id, click_timestamp AS at, partner_id, '' AS currency, (NOT is_bot)::int AS clicks, is_bot::int AS bot_clicks,
		0 AS leads, 0 AS provisional_leads, 0 AS sales, 0 AS customers, 0::bigint AS revenue_cents, 0::bigint AS commission_cents
	FROM clicks WHERE NOT is_test
	UNION ALL
	SELECT l.program_id, l.lead_timestamp, COALESCE(k.partner_id, cu.partner_id, 0), '', 0, 0, (l.counts_as = 'lead')::int,
		(l.counts_as = 'provisional')::int, 0, 0, 0, 0
	FROM leads l LEFT JOIN clicks k ON k.id = l.click_ref LEFT JOIN customers cu ON cu.id = l.customer_id WHERE NOT l.is_test
	UNION ALL
	SELECT s.program_id, s.sale_date, COALESCE(s.partner_id, 0), s.currency, 0, 0, 0, 0, 1,
		(s.id = (SELECT min(f.id) FROM sales f WHERE f.customer_id = s.customer_id))::int, s.amount_cents - s.refunded_amount_cents,
		COALESCE((SELECT sum(c.amount_cents - c.reversed_amount_cents
			- COALESCE((SELECT sum(b.amount_cents) FROM commission_clawbacks b WHERE b.commission_id = c.id), 0))
			FROM commissions c WHERE c.sale_id = s.id AND c.status <> 'rejected'), 0)
	FROM sales s WHERE NOT s.is_test)
SELECT program_id, date_trunc($1, at, 'UTC') AS at, partner_id, currency, sum(clicks) AS clicks, sum(bot_clicks) AS bot_clicks,
	sum(leads) AS leads, sum(provisional_leads) AS provisional_leads, sum(sales) AS sales, sum(customers) AS customers,
	sum(revenue_cents) AS revenue_cents, sum(commission_cents) AS commission_cents
FROM ev GROUP BY 1, 2, 3, 4`

func countRows(t *testing.T, f *ledgerFixture, q string, args ...any) map[countKey]countFigures {
	t.Helper()
	var rows []struct {
		countKey
		countFigures
	}
	if err := f.env.DB.Select(&rows, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	out := map[countKey]countFigures{}
	for _, r := range rows {
		k := r.countKey
		k.At = k.At.UTC()
		v := out[k]
		v.Clicks += r.Clicks
		v.BotClicks += r.BotClicks
		v.Leads += r.Leads
		v.Provisional += r.Provisional
		v.Sales += r.Sales
		v.Customers += r.Customers
		v.Revenue += r.Revenue
		v.Commission += r.Commission
		out[k] = v
	}
	for k, v := range out {
		if v == (countFigures{}) {
			delete(out, k)
		}
	}
	return out
}

// The counts every reader reads (reports, readiness, the events list, partner stats) are what the rows
// say by the counting rules, whatever happened to the events after they were written: a bot's click, a
// test click, a provisional lead and one settled, repeat sales of a customer, a test sale, a sale of a
// banned partner, a partial refund, a rejection, a paid commission refunded (a clawback). Checked
// folded and unfolded, per hour (the events list's hours), day (reports), month (partner stats) and
// program.
func TestCountsAgreeWithRows(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"commission_approval": "manual"})
	bea, beaURL := f.partner("Bea", "bea@example.com")
	ctx := context.Background()

	click := func(url, ua string, extra map[string]any) string {
		body := map[string]any{"affiliate_url": url}
		for k, v := range extra {
			body[k] = v
		}
		res := f.env.Do(http.MethodPost, "/api/v1/track/click", body, "User-Agent", ua)
		if res.Status != http.StatusOK {
			t.Fatalf("click: %d %s", res.Status, res.Body)
		}
		if id, ok := res.JSON(t)["click_id"].(string); ok {
			return id
		}
		return ""
	}
	click(f.r.AffiliateURL, chromeUA, nil)
	click(f.r.AffiliateURL, "Twitterbot/1.0", nil)
	click(beaURL, "test-ua", map[string]any{"additional_data": map[string]any{"test_mode": true}})
	// A provisional lead (the browser's, the program requiring the server's), and one settled later.
	stays := click(f.r.AffiliateURL, "ua-stays", nil)
	if res := lead(f.env, map[string]any{"click_id": stays}); res.Status != http.StatusOK {
		t.Fatalf("provisional lead: %d %s", res.Status, res.Body)
	}
	settles := click(beaURL, "ua-settles", nil)
	if res := lead(f.env, map[string]any{"click_id": settles}); res.Status != http.StatusOK {
		t.Fatalf("provisional lead: %d %s", res.Status, res.Body)
	}
	a := f.sale("a", 10000, "USD", "")
	b := f.sale("b", 5000, "EUR", beaURL)
	if res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "a-2", "amount_cents": 2500, "currency": "USD", "customer_key": "cust-a"}); res.Status != http.StatusOK {
		t.Fatalf("repeat sale: %d %s", res.Status, res.Body)
	}
	if res := sale(f.env, f.r.APIKey, map[string]any{"amount_cents": 700, "customer_key": "cust-b", "additional_data": map[string]any{"test_mode": true}}); res.Status != http.StatusOK {
		t.Fatalf("test sale: %d %s", res.Status, res.Body)
	}

	// Two hours on: the provisional lead settles (counted in its own hour), a refund, a rejection.
	f.clock.Advance(2 * time.Hour)
	if res := lead(f.env, map[string]any{"click_id": settles, "customer_key": "cust-settled"}, apitest.Bearer(f.r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("settling lead: %d %s", res.Status, res.Body)
	}
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "a-2", "refund_amount_cents": 1000}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	f.data(f.do(http.MethodPost, commission(b["id"])+"/reject", map[string]any{"reason": "duplicate order"}), http.StatusOK)

	// Sale a's commission paid, then the sale refunded in full: its commission clawed back.
	f.data(f.do(http.MethodPost, commission(a["id"])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "USD"}), http.StatusCreated)
	if len(run) != 1 {
		t.Fatalf("payouts = %v", run)
	}
	f.data(f.do(http.MethodPost, payout(run[0]["id"])+"/paid", map[string]any{"external_reference": "PP-1"}), http.StatusOK)
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "a"}); res.Status != http.StatusOK {
		t.Fatalf("refund after payout: %d %s", res.Status, res.Body)
	}
	// Bea banned: her pending commission rejected; her next sale's commission rejected as written.
	f.sale("c", 3000, "EUR", beaURL)
	f.data(f.do(http.MethodPost, fmt.Sprintf("%s/partners/%d/ban", f.base, bea), map[string]any{"reason": "fraud"}), http.StatusOK)
	f.clock.Advance(time.Hour)
	if res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "c-2", "amount_cents": 1200, "currency": "EUR", "customer_key": "cust-c"}); res.Status != http.StatusOK {
		t.Fatalf("sale of a banned partner's customer: %d %s", res.Status, res.Body)
	}

	check := func(stage string) {
		t.Helper()
		for _, v := range []struct{ unit, view, at, partner, currency, cols string }{
			{"hour", "performance_hourly_live", "hour", "0", "''", "clicks, 0 AS bot_clicks, leads, provisional_leads, sales, 0 AS customers, 0 AS revenue_cents, 0 AS commission_cents"},
			{"day", "performance_live", "day::timestamp AT TIME ZONE 'UTC'", "partner_id", "currency", "clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents, commission_cents"},
			{"month", "performance_monthly_live", "month::timestamp AT TIME ZONE 'UTC'", "partner_id", "currency", "clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents, commission_cents"},
			{"day", "performance_program_live", "day::timestamp AT TIME ZONE 'UTC'", "0", "currency", "clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue_cents, commission_cents"},
		} {
			want := countRows(t, f, `SELECT program_id, at, `+v.partner+` AS partner_id, `+v.currency+` AS currency, `+v.cols+
				` FROM (`+recount+`) r`, v.unit)
			got := countRows(t, f, `SELECT program_id, `+v.at+` AS at, `+v.partner+` AS partner_id, `+v.currency+` AS currency, `+v.cols+
				` FROM `+v.view+` WHERE program_id = $1`, f.r.ProgramID)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: %s per %s (-recounted from the rows +counted):\n%s", stage, v.view, v.unit, diff)
			}
		}
	}
	check("as written")
	if len(countRows(t, f, `SELECT program_id, hour AS at, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales,
		customers, revenue_cents, commission_cents FROM performance_deltas`)) < 5 {
		t.Fatal("too few deltas: the events did not count")
	}
	if _, err := events.RollUp(ctx, f.env.DB.DB); err != nil {
		t.Fatal(err)
	}
	if n := f.env.Count(`SELECT count(*) FROM performance_deltas`); n != 0 {
		t.Errorf("%d deltas left after the roll-up", n)
	}
	check("folded")
}
