package reports_test

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/reports"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Each test's database is emptied and handed to the next test of this binary (dbtest.Recycle).
func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }

// now is the reports' clock: a fixed afternoon, so that the periods' edges fall where the events put
// them and events after now, today, are counted while tomorrow's are not.
var now = time.Date(2026, 3, 18, 15, 30, 0, 0, time.UTC)

// zone is the sessions' time zone: fourteen hours ahead of UTC, so a day taken in the session's zone
// rather than UTC's shows as events on the wrong day.
const zone = "Pacific/Kiritimati"

var (
	periods    = []reports.Period{reports.Week, reports.Month, reports.Quarter, reports.All}
	currencies = []string{"USD", "EUR"}
	sorts      = []reports.Sort{"clicks", "leads", "sales", "customers", "revenue_cents", "commission_cents", "conversion_rate", "lead_rate",
		"average_order_cents"}
)

// world is the program under test: its partners (the seeded one, Bea and Cy, who have most events; Dee
// and Eve, whose few events are the same, so that they tie on every sort; Idle, who has none), their links
// and partner-program relationships.
type world struct {
	db       *sqlx.DB
	program  int64
	partners []int64 // the seeded partner, Bea, Cy, Dee, Eve
	links    []int64
	enrolled []int64 // their partner_programs ids
}

// The reports equal, to the cent and the day, the same figures counted the obvious way from the events
// (clicks, leads, sales, commissions, clawbacks) following the performance tables' definitions (the schema), whether the
// counts are still deltas or folded: as written, then after every kind of change an event goes through
// (bots found out, clicks deleted, leads moved, settled, turned test and deleted, refunds, reversals, a
// rejection, payouts with their clawbacks, a sale deleted), then after a sale moves to another day.
func TestReportsMatchANaiveCount(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	// Every statement runs in a session fourteen hours ahead of UTC: the days are UTC's all the same.
	db, err := sqlx.Open("postgres", d.URL+"&timezone="+zone)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var tz string
	if err := db.Get(&tz, `SHOW timezone`); err != nil || tz != zone {
		t.Fatalf("session time zone %q, %v", tz, err)
	}

	w := newWorld(t, db, "")
	other := newWorld(t, db, "other-") // a second program whose events must count in neither report
	// The months the events fall in: November (the first day) to March (now, and tomorrow).
	dbtest.ClickMonths(t, db, "2025-11-01", 5)

	today := now.Truncate(24 * time.Hour)
	week := today.AddDate(0, 0, -6)
	w.writeEvents(t, 600, 160)
	other.writeEvents(t, 30, 10)
	// The periods' edges: tomorrow's first instant (counted nowhere), today after now, each period's first
	// instant and the instant before it, the first day (Cy's), a test click, a bot's, a test bot's; Cy's
	// one click of the week (a bot's, it turns out); Dee's and Eve's clicks, the same.
	w.clicks(t, []click{
		{1, today.AddDate(0, 0, 1), false, false},
		{1, today.Add(24*time.Hour - time.Second), false, false},
		{2, week, false, false},
		{3, week.Add(-time.Second), false, false},
		{1, today.AddDate(0, 0, -29), false, false},
		{2, today.AddDate(0, 0, -29).Add(-time.Second), false, false},
		{2, today.AddDate(0, 0, -89), false, false},
		{1, today.AddDate(0, 0, -89).Add(-time.Second), false, false},
		{3, today.AddDate(0, 0, -115).Add(12 * time.Hour), false, false},
		{2, today.AddDate(0, 0, -60), true, false},
		{1, today.AddDate(0, 0, -3), false, true},
		{1, today.AddDate(0, 0, -2), true, true},
		{3, today.AddDate(0, 0, -1), false, false},
		{4, now.AddDate(0, 0, -2), false, false}, {5, now.AddDate(0, 0, -2), false, false},
		{4, now.AddDate(0, 0, -2), false, false}, {5, now.AddDate(0, 0, -2), false, false},
		{4, now.AddDate(0, 0, -40), false, false}, {5, now.AddDate(0, 0, -40), false, false},
	})
	// A lead with a customer and no click counts for the customer's partner; with neither, or with a
	// customer of no partner, for none (partner 0: in the totals, in no partner's row); a test lead nowhere.
	// Dee and Eve each have a customer with a lead and a 10.00 sale, on the same day.
	exec(t, db, `INSERT INTO customers (program_id, customer_key, partner_id, partner_program_id, status)
		SELECT $1, v.key, ($2::bigint[])[v.i], ($3::bigint[])[v.i], 'lead'
		FROM unnest($4::text[], $5::int[]) AS v(key, i)`, w.program, pq.Array(w.partners), pq.Array(w.enrolled),
		pq.Array([]string{"walk-in", "nobody", "settle-me", "dee", "eve"}), pq.Array([]any{3, nil, 2, 4, 5}))
	exec(t, db, `INSERT INTO leads (program_id, customer_id, customer_key, status, source, settled_at, lead_timestamp, is_test)
		SELECT $1, cu.id, v.key, CASE WHEN cu.id IS NULL THEN 'provisional' ELSE 'settled' END, 'server',
			CASE WHEN cu.id IS NOT NULL THEN v.ts END, v.ts, v.test
		FROM unnest($2::text[], $3::timestamptz[], $4::bool[]) AS v(key, ts, test)
		LEFT JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = v.key`,
		w.program, pq.Array([]string{"walk-in", "", "nobody", "", "dee", "eve"}),
		pq.Array(stamps(now.AddDate(0, 0, -20), now.AddDate(0, 0, -2), now.AddDate(0, 0, -3), now.AddDate(0, 0, -1), now.AddDate(0, 0, -2), now.AddDate(0, 0, -2))),
		pq.Array([]bool{false, false, false, true, false, false}))
	// Sales just inside and outside the periods: tomorrow's (nowhere), the week's first instant, the
	// instant before it; Dee's and Eve's. Each has its commission.
	exec(t, db, `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
		SELECT $1, cu.id, cu.partner_id, 'edge-' || v.n, v.amount, v.currency, 'api', v.ts
		FROM unnest($2::text[], $3::bigint[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS v(key, amount, currency, ts, n)
		JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = v.key`,
		w.program, pq.Array([]string{"cust-3", "cust-4", "cust-5", "dee", "eve"}), pq.Array([]int64{1001, 2501, 3333, 1000, 1000}),
		pq.Array([]string{"USD", "EUR", "EUR", "USD", "USD"}),
		pq.Array(stamps(today.AddDate(0, 0, 1), week, week.Add(-time.Second), now.AddDate(0, 0, -2), now.AddDate(0, 0, -2))))
	exec(t, db, `INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, available_on)
		SELECT s.id, s.program_id, s.partner_id, cu.partner_program_id, s.amount_cents / 5, s.currency, s.sale_date + interval '30 days'
		FROM sales s JOIN customers cu ON cu.id = s.customer_id WHERE s.program_id = $1 AND s.processor_event_id LIKE 'edge-%'`, w.program)

	recount(t, db)
	w.check(t, "written")
	rollUp(t, db)
	w.check(t, "written, folded")

	// The changes, each its own statement (several rows at once where it can).
	// Three of the week's clicks turn out a bot's, and so does Cy's (Cy is left with nothing in the week);
	// one bot's click turns out a person's; marking clicks converted changes nothing counted.
	exec(t, db, `UPDATE clicks SET is_bot = true WHERE id IN (SELECT id FROM clicks
		WHERE program_id = $1 AND NOT is_bot AND NOT is_test AND click_timestamp >= $2 ORDER BY id LIMIT 3)`, w.program, week)
	exec(t, db, `UPDATE clicks SET is_bot = true WHERE program_id = $1 AND partner_id = $2 AND click_timestamp >= $3`, w.program, w.partners[2], week)
	exec(t, db, `UPDATE clicks SET is_bot = false WHERE id = (SELECT min(id) FROM clicks WHERE program_id = $1 AND is_bot AND NOT is_test)`, w.program)
	exec(t, db, `UPDATE clicks SET converted = true WHERE program_id = $1 AND id % 7 = 0`, w.program)
	// A counted click no lead points at, and a bot's, deleted in one statement.
	exec(t, db, `DELETE FROM clicks WHERE id IN (
		(SELECT c.id FROM clicks c WHERE c.program_id = $1 AND NOT c.is_bot AND NOT c.is_test AND c.click_timestamp >= $2
			AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.click_ref = c.id) ORDER BY c.id LIMIT 1),
		(SELECT c.id FROM clicks c WHERE c.program_id = $1 AND c.is_bot
			AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.click_ref = c.id) ORDER BY c.id LIMIT 1))`, w.program, now.AddDate(0, 0, -30))
	// A lead of the week moves twenty days back, the lead of no partner fifty; a provisional lead settles
	// for a customer of another partner (its click still decides); another turns out a test.
	exec(t, db, `UPDATE leads SET lead_timestamp = lead_timestamp - interval '20 days'
		WHERE id = (SELECT min(id) FROM leads WHERE program_id = $1 AND NOT is_test AND lead_timestamp >= $2)`, w.program, week)
	exec(t, db, `UPDATE leads SET lead_timestamp = lead_timestamp - interval '50 days'
		WHERE program_id = $1 AND click_ref IS NULL AND customer_id IS NULL AND NOT is_test`, w.program)
	exec(t, db, `UPDATE leads SET status = 'settled', settled_at = $2,
			customer_id = (SELECT id FROM customers WHERE program_id = $1 AND customer_key = 'settle-me')
		WHERE id = (SELECT l.id FROM leads l JOIN clicks c ON c.id = l.click_ref
			WHERE l.program_id = $1 AND l.status = 'provisional' AND NOT l.is_test AND c.partner_id = $3 ORDER BY l.id DESC LIMIT 1)`,
		w.program, now, w.partners[0])
	exec(t, db, `UPDATE leads SET is_test = true WHERE id = (SELECT max(id) FROM leads
		WHERE program_id = $1 AND NOT is_test AND status = 'settled' AND customer_key LIKE 'cust-%')`, w.program)
	// Refunds: a quarter of one sale, all of another (its commission reversed as much), 1.00 of three at
	// once; each sale's commission reversed in step.
	pending := `SELECT s.id FROM sales s JOIN commissions c ON c.sale_id = s.id WHERE s.program_id = $1 AND NOT s.is_test
		AND s.refunded_amount_cents = 0 AND c.status = 'pending' AND s.currency = $2 AND s.processor_event_id LIKE 'txn-%'
		ORDER BY s.sale_date DESC, s.id LIMIT $3`
	quarter, all := pick(t, db, pending, w.program, "USD", 1), pick(t, db, pending, w.program, "EUR", 1)
	exec(t, db, `UPDATE sales SET refunded_amount_cents = amount_cents / 4 WHERE id = $1`, quarter[0])
	exec(t, db, `UPDATE commissions SET reversed_amount_cents = amount_cents / 4, status = 'pending' WHERE sale_id = $1`, quarter[0])
	exec(t, db, `UPDATE sales SET refunded_amount_cents = amount_cents WHERE id = $1`, all[0])
	exec(t, db, `UPDATE commissions SET reversed_amount_cents = amount_cents, status = 'reversed' WHERE sale_id = $1`, all[0])
	three := pick(t, db, pending, w.program, "USD", 3)
	exec(t, db, `UPDATE sales SET refunded_amount_cents = 100 WHERE id = ANY ($1)`, pq.Array(three))
	exec(t, db, `UPDATE commissions SET reversed_amount_cents = 20, status = 'pending' WHERE sale_id = ANY ($1)`, pq.Array(three))
	// Two leads deleted (one a test), and a sale with its commission.
	exec(t, db, `DELETE FROM leads WHERE id IN (
		(SELECT min(id) FROM leads WHERE program_id = $1 AND NOT is_test AND customer_key LIKE 'cust-%'),
		(SELECT min(id) FROM leads WHERE program_id = $1 AND is_test))`, w.program)
	gone := pick(t, db, pending, w.program, "USD", 1)[0]
	exec(t, db, `DELETE FROM commissions WHERE sale_id = $1`, gone)
	exec(t, db, `DELETE FROM sales WHERE id = $1`, gone)
	// A commission rejected.
	exec(t, db, `UPDATE commissions SET status = 'rejected', rejected_reason = 'self-referral', rejected_at = $2
		WHERE sale_id = $1`, pick(t, db, pending, w.program, "USD", 1)[0], now)
	// Commissions paid (USD), in a payout (EUR), and a test one paid, each then refunded by half: the
	// clawbacks take the half back (the test one's counts nowhere).
	var clawed []int64
	clawed = append(clawed, w.payOut(t, pick(t, db, pending, w.program, "USD", 1)[0], "paid"))
	clawed = append(clawed, w.payOut(t, pick(t, db, pending, w.program, "EUR", 1)[0], "processing"))
	clawed = append(clawed, w.payOut(t, pickOne(t, db, `SELECT s.id FROM sales s JOIN commissions c ON c.sale_id = s.id
		WHERE s.program_id = $1 AND s.is_test AND c.status = 'pending' ORDER BY s.id LIMIT 1`, w.program), "paid"))
	exec(t, db, `INSERT INTO commission_clawbacks (commission_id, refund_id, program_id, partner_id, currency, amount_cents, is_test, payout_id)
		SELECT c.id, r.id, c.program_id, c.partner_id, c.currency, c.amount_cents / 2, c.is_test, NULL
		FROM unnest($1::bigint[]) AS x(refund) JOIN refunds r ON r.id = x.refund JOIN commissions c ON c.sale_id = r.sale_id`,
		pq.Array(clawed))

	recount(t, db)
	w.check(t, "changed")
	rollUp(t, db)
	w.check(t, "changed, folded")

	// A sale of the week (its commission pending) moves forty days back: its commission is counted on its
	// sale's day, so it moves with it.
	moved := pick(t, db, pending, w.program, "USD", 1)[0]
	exec(t, db, `UPDATE sales SET sale_date = sale_date - interval '40 days' WHERE id = $1`, moved)
	recount(t, db)
	w.check(t, "sale moved")
	rollUp(t, db)
	w.check(t, "sale moved, folded")
}

// newWorld seeds a program and adds Bea, Cy, Dee, Eve and Idle (who never has an event) with their
// links; prefix tells two worlds' partners apart.
func newWorld(t *testing.T, db *sqlx.DB, prefix string) *world {
	t.Helper()
	ctx := context.Background()
	r, err := seed.Run(ctx, db, seed.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	seeded, err := programs.PartnerOf(ctx, db, r.ProgramID, r.PartnerID)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{db: db, program: r.ProgramID, partners: []int64{r.PartnerID}, links: []int64{r.LinkID}, enrolled: []int64{seeded.PartnerProgramID}}
	for _, name := range []string{"Bea", "Cy", "Dee", "Eve", "Idle"} {
		p, err := programs.AddPartner(ctx, db, r.ProgramID, programs.NewPartner{Name: name, Email: prefix + name + "@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		link, _, err := programs.InsertLink(ctx, db, r.ProgramID, p.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if name == "Idle" {
			continue
		}
		w.partners, w.links, w.enrolled = append(w.partners, p.ID), append(w.links, link), append(w.enrolled, p.PartnerProgramID)
	}
	return w
}

// writeEvents writes the program's bulk of events in a few statements, over the 104 days before now
// (Cy's 8 days earlier still, so that Cy has nothing in the week): clicks (half the seeded partner's, a
// third Bea's; some tests, some bots'), a provisional lead on a quarter of them, 90 customers and a
// settled lead for 60 of them (some with a click of another partner, which decides), sales (USD and a
// quarter EUR, some tests) of those customers and a commission on most (some rejected at once).
func (w *world) writeEvents(t *testing.T, clicks, sales int) {
	t.Helper()
	partners, links, enrolled := pq.Array(w.partners), pq.Array(w.links), pq.Array(w.enrolled)
	const cy = `CASE WHEN %s = ($2::bigint[])[3] THEN interval '8 days' ELSE interval '0' END`
	for _, span := range [][2]int{{1, clicks / 2}, {clicks/2 + 1, clicks}} {
		exec(t, w.db, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, is_test, is_bot)
			SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, to_char(m.month, 'YYMM') || lpad('r' || $1::bigint || '_' || g, 22, '0'),
				$1, ($3::bigint[])[p.i], ($2::bigint[])[p.i], ts.ts, 'https://shop.example.com/?aff=x', g % 29 = 0, g % 31 = 0
			FROM generate_series($5::int, $6::int) g
			CROSS JOIN LATERAL (SELECT (ARRAY[1, 1, 1, 2, 2, 3])[g % 6 + 1] AS i) p
			CROSS JOIN LATERAL (SELECT $4::timestamptz - ((g::bigint * 7919) % (104 * 86400)) * interval '1 second'
				- `+fmt.Sprintf(cy, "($2::bigint[])[p.i]")+` AS ts) ts
			CROSS JOIN LATERAL (SELECT date_trunc('month', ts.ts AT TIME ZONE 'UTC')::date AS month) m`,
			w.program, partners, links, now, span[0], span[1])
	}
	exec(t, w.db, `INSERT INTO leads (program_id, click_ref, click_id, status, source, lead_timestamp, is_test)
		SELECT c.program_id, c.id, c.click_id, 'provisional', 'browser', c.click_timestamp + (c.id % 5) * interval '1 hour', c.id % 23 = 0
		FROM clicks c WHERE c.program_id = $1 AND c.id % 4 = 0`, w.program)
	exec(t, w.db, `INSERT INTO customers (program_id, customer_key, partner_id, partner_program_id, status)
		SELECT $1, 'cust-' || g, ($2::bigint[])[g % 3 + 1], ($3::bigint[])[g % 3 + 1], 'converted' FROM generate_series(1, 90) g`,
		w.program, partners, enrolled)
	exec(t, w.db, `INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, status, source, settled_at, lead_timestamp, is_test)
		SELECT $1, cu.id, k.id, k.click_id, cu.customer_key, 'settled', 'server', ts.ts, ts.ts, g % 19 = 0
		FROM generate_series(1, 60) g
		JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = 'cust-' || g
		CROSS JOIN LATERAL (SELECT $3::timestamptz - ((g::bigint * 6007) % (100 * 86400)) * interval '1 second'
			- `+fmt.Sprintf(cy, "cu.partner_id")+` AS ts) ts
		LEFT JOIN LATERAL (SELECT c.id, c.click_id FROM clicks c WHERE g % 5 = 0 AND c.program_id = $1
			AND c.partner_id <> cu.partner_id AND c.partner_id <> ($2::bigint[])[3] AND cu.partner_id <> ($2::bigint[])[3]
			ORDER BY c.id OFFSET g LIMIT 1) k ON true`,
		w.program, partners, now)
	for _, span := range [][2]int{{1, sales / 2}, {sales/2 + 1, sales}} {
		exec(t, w.db, `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date, is_test)
			SELECT $1, cu.id, cu.partner_id, 'txn-' || g, 1000 + (g * 37) % 9000, CASE WHEN g % 4 = 1 THEN 'EUR' ELSE 'USD' END, 'api',
				$3::timestamptz - ((g::bigint * 4001) % (98 * 86400)) * interval '1 second' - `+fmt.Sprintf(cy, "cu.partner_id")+`, g % 13 = 0
			FROM generate_series($4::int, $5::int) g JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = 'cust-' || (g % 90 + 1)`,
			w.program, partners, now, span[0], span[1])
	}
	exec(t, w.db, `INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test,
			available_on, status, rejected_reason, rejected_at)
		SELECT s.id, s.program_id, s.partner_id, cu.partner_program_id, s.amount_cents / 5, s.currency, s.is_test, s.sale_date + interval '30 days',
			CASE WHEN s.id % 17 = 0 THEN 'rejected' ELSE 'pending' END, CASE WHEN s.id % 17 = 0 THEN 'partner banned' END,
			CASE WHEN s.id % 17 = 0 THEN s.sale_date END
		FROM sales s JOIN customers cu ON cu.id = s.customer_id WHERE s.program_id = $1 AND s.id % 10 <> 0`, w.program)
}

// click is one click written by world.clicks: its partner (1 to 5, in world.partners), time, and whether
// it is a test or a bot's.
type click struct {
	partner   int
	at        time.Time
	test, bot bool
}

func (w *world) clicks(t *testing.T, list []click) {
	t.Helper()
	var partner []int64
	var at []time.Time
	var test, bot []bool
	for _, c := range list {
		partner, at, test, bot = append(partner, int64(c.partner)), append(at, c.at), append(test, c.test), append(bot, c.bot)
	}
	exec(t, w.db, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, is_test, is_bot)
		SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, to_char(m.month, 'YYMM') || lpad('e' || $1::bigint || '_' || v.n, 22, '0'),
			$1, ($3::bigint[])[v.i], ($2::bigint[])[v.i], v.ts, 'https://shop.example.com/?aff=x', v.test, v.bot
		FROM unnest($4::int[], $5::timestamptz[], $6::bool[], $7::bool[]) WITH ORDINALITY AS v(i, ts, test, bot, n)
		CROSS JOIN LATERAL (SELECT date_trunc('month', v.ts AT TIME ZONE 'UTC')::date AS month) m`,
		w.program, pq.Array(w.partners), pq.Array(w.links), pq.Array(partner), pq.Array(stamps(at...)), pq.Array(test), pq.Array(bot))
}

// payOut puts the commission of sale into a payout of its own (status paid or processing) and refunds
// half the sale; it returns the refund, for its clawback.
func (w *world) payOut(t *testing.T, sale int64, status string) int64 {
	t.Helper()
	commissionStatus := map[string]string{"paid": "paid", "processing": "in_payout"}[status]
	payout := pickOne(t, w.db, `INSERT INTO payouts (program_id, partner_id, currency, gross_cents, amount_cents, commission_count, status,
			external_reference, created_at, paid_at)
		SELECT c.program_id, c.partner_id, c.currency, c.amount_cents, c.amount_cents, 1, $2,
			CASE WHEN $2 = 'paid' THEN 'po-' || c.id END, $3::timestamptz, CASE WHEN $2 = 'paid' THEN $3::timestamptz END
		FROM commissions c WHERE c.sale_id = $1 RETURNING id`, sale, status, now)
	exec(t, w.db, `UPDATE commissions SET status = $2, payout_id = $3, approved_at = $4,
		paid_at = CASE WHEN $2 = 'paid' THEN $4::timestamptz END WHERE sale_id = $1`, sale, commissionStatus, payout, now)
	refund := pickOne(t, w.db, `INSERT INTO refunds (sale_id, program_id, reason, amount_cents, source)
		SELECT id, program_id, 'refund', amount_cents / 2, 'api' FROM sales WHERE id = $1 RETURNING id`, sale)
	exec(t, w.db, `UPDATE sales SET refunded_amount_cents = amount_cents / 2 WHERE id = $1`, sale)
	return refund
}

// fact is one event's part in the counts, on its UTC day.
type fact struct {
	Day                                                  time.Time
	Partner                                              int64
	Currency                                             string
	Clicks, BotClicks, Leads, Sales, Revenue, Commission int64
	Customers                                            int64 // the customer's first sale
}

// naive counts the program's events one by one from their tables, as the schema defines the figures:
// real clicks (neither tests nor bots') by their partner, and the bots' (not tests) apart; real settled leads (a
// provisional lead counts nowhere) by
// the partner of their click, else of their customer, else none (0); real sales by partner and currency,
// with what they took less their refunds; their commissions on their sale's day, partner and currency,
// what they earned less reversals and clawbacks, rejected ones and tests excluded.
func (w *world) naive(t *testing.T) []fact {
	t.Helper()
	type row struct {
		At       time.Time `db:"at"`
		Partner  int64     `db:"partner"`
		Currency string    `db:"currency"`
		Cents    int64     `db:"cents"`
		Bot      bool      `db:"bot"`
		First    bool      `db:"first"`
	}
	queries := []struct {
		q    string
		fact func(row) fact
	}{
		{`SELECT click_timestamp AS at, partner_id AS partner, '' AS currency, 0 AS cents, is_bot AS bot FROM clicks
			WHERE program_id = $1 AND NOT is_test`,
			func(r row) fact {
				if r.Bot {
					return fact{Partner: r.Partner, BotClicks: 1}
				}
				return fact{Partner: r.Partner, Clicks: 1}
			}},
		{`SELECT l.lead_timestamp AS at, COALESCE(c.partner_id, cu.partner_id, 0) AS partner, '' AS currency, 0 AS cents, false AS bot
			FROM leads l LEFT JOIN clicks c ON c.id = l.click_ref LEFT JOIN customers cu ON cu.id = l.customer_id
			WHERE l.program_id = $1 AND NOT l.is_test AND l.status = 'settled'`,
			func(r row) fact { return fact{Partner: r.Partner, Leads: 1} }},
		{`SELECT sale_date AS at, partner_id AS partner, currency, amount_cents - refunded_amount_cents AS cents, false AS bot,
				NOT EXISTS (SELECT 1 FROM sales f WHERE f.customer_id = s.customer_id AND f.id < s.id) AS first FROM sales s
			WHERE program_id = $1 AND NOT is_test`,
			func(r row) fact {
				f := fact{Partner: r.Partner, Currency: r.Currency, Sales: 1, Revenue: r.Cents}
				if r.First {
					f.Customers = 1
				}
				return f
			}},
		{`SELECT s.sale_date AS at, s.partner_id AS partner, s.currency, c.amount_cents - c.reversed_amount_cents AS cents, false AS bot
			FROM commissions c JOIN sales s ON s.id = c.sale_id WHERE c.program_id = $1 AND NOT c.is_test AND c.status <> 'rejected'`,
			func(r row) fact { return fact{Partner: r.Partner, Currency: r.Currency, Commission: r.Cents} }},
		{`SELECT s.sale_date AS at, s.partner_id AS partner, s.currency, k.amount_cents AS cents, false AS bot
			FROM commission_clawbacks k JOIN commissions c ON c.id = k.commission_id JOIN sales s ON s.id = c.sale_id
			WHERE k.program_id = $1 AND NOT k.is_test`,
			func(r row) fact { return fact{Partner: r.Partner, Currency: r.Currency, Commission: -r.Cents} }},
	}
	var out []fact
	for _, q := range queries {
		var rows []row
		if err := w.db.Select(&rows, q.q, w.program); err != nil {
			t.Fatalf("%s: %v", q.q, err)
		}
		for _, r := range rows {
			f := q.fact(r)
			f.Day = r.At.UTC().Truncate(24 * time.Hour)
			out = append(out, f)
		}
	}
	return out
}

// sums are a span's figures added up.
type sums struct {
	clicks, botClicks, leads, sales, customers, revenue, commission, currencySales int64
	active                                                                         map[int64]int64 // per partner but 0: clicks + leads + sales
}

// add sums the facts of the days from to to (both included), money in currency.
func add(facts []fact, from, to time.Time, currency string) sums {
	s := sums{active: map[int64]int64{}}
	for _, f := range facts {
		if f.Day.Before(from) || f.Day.After(to) {
			continue
		}
		s.clicks += f.Clicks
		s.botClicks += f.BotClicks
		s.leads += f.Leads
		s.sales += f.Sales
		s.customers += f.Customers
		if f.Currency == currency {
			s.revenue += f.Revenue
			s.commission += f.Commission
			s.currencySales += f.Sales
		}
		if f.Partner != 0 {
			s.active[f.Partner] += f.Clicks + f.Leads + f.Sales
		}
	}
	return s
}

func (s sums) totals() reports.Totals {
	partners := int64(0)
	for _, n := range s.active {
		if n > 0 {
			partners++
		}
	}
	return reports.Totals{Clicks: s.clicks, BotClicks: s.botClicks, Leads: s.leads, Sales: s.sales, Customers: s.customers,
		RevenueCents: s.revenue, CommissionCents: s.commission, Partners: partners, ConversionRate: rate(s.customers, s.clicks),
		LeadRate: rate(s.leads, s.clicks), AverageOrderCents: halfUp(s.revenue, s.currencySales)}
}

// halfUp is a/b rounded half away from zero (0 when b is 0), worked out with exact fractions.
func halfUp(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	x := new(big.Rat).SetFrac64(a, b)
	neg := x.Sign() < 0
	x.Abs(x)
	x.Add(x, big.NewRat(1, 2))
	n := new(big.Int).Quo(x.Num(), x.Denom()) // floor, x being positive
	if neg {
		n.Neg(n)
	}
	return n.Int64()
}

// rate is n per click to four decimals, half up; 0 without clicks.
func rate(n, clicks int64) float64 {
	if clicks == 0 {
		return 0
	}
	f, _ := new(big.Rat).SetFrac64(halfUp(n*10000, clicks), 10000).Float64()
	return f
}

// span is the period's first and last day at now, as the figures say: the last n UTC days, today
// included, or from the first day with something counted (a bot's click included: the period's figures
// count them apart).
func span(facts []fact, p reports.Period) (from, to time.Time, days int) {
	to = now.Truncate(24 * time.Hour)
	days = map[reports.Period]int{reports.Week: 7, reports.Month: 30, reports.Quarter: 90}[p]
	if days > 0 {
		return to.AddDate(0, 0, 1-days), to, days
	}
	from = to
	for _, f := range facts {
		if f.Day.Before(from) {
			from = f.Day
		}
	}
	return from, to, 0
}

func wantProgram(facts []fact, p reports.Period, currency string) reports.Performance {
	from, to, days := span(facts, p)
	out := reports.Performance{Period: p, From: from, To: to, Currency: currency, Totals: add(facts, from, to, currency).totals()}
	if days > 0 {
		prev := add(facts, from.AddDate(0, 0, -days), from.AddDate(0, 0, -1), currency).totals()
		out.Previous = &prev
	}
	byDay := map[time.Time][]fact{}
	for _, f := range facts {
		byDay[f.Day] = append(byDay[f.Day], f)
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		s := add(byDay[d], d, d, currency)
		out.Series = append(out.Series, reports.Day{Date: d, Clicks: s.clicks, Leads: s.leads, Sales: s.sales,
			RevenueCents: s.revenue, CommissionCents: s.commission})
	}
	return out
}

func wantPartners(facts []fact, names map[int64][2]string, p reports.Period, currency string, sort reports.Sort, desc bool, limit int) reports.PartnerList {
	from, to, _ := span(facts, p)
	out := reports.PartnerList{Period: p, From: from, To: to, Currency: currency, Sort: sort, Descending: desc, Partners: []reports.PartnerRow{}}
	byPartner := map[int64][]fact{}
	for _, f := range facts {
		byPartner[f.Partner] = append(byPartner[f.Partner], f)
	}
	for id, name := range names {
		s := add(byPartner[id], from, to, currency)
		if s.clicks+s.leads+s.sales == 0 {
			continue
		}
		out.Partners = append(out.Partners, reports.PartnerRow{PartnerID: id, Name: name[0], Email: name[1],
			Clicks: s.clicks, Leads: s.leads, Sales: s.sales, Customers: s.customers, RevenueCents: s.revenue, CommissionCents: s.commission,
			ConversionRate: rate(s.customers, s.clicks), LeadRate: rate(s.leads, s.clicks), AverageOrderCents: halfUp(s.revenue, s.currencySales)})
	}
	key := func(r reports.PartnerRow) float64 {
		return map[reports.Sort]float64{"clicks": float64(r.Clicks), "leads": float64(r.Leads), "sales": float64(r.Sales),
			"customers": float64(r.Customers), "revenue_cents": float64(r.RevenueCents), "commission_cents": float64(r.CommissionCents),
			"conversion_rate": r.ConversionRate, "lead_rate": r.LeadRate, "average_order_cents": float64(r.AverageOrderCents)}[sort]
	}
	slices.SortFunc(out.Partners, func(a, b reports.PartnerRow) int {
		ka, kb := key(a), key(b)
		switch {
		case ka < kb && !desc, ka > kb && desc:
			return -1
		case ka != kb:
			return 1
		}
		return int(a.PartnerID - b.PartnerID)
	})
	if len(out.Partners) > limit {
		out.Partners = out.Partners[:limit]
	}
	return out
}

// check compares every period and currency of the program's report, and its partners by every sort
// both ways (over the periods and currencies, with a few limits), with the naive count.
func (w *world) check(t *testing.T, name string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		ctx := context.Background()
		facts := w.naive(t)
		var list []struct {
			ID    int64  `db:"id"`
			Name  string `db:"name"`
			Email string `db:"email"`
		}
		if err := w.db.Select(&list, `SELECT pa.id, pa.name, pa.email FROM partners pa JOIN partner_programs pp ON pp.partner_id = pa.id
			WHERE pp.program_id = $1`, w.program); err != nil {
			t.Fatal(err)
		}
		names := map[int64][2]string{}
		for _, p := range list {
			names[p.ID] = [2]string{p.Name, p.Email}
		}
		k := 0
		for _, p := range periods {
			for _, c := range currencies {
				got, err := reports.Program(ctx, w.db, w.program, p, c, now)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(wantProgram(facts, p, c), got); d != "" {
					t.Errorf("Program(%s, %s) (-naive +got):\n%s", p, c, d)
				}
				// Four sorts a period and currency: every sort both ways over the eight, limits 100, 2 and 1.
				for range 4 {
					s, desc, limit := sorts[k/2%len(sorts)], k%2 == 0, []int{100, 2, 1}[k%3]
					k++
					got, err := reports.Partners(ctx, w.db, w.program, p, c, s, desc, limit, now)
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(wantPartners(facts, names, p, c, s, desc, limit), got); d != "" {
						t.Errorf("Partners(%s, %s, %s, descending %v, limit %d) (-naive +got):\n%s", p, c, s, desc, limit, d)
					}
				}
			}
		}
	})
}

// recount replaces the counts with what the rows count for by pkg/counting's rules, as deltas: this test
// writes and changes its events by SQL, which counts nothing. (The product's writers add what each event
// counts for as they write it; pkg/api's TestCountsAgreeWithRows holds them to the rows.) A lead's class
// is the one its writer would have stored: counting.Lead of its test mode and status.
func recount(t *testing.T, db *sqlx.DB) {
	t.Helper()
	exec(t, db, `TRUNCATE performance_hourly, performance_daily, performance_monthly, performance_program_daily, performance_deltas`)
	var rows []struct {
		Kind       string    `db:"kind"`
		Program    int64     `db:"program_id"`
		At         time.Time `db:"at"`
		Partner    int64     `db:"partner_id"`
		Currency   string    `db:"currency"`
		Test       bool      `db:"is_test"`
		Flag       bool      `db:"flag"` // a click: a bot's; a lead: provisional; a sale: the customer's first
		Amount     int64     `db:"amount"`
		Refunded   int64     `db:"refunded"`
		Commission int64     `db:"commission"`
		Rejected   bool      `db:"rejected"`
		Reversed   int64     `db:"reversed"` // a sale's commission: reversed and clawed back
	}
	if err := db.Select(&rows, `
		SELECT 'click' AS kind, program_id, click_timestamp AS at, partner_id, '' AS currency, is_test, is_bot AS flag, 0 AS amount,
			0 AS refunded, 0 AS commission, false AS rejected, 0 AS reversed FROM clicks
		UNION ALL
		SELECT 'lead', l.program_id, l.lead_timestamp, COALESCE(c.partner_id, cu.partner_id, 0), '', l.is_test, l.status = 'provisional',
			0, 0, 0, false, 0
		FROM leads l LEFT JOIN clicks c ON c.id = l.click_ref LEFT JOIN customers cu ON cu.id = l.customer_id
		UNION ALL
		SELECT 'sale', s.program_id, s.sale_date, s.partner_id, s.currency, s.is_test,
			NOT EXISTS (SELECT 1 FROM sales f WHERE f.customer_id = s.customer_id AND f.id < s.id), s.amount_cents,
			s.refunded_amount_cents, COALESCE(c.amount_cents, 0), COALESCE(c.status = 'rejected', false),
			COALESCE(c.reversed_amount_cents, 0) + COALESCE((SELECT sum(b.amount_cents) FROM commission_clawbacks b WHERE b.commission_id = c.id), 0)
		FROM sales s LEFT JOIN commissions c ON c.sale_id = s.id`); err != nil {
		t.Fatal(err)
	}
	var ds []counting.Delta
	for _, r := range rows {
		var m counting.Measures
		switch r.Kind {
		case "click":
			m = counting.Click(r.Test, r.Flag)
		case "lead":
			m = counting.LeadMeasures(counting.Lead(r.Test, r.Flag))
		case "sale":
			m = counting.Sale(counting.SaleFacts{AmountCents: r.Amount, FirstSale: r.Flag, Test: r.Test, CommissionCents: r.Commission,
				CommissionRejected: r.Rejected})
			if !r.Rejected {
				ds = append(ds, counting.Delta{Key: counting.Key{ProgramID: r.Program, Hour: counting.HourOf(r.At), PartnerID: r.Partner,
					Currency: r.Currency}, Measures: counting.Refund(r.Test, r.Refunded, r.Reversed)})
			} else {
				ds = append(ds, counting.Delta{Key: counting.Key{ProgramID: r.Program, Hour: counting.HourOf(r.At), PartnerID: r.Partner,
					Currency: r.Currency}, Measures: counting.Refund(r.Test, r.Refunded, 0)})
			}
		}
		ds = append(ds, counting.Delta{Key: counting.Key{ProgramID: r.Program, Hour: counting.HourOf(r.At), PartnerID: r.Partner,
			Currency: r.Currency}, Measures: m})
	}
	if err := events.Add(context.Background(), db, ds...); err != nil {
		t.Fatal(err)
	}
}

func rollUp(t *testing.T, db *sqlx.DB) {
	t.Helper()
	for {
		n, err := events.RollUp(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func exec(t *testing.T, db *sqlx.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// pick is the ids q selects (at least one).
func pick(t *testing.T, db *sqlx.DB, q string, args ...any) []int64 {
	t.Helper()
	var ids []int64
	if err := db.Select(&ids, q, args...); err != nil || len(ids) == 0 {
		t.Fatalf("%s: %d rows, %v", q, len(ids), err)
	}
	return ids
}

func pickOne(t *testing.T, db *sqlx.DB, q string, args ...any) int64 {
	t.Helper()
	return pick(t, db, q, args...)[0]
}

// stamps are times as PostgreSQL reads them, for a timestamptz[].
func stamps(ts ...time.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Format(time.RFC3339Nano)
	}
	return out
}
