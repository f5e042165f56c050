package events_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/events"
	eventssql "github.com/reftrack/reftrack/pkg/events/sql"
	"github.com/reftrack/reftrack/pkg/platform/pgtrigger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// perfNow is the backfill tests' clock; their events fall in the forty days before it.
var perfNow = time.Date(2026, 2, 10, 12, 0, 0, 0, time.UTC)

// perfKey is one row of the performance counts, perfFigures its figures.
type perfKey struct {
	Program  int64
	Day      string
	Partner  int64
	Currency string
}

type perfFigures struct{ Clicks, BotClicks, Leads, Sales, Revenue, Commission int64 }

// perfLive is performance_live summed by program, day, partner and currency; rows whose figures add up
// to nothing are left out (a click counted and then deleted leaves one).
func perfLive(t *testing.T, db *sqlx.DB) map[perfKey]perfFigures {
	t.Helper()
	var rows []struct {
		Program  int64  `db:"program_id"`
		Day      string `db:"day"`
		Partner  int64  `db:"partner_id"`
		Currency string `db:"currency"`
		perfFigures
	}
	if err := db.Select(&rows, `SELECT program_id, day::text AS day, partner_id, currency, sum(clicks)::bigint AS clicks,
			sum(bot_clicks)::bigint AS botclicks, sum(leads)::bigint AS leads, sum(sales)::bigint AS sales, sum(revenue_cents)::bigint AS revenue,
			sum(commission_cents)::bigint AS commission
		FROM performance_live GROUP BY 1, 2, 3, 4
		HAVING sum(clicks) <> 0 OR sum(bot_clicks) <> 0 OR sum(leads) <> 0 OR sum(sales) <> 0 OR sum(revenue_cents) <> 0 OR sum(commission_cents) <> 0`); err != nil {
		t.Fatal(err)
	}
	out := map[perfKey]perfFigures{}
	for _, r := range rows {
		out[perfKey{r.Program, r.Day, r.Partner, r.Currency}] = r.perfFigures
	}
	return out
}

// perfTriggers are the performance counts' triggers among pkg/events/sql.Triggers.
func perfTriggers() []pgtrigger.Trigger {
	var out []pgtrigger.Trigger
	for _, tr := range eventssql.Triggers {
		if strings.HasPrefix(tr.Function, "performance_") {
			out = append(out, tr)
		}
	}
	return out
}

// perfAttached are the performance triggers attached as pkg/events/sql.Triggers defines them (name,
// table, function).
func perfAttached(t *testing.T, db *sqlx.DB) []string {
	t.Helper()
	var names []string
	for _, tr := range perfTriggers() {
		var n int
		if err := db.Get(&n, `SELECT count(*) FROM pg_trigger g JOIN pg_proc f ON f.oid = g.tgfoid
			WHERE g.tgname = $1 AND g.tgrelid = to_regclass($2) AND f.proname = $3`, tr.Name, tr.Table, tr.Function); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			names = append(names, tr.Name)
		}
	}
	return names
}

// perfDetach drops the performance triggers and empties the counts, as a database migrated by a build
// before them is.
func perfDetach(t *testing.T, db *sqlx.DB) {
	t.Helper()
	for _, tr := range perfTriggers() {
		perfExec(t, db, `DROP TRIGGER `+pq.QuoteIdentifier(tr.Name)+` ON `+pq.QuoteIdentifier(tr.Table))
	}
	var left []string
	if err := db.Select(&left, `SELECT tgname FROM pg_trigger WHERE tgname LIKE 'performance\_%'`); err != nil || len(left) > 0 {
		t.Fatalf("performance triggers left: %v, %v", left, err)
	}
	perfExec(t, db, `TRUNCATE performance_daily, performance_deltas`)
}

// Detached and emptied, the performance counts come back exactly, and count again, when db.ApplyFunctions
// attaches the triggers and backfills: every kind of event, folded or still a delta, changed after it
// was written (bots, a deleted click, a moved and a settled lead, refunds, reversals, a rejection, a
// clawback), and the events written while no trigger counted.
func TestPerformanceBackfill(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	p := perfProgram(t, d.DB)
	other := perfProgram(t, d.DB)
	dbtest.ClickMonths(t, d.DB, "2025-12-01", 3)
	p.write(t, 120, 30)
	other.write(t, 20, 6)
	if _, err := events.RollUp(ctx, d.DB); err != nil {
		t.Fatal(err)
	}
	// The changes, after the roll-up: the counts are folded rows and deltas, some negative.
	perfExec(t, d.DB, `UPDATE clicks SET is_bot = true WHERE id IN (SELECT id FROM clicks
		WHERE program_id = $1 AND NOT is_bot AND NOT is_test ORDER BY id LIMIT 2)`, p.program)
	perfExec(t, d.DB, `DELETE FROM clicks WHERE id = (SELECT max(c.id) FROM clicks c WHERE c.program_id = $1 AND NOT c.is_bot
		AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.click_ref = c.id))`, p.program)
	perfExec(t, d.DB, `UPDATE leads SET lead_timestamp = lead_timestamp - interval '9 days'
		WHERE id = (SELECT min(id) FROM leads WHERE program_id = $1)`, p.program)
	perfExec(t, d.DB, `UPDATE leads SET status = 'settled', settled_at = $2,
			customer_id = (SELECT id FROM customers WHERE program_id = $1 AND customer_key = 'late')
		WHERE id = (SELECT max(id) FROM leads WHERE program_id = $1 AND status = 'provisional' AND click_ref IS NOT NULL)`, p.program, perfNow)
	perfExec(t, d.DB, `UPDATE sales SET refunded_amount_cents = amount_cents / 3 WHERE program_id = $1 AND id % 4 = 1`, p.program)
	perfExec(t, d.DB, `UPDATE commissions SET reversed_amount_cents = amount_cents / 3, status = 'pending'
		WHERE program_id = $1 AND status = 'pending' AND sale_id % 4 = 1`, p.program)
	perfExec(t, d.DB, `UPDATE commissions SET status = 'rejected', rejected_reason = 'fraud', rejected_at = $2
		WHERE id = (SELECT min(id) FROM commissions WHERE program_id = $1 AND status = 'pending' AND NOT is_test)`, p.program, perfNow)
	p.clawBack(t, perfPickOne(t, d.DB, `SELECT min(id) FROM commissions WHERE program_id = $1 AND status = 'pending' AND NOT is_test`, p.program), 150)

	want := perfLive(t, d.DB)
	if len(want) < 30 {
		t.Fatalf("%d rows of counts: the events wrote too few", len(want))
	}
	perfDetach(t, d.DB)
	if got := perfLive(t, d.DB); len(got) != 0 {
		t.Fatalf("counts left after TRUNCATE: %v", got)
	}
	// Written while no trigger counts (as before the triggers existed): the backfill counts them.
	day := perfNow.AddDate(0, 0, -3).Format(time.DateOnly)
	p.clicks(t, perfNow.AddDate(0, 0, -3), 1, false)
	p.clicks(t, perfNow.AddDate(0, 0, -3), 1, true)
	perfAdd(want, perfKey{p.program, day, p.partners[1], ""}, perfFigures{Clicks: 1, BotClicks: 1})
	p.sale(t, "while-detached", "cust-2", 4000, "EUR", perfNow.AddDate(0, 0, -3))
	perfAdd(want, perfKey{p.program, day, p.partners[0], "EUR"}, perfFigures{Sales: 1, Revenue: 4000, Commission: 800})

	if err := db.ApplyFunctions(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, perfLive(t, d.DB)); diff != "" {
		t.Fatalf("backfilled counts (-before +after):\n%s", diff)
	}
	var all []string
	for _, tr := range perfTriggers() {
		all = append(all, tr.Name)
	}
	if got := perfAttached(t, d.DB); !slices.Equal(got, all) {
		t.Fatalf("attached %v, want %v", got, all)
	}
	// Applied again, nothing is missing: nothing is counted twice.
	if err := db.ApplyFunctions(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, perfLive(t, d.DB)); diff != "" {
		t.Fatalf("applied twice (-want +got):\n%s", diff)
	}

	// The triggers count again: a click and a bot's, a lead of no partner, a sale with its commission,
	// then its partial refund and reversal, a clawback, a deleted click, each moving the sums by its part.
	today := perfNow.Format(time.DateOnly)
	p.clicks(t, perfNow.Add(-time.Hour), 1, false)
	p.clicks(t, perfNow.Add(-time.Hour), 1, true)
	perfAdd(want, perfKey{p.program, today, p.partners[1], ""}, perfFigures{Clicks: 1, BotClicks: 1})
	perfExec(t, d.DB, `INSERT INTO leads (program_id, status, source, lead_timestamp) VALUES ($1, 'provisional', 'server', $2)`, p.program, perfNow)
	perfAdd(want, perfKey{p.program, today, 0, ""}, perfFigures{Leads: 1})
	sale := p.sale(t, "after", "cust-1", 10000, "USD", perfNow.Add(-2*time.Hour))
	perfAdd(want, perfKey{p.program, today, p.partners[1], "USD"}, perfFigures{Sales: 1, Revenue: 10000, Commission: 2000})
	perfExec(t, d.DB, `UPDATE sales SET refunded_amount_cents = 2500 WHERE id = $1`, sale)
	perfExec(t, d.DB, `UPDATE commissions SET reversed_amount_cents = 500, status = 'pending' WHERE sale_id = $1`, sale)
	perfAdd(want, perfKey{p.program, today, p.partners[1], "USD"}, perfFigures{Revenue: -2500, Commission: -500})
	p.clawBack(t, perfPickOne(t, d.DB, `SELECT id FROM commissions WHERE sale_id = $1`, sale), 300)
	perfAdd(want, perfKey{p.program, today, p.partners[1], "USD"}, perfFigures{Commission: -300})
	var gone struct {
		Day     string `db:"day"`
		Partner int64  `db:"partner_id"`
	}
	if err := d.DB.Get(&gone, `DELETE FROM clicks WHERE id = (SELECT min(c.id) FROM clicks c
			WHERE c.program_id = $1 AND NOT c.is_bot AND NOT c.is_test AND NOT EXISTS (SELECT 1 FROM leads l WHERE l.click_ref = c.id))
		RETURNING (click_timestamp AT TIME ZONE 'UTC')::date::text AS day, partner_id`, p.program); err != nil {
		t.Fatal(err)
	}
	perfAdd(want, perfKey{p.program, gone.Day, gone.Partner, ""}, perfFigures{Clicks: -1})
	if diff := cmp.Diff(want, perfLive(t, d.DB)); diff != "" {
		t.Errorf("after the backfill, events (-want +got):\n%s", diff)
	}
	if _, err := events.RollUp(ctx, d.DB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, perfLive(t, d.DB)); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
}

// A lead counts for its click's partner (performance_lead_partner) also once the click's month has expired and
// the click is kept in clicks_kept (pkg/clicks' clicks_expire): the backfill finds it there, as every
// other reader of a click_ref does (leads_state, sales_state). It fails as of 6163fe9:
// performance_lead_partner looks in clicks only, so the backfill counts the lead for no partner (0).
func TestPerformanceBackfillFindsKeptClicks(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	p := perfProgram(t, d.DB)
	dbtest.ClickMonths(t, d.DB, "2025-12-01", 3)
	// Bea's click in December and its provisional (browser) lead, counted for Bea.
	p.clicks(t, time.Date(2025, 12, 5, 10, 0, 0, 0, time.UTC), 1, false)
	perfExec(t, d.DB, `INSERT INTO leads (program_id, click_ref, click_id, status, source, lead_timestamp)
		SELECT program_id, id, click_id, 'provisional', 'browser', click_timestamp + interval '5 minutes'
		FROM clicks WHERE program_id = $1`, p.program)
	leads := func() map[perfKey]perfFigures {
		out := map[perfKey]perfFigures{}
		for k, v := range perfLive(t, d.DB) {
			if v.Leads != 0 {
				out[k] = perfFigures{Leads: v.Leads}
			}
		}
		return out
	}
	want := map[perfKey]perfFigures{{p.program, "2025-12-05", p.partners[1], ""}: {Leads: 1}}
	if diff := cmp.Diff(want, leads()); diff != "" {
		t.Fatalf("the lead (-want +got):\n%s", diff)
	}
	// December expires: its one click is kept, for its lead.
	var kept int64
	if err := d.DB.Get(&kept, `SELECT kept FROM clicks_expire('2026-01-01') WHERE month = '2025-12-01'`); err != nil || kept != 1 {
		t.Fatalf("December expired with %d clicks kept, %v", kept, err)
	}
	perfDetach(t, d.DB)
	if err := db.ApplyFunctions(context.Background(), d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, leads()); diff != "" {
		t.Errorf("the lead of a kept click, backfilled (-want +got):\n%s", diff)
	}
}

// perfAdd adds f to m's row k, leaving out a row that comes to nothing.
func perfAdd(m map[perfKey]perfFigures, k perfKey, f perfFigures) {
	v := m[k]
	v.Clicks += f.Clicks
	v.BotClicks += f.BotClicks
	v.Leads += f.Leads
	v.Sales += f.Sales
	v.Revenue += f.Revenue
	v.Commission += f.Commission
	if v == (perfFigures{}) {
		delete(m, k)
		return
	}
	m[k] = v
}

// perfWorld is a seeded program with a second partner, Bea.
type perfWorld struct {
	db       *sqlx.DB
	program  int64
	partners []int64 // the seeded partner, Bea
	links    []int64
	enrolled []int64 // their partner_programs ids
}

func perfProgram(t *testing.T, db *sqlx.DB) *perfWorld {
	t.Helper()
	ctx := context.Background()
	r, err := seed.Run(ctx, db, seed.Options{Now: perfNow})
	if err != nil {
		t.Fatal(err)
	}
	seeded, err := programs.PartnerOf(ctx, db, r.ProgramID, r.PartnerID)
	if err != nil {
		t.Fatal(err)
	}
	bea, err := programs.AddPartner(ctx, db, r.ProgramID, programs.NewPartner{Name: "Bea", Email: "bea@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	link, _, err := programs.InsertLink(ctx, db, r.ProgramID, bea.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	return &perfWorld{db: db, program: r.ProgramID, partners: []int64{r.PartnerID, bea.ID}, links: []int64{r.LinkID, link},
		enrolled: []int64{seeded.PartnerProgramID, bea.PartnerProgramID}}
}

// write writes clicks (some tests, some bots'), a provisional lead on a third of them, a lead of no
// partner and a test one, 20 customers with a settled lead each, and sales (USD and EUR, some tests)
// with their commissions (one rejected as written), over the forty days before perfNow.
func (w *perfWorld) write(t *testing.T, clicks, sales int) {
	t.Helper()
	partners, links, enrolled := pq.Array(w.partners), pq.Array(w.links), pq.Array(w.enrolled)
	perfExec(t, w.db, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, is_test, is_bot)
		SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, to_char(m.month, 'YYMM') || lpad('w' || $1::bigint || '_' || g, 22, '0'),
			$1, ($3::bigint[])[g % 2 + 1], ($2::bigint[])[g % 2 + 1], ts.ts, 'https://shop.example.com/?aff=x', g % 11 = 0, g % 13 = 0
		FROM generate_series(1, $5::int) g
		CROSS JOIN LATERAL (SELECT $4::timestamptz - ((g::bigint * 7919) % (40 * 86400)) * interval '1 second' AS ts) ts
		CROSS JOIN LATERAL (SELECT date_trunc('month', ts.ts AT TIME ZONE 'UTC')::date AS month) m`,
		w.program, partners, links, perfNow, clicks)
	perfExec(t, w.db, `INSERT INTO leads (program_id, click_ref, click_id, status, source, lead_timestamp, is_test)
		SELECT c.program_id, c.id, c.click_id, 'provisional', 'browser', c.click_timestamp + interval '3 hours', c.id % 7 = 0
		FROM clicks c WHERE c.program_id = $1 AND c.id % 3 = 0`, w.program)
	perfExec(t, w.db, `INSERT INTO leads (program_id, status, source, lead_timestamp, is_test)
		VALUES ($1, 'provisional', 'server', $2, false), ($1, 'provisional', 'server', $2, true)`, w.program, perfNow.AddDate(0, 0, -4))
	perfExec(t, w.db, `INSERT INTO customers (program_id, customer_key, partner_id, partner_program_id, status)
		SELECT $1::bigint, 'cust-' || g, ($2::bigint[])[g % 2 + 1], ($3::bigint[])[g % 2 + 1], 'converted' FROM generate_series(1, 20) g
		UNION ALL SELECT $1, 'late', ($2::bigint[])[1], ($3::bigint[])[1], 'lead'`, w.program, partners, enrolled)
	perfExec(t, w.db, `INSERT INTO leads (program_id, customer_id, customer_key, status, source, settled_at, lead_timestamp, is_test)
		SELECT $1, cu.id, cu.customer_key, 'settled', 'server', ts.ts, ts.ts, g % 9 = 0
		FROM generate_series(1, 20) g JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = 'cust-' || g
		CROSS JOIN LATERAL (SELECT $2::timestamptz - ((g::bigint * 6007) % (40 * 86400)) * interval '1 second' AS ts) ts`, w.program, perfNow)
	perfExec(t, w.db, `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date, is_test)
		SELECT $1, cu.id, cu.partner_id, 'txn-' || g, 1000 + (g * 37) % 9000, CASE WHEN g % 3 = 1 THEN 'EUR' ELSE 'USD' END, 'api',
			$2::timestamptz - ((g::bigint * 4001) % (40 * 86400)) * interval '1 second', g % 7 = 0
		FROM generate_series(1, $3::int) g JOIN customers cu ON cu.program_id = $1 AND cu.customer_key = 'cust-' || (g % 20 + 1)`,
		w.program, perfNow, sales)
	perfExec(t, w.db, `INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test,
			available_on, status, rejected_reason, rejected_at)
		SELECT s.id, s.program_id, s.partner_id, cu.partner_program_id, s.amount_cents / 5, s.currency, s.is_test, s.sale_date + interval '30 days',
			CASE WHEN s.processor_event_id = 'txn-5' THEN 'rejected' ELSE 'pending' END,
			CASE WHEN s.processor_event_id = 'txn-5' THEN 'partner banned' END, CASE WHEN s.processor_event_id = 'txn-5' THEN s.sale_date END
		FROM sales s JOIN customers cu ON cu.id = s.customer_id WHERE s.program_id = $1`, w.program)
}

// clicks writes a click of partner i (0, the seeded one; 1, Bea) at ts, a bot's or not.
func (w *perfWorld) clicks(t *testing.T, ts time.Time, i int, bot bool) {
	t.Helper()
	perfExec(t, w.db, `INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, is_bot)
		SELECT clicks_make_id(m.month, s.n), m.month, to_char(m.month, 'YYMM') || lpad('x' || s.n, 22, '0'),
			$1, $2, $3, $4, 'https://shop.example.com/?aff=x', $5
		FROM (SELECT date_trunc('month', $4::timestamptz AT TIME ZONE 'UTC')::date AS month) m, (SELECT nextval('clicks_id_seq') AS n) s`,
		w.program, w.links[i], w.partners[i], ts, bot)
}

// sale writes a sale of the customer's partner with its commission (a fifth), and returns its id.
func (w *perfWorld) sale(t *testing.T, txn, customer string, cents int64, currency string, at time.Time) int64 {
	t.Helper()
	id := perfPickOne(t, w.db, `INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date)
		SELECT $1, id, partner_id, $3, $4, $5, 'api', $6 FROM customers WHERE program_id = $1 AND customer_key = $2 RETURNING id`,
		w.program, customer, txn, cents, currency, at)
	perfExec(t, w.db, `INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, available_on)
		SELECT s.id, s.program_id, s.partner_id, cu.partner_program_id, s.amount_cents / 5, s.currency, s.sale_date + interval '30 days'
		FROM sales s JOIN customers cu ON cu.id = s.customer_id WHERE s.id = $1`, id)
	return id
}

// clawBack pays the commission out and then refunds cents of it: a refund and its clawback.
func (w *perfWorld) clawBack(t *testing.T, commission, cents int64) {
	t.Helper()
	payout := perfPickOne(t, w.db, `INSERT INTO payouts (program_id, partner_id, currency, gross_cents, amount_cents, commission_count, status,
			external_reference, created_at, paid_at)
		SELECT program_id, partner_id, currency, amount_cents - reversed_amount_cents, amount_cents - reversed_amount_cents, 1, 'paid', 'po-' || id, $2, $2
		FROM commissions WHERE id = $1 RETURNING id`, commission, perfNow)
	perfExec(t, w.db, `UPDATE commissions SET status = 'paid', payout_id = $2, approved_at = $3, paid_at = $3 WHERE id = $1`, commission, payout, perfNow)
	refund := perfPickOne(t, w.db, `INSERT INTO refunds (sale_id, program_id, reason, amount_cents, source)
		SELECT sale_id, program_id, 'refund', $2 * 5, 'api' FROM commissions WHERE id = $1 RETURNING id`, commission, cents)
	perfExec(t, w.db, `INSERT INTO commission_clawbacks (commission_id, refund_id, program_id, partner_id, currency, amount_cents, is_test)
		SELECT id, $2, program_id, partner_id, currency, $3, is_test FROM commissions WHERE id = $1`, commission, refund, cents)
}

func perfExec(t *testing.T, db *sqlx.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func perfPickOne(t *testing.T, db *sqlx.DB, q string, args ...any) int64 {
	t.Helper()
	var id int64
	if err := db.Get(&id, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return id
}
