package events_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// fill inserts n clicks, n/2 leads and n/4 sales for the program, at pseudo-random times over span
// before end (several per hour, ties included), plus test events and bot clicks that are never listed.
func fill(t *testing.T, db *sqlx.DB, r seed.Result, n int, end time.Time, span time.Duration) {
	t.Helper()
	secs := int64(span / time.Second)
	stmts := []string{
		`INSERT INTO clicks (click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, page_url, is_test, is_bot)
		 SELECT to_char(now() AT TIME ZONE 'UTC', 'YYMM') || lpad('c' || $1::bigint || '_' || g, 22, '0'), $1, $2, $3, $4::timestamptz - ((g * 7919) % $6) * interval '1 second',
		        'https://shop.example.com/?aff=x', 'https://shop.example.com/p' || g, g % 13 = 0, g % 17 = 0
		 FROM generate_series(1, $5) g`,
		`INSERT INTO customers (program_id, customer_key, partner_id, status)
		 SELECT $1, 'fill-' || $1::bigint, $3, 'lead' WHERE $2::bigint > 0 AND $4::timestamptz IS NOT NULL AND $5::int > 0 AND $6::bigint > 0
		 ON CONFLICT DO NOTHING`,
		`INSERT INTO leads (program_id, customer_id, click_id, customer_key, status, source, settled_at, lead_timestamp, is_test, counts_as)
		 SELECT $1::bigint, NULL, to_char(now() AT TIME ZONE 'UTC', 'YYMM') || lpad('c' || $1::bigint || '_' || g, 22, '0'), 'k' || g,
		        CASE WHEN g % 3 = 0 THEN 'settled' ELSE 'provisional' END, 'browser', CASE WHEN g % 3 = 0 THEN $4::timestamptz END,
		        $4::timestamptz - ((g * 6007) % $6) * interval '1 second', g % 11 = 0,
		        CASE WHEN g % 11 = 0 THEN NULL WHEN g % 3 = 0 THEN 'lead' ELSE 'provisional' END
		 FROM generate_series(1, $5 / 2) g WHERE $2::bigint > 0 AND $3::bigint > 0`,
		`INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date, is_test)
		 SELECT $1::bigint, (SELECT id FROM customers WHERE customer_key = 'fill-' || $1::bigint), $3, 'txn_' || $1::bigint || '_' || g, 100 + g, 'USD', 'api',
		        $4::timestamptz - ((g * 4001) % $6) * interval '1 second', g % 7 = 0
		 FROM generate_series(1, $5 / 4) g WHERE $2::bigint > 0`,
	}
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var before struct {
		Click int64 `db:"click"`
		Lead  int64 `db:"lead"`
		Sale  int64 `db:"sale"`
	}
	if err := tx.Get(&before, `SELECT (SELECT COALESCE(max(id), 0) FROM clicks) AS click, (SELECT COALESCE(max(id), 0) FROM leads) AS lead,
		(SELECT COALESCE(max(id), 0) FROM sales) AS sale`); err != nil {
		t.Fatal(err)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(q, r.ProgramID, r.LinkID, r.PartnerID, end, n, secs); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// What the rows count for, added as their writers add it: pkg/counting's rules, events.Add.
	var rows []struct {
		Kind     string    `db:"kind"`
		At       time.Time `db:"at"`
		Partner  int64     `db:"partner_id"`
		Currency string    `db:"currency"`
		Test     bool      `db:"is_test"`
		Bot      bool      `db:"is_bot"`
		CountsAs *string   `db:"counts_as"`
		Amount   int64     `db:"amount_cents"`
		First    bool      `db:"first"`
	}
	if err := tx.Select(&rows, `SELECT 'click' AS kind, click_timestamp AS at, partner_id, '' AS currency, is_test, is_bot,
			NULL AS counts_as, 0 AS amount_cents, false AS first FROM clicks WHERE program_id = $1 AND id > $2
		UNION ALL SELECT 'lead', lead_timestamp, 0, '', is_test, false, counts_as, 0, false FROM leads WHERE program_id = $1 AND id > $3
		UNION ALL SELECT 'sale', s.sale_date, s.partner_id, s.currency, s.is_test, false, NULL, s.amount_cents,
			NOT EXISTS (SELECT 1 FROM sales f WHERE f.customer_id = s.customer_id AND f.id < s.id)
		FROM sales s WHERE s.program_id = $1 AND s.id > $4`, r.ProgramID, before.Click, before.Lead, before.Sale); err != nil {
		t.Fatal(err)
	}
	var ds []counting.Delta
	for _, row := range rows {
		var m counting.Measures
		switch row.Kind {
		case "click":
			m = counting.Click(row.Test, row.Bot)
		case "lead":
			class := counting.LeadNowhere
			if row.CountsAs != nil {
				class = *row.CountsAs
			}
			m = counting.LeadMeasures(class)
		case "sale":
			m = counting.Sale(counting.SaleFacts{AmountCents: row.Amount, FirstSale: row.First, Test: row.Test})
		}
		ds = append(ds, counting.Delta{Key: counting.Key{ProgramID: r.ProgramID, Hour: counting.HourOf(row.At), PartnerID: row.Partner,
			Currency: row.Currency}, Measures: m})
	}
	if err := events.Add(context.Background(), tx, ds...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// oracle is the filtered, merged, ordered list computed the slow, obvious way.
func oracle(t *testing.T, db *sqlx.DB, f events.Filter) []string {
	t.Helper()
	q := `SELECT event_type || ':' || id FROM (
		SELECT 'conversion' AS event_type, 0 AS rank, id, sale_date AS ts FROM sales WHERE program_id = $1 AND is_test = $5
		UNION ALL SELECT 'lead', 1, id, lead_timestamp FROM leads WHERE program_id = $1 AND is_test = $5
		UNION ALL SELECT 'click', 2, id, click_timestamp FROM clicks WHERE program_id = $1 AND is_test = $5 AND NOT is_bot) e
		WHERE ($2 = '' OR event_type = $2) AND ($3::timestamptz IS NULL OR ts >= $3) AND ($4::timestamptz IS NULL OR ts <= $4)
		ORDER BY ts DESC, rank, id DESC`
	var out []string
	if err := db.Select(&out, q, f.ProgramID, f.Type, f.From, f.To, f.Test); err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(list []events.Event) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = fmt.Sprintf("%s:%d", e.Type, e.ID)
	}
	return out
}

// Every page of every filter matches the oracle exactly, and total counts the whole filtered set.
func TestListMatchesTheOracle(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)
	fill(t, d.DB, r, 600, end, 30*time.Hour)
	fill(t, d.DB, other, 100, end, 30*time.Hour)
	at := func(s string) *time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return &v
	}
	filters := []events.Filter{
		{ProgramID: r.ProgramID},
		{ProgramID: r.ProgramID, Type: events.Click},
		{ProgramID: r.ProgramID, Type: events.Lead},
		{ProgramID: r.ProgramID, Type: events.Conversion},
		{ProgramID: r.ProgramID, From: at("2026-11-19T22:17:30Z")},
		{ProgramID: r.ProgramID, To: at("2026-11-20T03:45:10Z")},
		{ProgramID: r.ProgramID, From: at("2026-11-20T01:10:00Z"), To: at("2026-11-20T01:50:00Z")},
		{ProgramID: r.ProgramID, Type: events.Lead, From: at("2026-11-19T12:00:00Z"), To: at("2026-11-20T12:00:00Z")},
		{ProgramID: r.ProgramID, From: at("2026-11-21T00:00:00Z")},
		{ProgramID: r.ProgramID, Test: true},
		{ProgramID: r.ProgramID, Test: true, Type: events.Lead, From: at("2026-11-19T22:17:30Z")},
	}
	for _, f := range filters {
		// The filters read the same rows and nothing writes them any more: they run side by side.
		t.Run(fmt.Sprintf("%s/%v/%v/test=%v", f.Type, f.From, f.To, f.Test), func(t *testing.T) {
			t.Parallel()
			want := oracle(t, d.DB, f)
			if len(want) == 0 && f.Test {
				t.Fatalf("%+v: the fill left no test events", f)
			}
			for _, size := range []int{1, 7, 10, 100} {
				name := fmt.Sprintf("size%d", size)
				var got []string
				for page := 1; ; page++ {
					p, err := events.List(ctx, d.DB, f, page, size)
					if err != nil {
						t.Fatalf("%s page %d: %v", name, page, err)
					}
					if p.Total != int64(len(want)) {
						t.Fatalf("%s: total %d, want %d", name, p.Total, len(want))
					}
					if len(p.Events) == 0 {
						break
					}
					if len(p.Events) > size {
						t.Fatalf("%s page %d: %d events", name, page, len(p.Events))
					}
					got = append(got, keys(p.Events)...)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// The counts writers add are exact per hour (the events list's) and per day (reports'), before the
// roll-up folds them (the live views) and after (the tables), and events added after a roll-up count on
// top of it (another program's: fill numbers its clicks per program).
func TestCountsFoldExactly(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, d.DB, r, 200, time.Now(), 10*time.Hour)
	checkCounts(t, d.DB, "performance_hourly_live", "performance_program_live")
	if n, err := events.RollUp(ctx, d.DB); err != nil || n == 0 {
		t.Fatalf("roll-up folded %d deltas, %v", n, err)
	}
	var left int
	if err := d.DB.Get(&left, `SELECT count(*) FROM performance_deltas`); err != nil || left != 0 {
		t.Fatalf("%d deltas left after the roll-up, %v", left, err)
	}
	checkCounts(t, d.DB, "performance_hourly", "performance_program_daily")
	other, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, d.DB, other, 60, time.Now(), 3*time.Hour)
	checkCounts(t, d.DB, "performance_hourly_live", "performance_program_live")
}

// checkCounts compares the hourly counts with the rows (by the counting rules), and the daily counts
// with the hours.
func checkCounts(t *testing.T, db *sqlx.DB, hourly, daily string) {
	t.Helper()
	var drift []string
	if err := db.Select(&drift, `
		WITH actual AS (
			SELECT program_id, 'clicks' AS t, date_trunc('hour', click_timestamp) AS h, count(*) AS n FROM clicks WHERE `+counting.ClickRows+` GROUP BY 1, 2, 3
			UNION ALL SELECT program_id, 'leads', date_trunc('hour', lead_timestamp), count(*) FROM leads WHERE `+counting.LeadRows+` GROUP BY 1, 2, 3
			UNION ALL SELECT program_id, 'provisional_leads', date_trunc('hour', lead_timestamp), count(*) FROM leads
				WHERE NOT is_test AND counts_as = 'provisional' GROUP BY 1, 2, 3
			UNION ALL SELECT program_id, 'sales', date_trunc('hour', sale_date), count(*) FROM sales WHERE `+counting.SaleRows+` GROUP BY 1, 2, 3),
		counted AS (
			SELECT program_id, t, hour, sum(n) AS n FROM `+hourly+`
			CROSS JOIN LATERAL (VALUES ('clicks', clicks), ('leads', leads), ('provisional_leads', provisional_leads), ('sales', sales)) v(t, n)
			GROUP BY 1, 2, 3)
		SELECT coalesce(a.t, c.t) || ' ' || coalesce(a.h, c.hour)::text || ' actual ' || coalesce(a.n, 0) || ' counted ' || coalesce(c.n, 0)
		FROM actual a FULL JOIN counted c ON c.program_id = a.program_id AND c.t = a.t AND c.hour = a.h
		WHERE coalesce(a.n, 0) <> coalesce(c.n, 0)`); err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Errorf("%s drifted:\n%v", hourly, drift)
	}
	if err := db.Select(&drift, `
		WITH hourly AS (SELECT program_id, (hour AT TIME ZONE 'UTC')::date AS day, sum(clicks) AS c, sum(leads) AS l,
			sum(provisional_leads) AS p, sum(sales) AS s FROM `+hourly+` GROUP BY 1, 2),
		daily AS (SELECT program_id, day, sum(clicks) AS c, sum(leads) AS l, sum(provisional_leads) AS p, sum(sales) AS s
			FROM `+daily+` GROUP BY 1, 2)
		SELECT coalesce(h.day, c.day)::text FROM hourly h FULL JOIN daily c ON c.program_id = h.program_id AND c.day = h.day
		WHERE (coalesce(h.c, 0), coalesce(h.l, 0), coalesce(h.p, 0), coalesce(h.s, 0)) <>
			(coalesce(c.c, 0), coalesce(c.l, 0), coalesce(c.p, 0), coalesce(c.s, 0))`); err != nil {
		t.Fatal(err)
	}
	if len(drift) > 0 {
		t.Errorf("%s differ from the hours' of %s: %v", daily, hourly, drift)
	}
}

// Daily matches a count of the counted events per UTC day (a provisional lead is listed, not counted), for real and test events, with every day of
// the span present.
func TestDailyMatchesTheList(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)
	fill(t, d.DB, r, 400, end, 50*time.Hour)
	from, to := time.Date(2026, 11, 17, 9, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 1, 0, 0, 0, time.UTC)
	for _, test := range []bool{false, true} {
		days, err := events.Daily(ctx, d.DB, r.ProgramID, test, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(days) != 5 || !days[0].Date.Equal(time.Date(2026, 11, 17, 0, 0, 0, 0, time.UTC)) || !days[4].Date.Equal(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("test=%v: days %+v", test, days)
		}
		want := map[string]int64{}
		for _, k := range oracleDays(t, d.DB, r.ProgramID, test) {
			want[k]++
		}
		got := map[string]int64{}
		var sum int64
		for _, day := range days {
			date := day.Date.Format("2006-01-02")
			for typ, n := range map[string]int64{"click": day.Clicks, "lead": day.Leads, "conversion": day.Conversions} {
				if n != 0 {
					got[typ+"@"+date] = n
					sum += n
				}
			}
		}
		if sum == 0 {
			t.Fatalf("test=%v: no events counted", test)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("test=%v (-want +got):\n%s", test, diff)
		}
	}
}

// oracleDays is "type@day" of every listed event, counted the obvious way.
func oracleDays(t *testing.T, db *sqlx.DB, programID int64, test bool) []string {
	t.Helper()
	var out []string
	err := db.Select(&out, `SELECT event_type || '@' || to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM (
		SELECT 'conversion' AS event_type, sale_date AS ts FROM sales WHERE program_id = $1 AND is_test = $2
		UNION ALL SELECT 'lead', lead_timestamp FROM leads WHERE program_id = $1 AND is_test = $2 AND status = 'settled'
		UNION ALL SELECT 'click', click_timestamp FROM clicks WHERE program_id = $1 AND is_test = $2 AND NOT is_bot) e`, programID, test)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
