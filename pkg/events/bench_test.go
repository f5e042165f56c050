package events_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/reports"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// BenchmarkList measures page 1, a middle page and the last page on a program with
// REFTRACK_BENCH_EVENTS events (default 100 000; docs/performance.md reports 10 000 000) spread over a
// year (each click in its month's partition), readiness, and the disk the clicks take, and logs the query
// plans. REFTRACK_BENCH_MIX=clicks writes clicks only (the partitioned history at 50 000 000 clicks):
//
//	REFTRACK_BENCH_EVENTS=10000000 go test -run '^$' -bench List -benchtime 200x -v ./pkg/events
//	REFTRACK_BENCH_MIX=clicks REFTRACK_BENCH_EVENTS=50000000 go test -run '^$' -bench List -benchtime 200x -timeout 1h -v ./pkg/events
//
// It also measures the reports (pkg/reports: a period's performance and its partners' table), whose cost
// is the period's days times its active partners: REFTRACK_BENCH_PARTNERS spreads the events over that
// many partners, each with a link (default 1).
func BenchmarkList(b *testing.B) {
	total := 100_000
	if v := os.Getenv("REFTRACK_BENCH_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		total = n
	}
	d := dbtest.New(b)
	ctx := context.Background()
	seeded, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := benchProgram{Result: seeded}
	// The partners the events are spread over, each with a link: the seeded one and REFTRACK_BENCH_PARTNERS-1 more.
	r.PartnerIDs, r.LinkIDs = []int64{r.PartnerID}, []int64{r.LinkID}
	if v := os.Getenv("REFTRACK_BENCH_PARTNERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("REFTRACK_BENCH_PARTNERS=%q", v)
		}
		for i := 1; i < n; i++ {
			p, err := programs.AddPartner(ctx, d.DB, r.ProgramID, programs.NewPartner{Name: "Bench partner " + strconv.Itoa(i), Email: "bench" + strconv.Itoa(i) + "@example.com"})
			if err != nil {
				b.Fatal(err)
			}
			l, err := programs.CreateLink(ctx, d.DB, r.ProgramID, p.ID, "")
			if err != nil {
				b.Fatal(err)
			}
			r.PartnerIDs, r.LinkIDs = append(r.PartnerIDs, p.ID), append(r.LinkIDs, l.ID)
		}
	}
	// fill(n) writes n clicks, n/2 leads and n/4 sales, of which a few percent are test or bot events.
	start := time.Now()
	end := time.Now().Truncate(time.Hour)
	// The months the year of clicks falls in (the migration made this one and three ahead).
	if _, err := d.DB.Exec(`SELECT clicks_prepare($1::date, 14)`, end.AddDate(-1, 0, -1).Format(time.DateOnly)); err != nil {
		b.Fatal(err)
	}
	const chunk = 1_000_000
	clicksOnly := os.Getenv("REFTRACK_BENCH_MIX") == "clicks"
	n := total * 4 / 7
	if clicksOnly {
		n = total
	}
	// REFTRACK_BENCH_SPAN_DAYS spreads the events over fewer days than a year: 5 000 000 clicks over 36.5
	// days are as many per day as 50 000 000 a year (what readiness's 24-hour counts read).
	span := int64(365 * 24 * 3600)
	if v := os.Getenv("REFTRACK_BENCH_SPAN_DAYS"); v != "" {
		days, err := strconv.ParseFloat(v, 64)
		if err != nil || days <= 0 {
			b.Fatalf("REFTRACK_BENCH_SPAN_DAYS=%q", v)
		}
		span = int64(days * 24 * 3600)
	}
	// Chunks are written by REFTRACK_BENCH_FILL_WORKERS connections at once (default 2, one per core here):
	// the count triggers only append deltas, so concurrent chunks do not wait on each other.
	workers := 2
	if v := os.Getenv("REFTRACK_BENCH_FILL_WORKERS"); v != "" {
		if workers, err = strconv.Atoi(v); err != nil || workers < 1 {
			b.Fatalf("REFTRACK_BENCH_FILL_WORKERS=%q", v)
		}
	}
	offsets := make(chan int, n/chunk+1)
	for done := 0; done < n; done += chunk {
		offsets <- done
	}
	close(offsets)
	failed := make(chan error, workers)
	var fill sync.WaitGroup
	for range workers {
		fill.Go(func() {
			for done := range offsets {
				if err := fillChunk(d, r, done, min(chunk, n-done), n, span, end, clicksOnly); err != nil {
					failed <- err
					return
				}
			}
		})
	}
	fill.Wait()
	close(failed)
	if err := <-failed; err != nil {
		b.Fatal(err)
	}
	if err := countFilled(d, r.ProgramID); err != nil {
		b.Fatal(err)
	}
	// The server folds the count deltas in every second; the reads below then see at most a second's worth.
	for {
		folded, err := events.RollUp(ctx, d.DB)
		if err != nil {
			b.Fatal(err)
		}
		if folded == 0 {
			break
		}
	}
	if _, err := d.DB.Exec(`VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	var listed int64
	if err := d.DB.Get(&listed, `SELECT sum(clicks + leads + provisional_leads + sales) FROM performance_hourly_live WHERE program_id = $1`, r.ProgramID); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events written (%d listed) in %v", total, listed, time.Since(start).Round(time.Second))
	var clickBytes, clickRows, partitions int64
	if err := d.DB.QueryRow(`SELECT sum(pg_total_relation_size(i.inhrelid)), count(*) FROM pg_inherits i WHERE i.inhparent = 'clicks'::regclass`).Scan(&clickBytes, &partitions); err != nil {
		b.Fatal(err)
	}
	if err := d.DB.Get(&clickRows, `SELECT count(*) FROM clicks`); err != nil {
		b.Fatal(err)
	}
	b.Logf("clicks: %d rows in %d monthly partitions, %.1f GB with their indexes, %.0f MB per million clicks",
		clickRows, partitions, float64(clickBytes)/1e9, float64(clickBytes)/1e6/(float64(clickRows)/1e6))

	size := 100 // the largest page the API serves
	last := int((listed + int64(size) - 1) / int64(size))
	for _, tc := range []struct {
		name string
		f    events.Filter
		page int
	}{
		{"page1", events.Filter{ProgramID: r.ProgramID}, 1},
		{"middle", events.Filter{ProgramID: r.ProgramID}, last / 2},
		{"last", events.Filter{ProgramID: r.ProgramID}, last},
		{"conversions_middle", events.Filter{ProgramID: r.ProgramID, Type: events.Conversion}, last / 14},
		{"week_of_clicks_page3", events.Filter{ProgramID: r.ProgramID, Type: events.Click, From: ptr(end.Add(-7 * 24 * time.Hour).Add(17 * time.Minute)), To: ptr(end.Add(-30 * time.Minute))}, 3},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if clicksOnly && tc.f.Type == events.Conversion {
				b.Skip("clicks only")
			}
			for b.Loop() {
				p, err := events.List(ctx, d.DB, tc.f, tc.page, size)
				if err != nil || len(p.Events) == 0 {
					b.Fatalf("page %d: %d events, %v", tc.page, len(p.Events), err)
				}
			}
		})
	}
	// Readiness (the dashboard's and the API key's): counts and the last events.
	b.Run("readiness", func(b *testing.B) {
		for b.Loop() {
			if _, err := readiness.Compute(ctx, d.DB, r.ProgramID, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The dashboard's chart (daily counts) and its test-data view (test events are counted, not kept).
	for _, days := range []int{30, 366} {
		b.Run("daily_"+strconv.Itoa(days), func(b *testing.B) {
			for b.Loop() {
				list, err := events.Daily(ctx, d.DB, r.ProgramID, false, end.AddDate(0, 0, 1-days), end)
				if err != nil || len(list) != days {
					b.Fatalf("%d days, %v", len(list), err)
				}
			}
		})
	}
	// The reports: the overview's performance (totals, the previous period, the days) and its partners'
	// table, sorted by revenue, at the largest page.
	for _, p := range []reports.Period{reports.Month, reports.Quarter, reports.All} {
		b.Run("performance_"+string(p), func(b *testing.B) {
			for b.Loop() {
				perf, err := reports.Program(ctx, d.DB, r.ProgramID, p, "USD", end)
				if err != nil || perf.Totals.Clicks == 0 {
					b.Fatalf("%+v, %v", perf.Totals, err)
				}
			}
		})
		b.Run("performance_partners_"+string(p), func(b *testing.B) {
			for b.Loop() {
				l, err := reports.Partners(ctx, d.DB, r.ProgramID, p, "USD", "revenue_cents", true, 100, end)
				if err != nil || len(l.Partners) == 0 {
					b.Fatalf("%d partners, %v", len(l.Partners), err)
				}
			}
		})
	}
	b.Run("test_page1", func(b *testing.B) {
		for b.Loop() {
			if p, err := events.List(ctx, d.DB, events.Filter{ProgramID: r.ProgramID, Test: true}, 1, size); err != nil || len(p.Events) == 0 {
				b.Fatalf("%d test events, %v", len(p.Events), err)
			}
		}
	})
	if testing.Verbose() {
		explain(b, d, r.ProgramID, last/2, size)
	}
}

func ptr(t time.Time) *time.Time { return &t }

// countFilled adds what the filled rows count for, as their writers would (pkg/counting's rules, through
// performance_add), summed per hour and partner: a delta per row, as the server adds them, would take
// longer than the fill at this scale.
func countFilled(d *dbtest.Database, programID int64) error {
	_, err := d.DB.Exec(`SELECT performance_add(array_agg(program_id), array_agg(hour), array_agg(partner_id), array_agg(currency),
			array_agg(clicks), array_agg(bot_clicks), array_agg(leads), array_agg(provisional_leads), array_agg(sales), NULL,
			array_agg(revenue), NULL)
		FROM (SELECT program_id, date_trunc('hour', click_timestamp, 'UTC') AS hour, partner_id, '' AS currency,
				count(*) FILTER (WHERE NOT is_bot) AS clicks, count(*) FILTER (WHERE is_bot) AS bot_clicks, 0::bigint AS leads,
				0::bigint AS provisional_leads, 0::bigint AS sales, 0::bigint AS revenue
			FROM clicks WHERE program_id = $1 AND NOT is_test GROUP BY 1, 2, 3
			UNION ALL SELECT program_id, date_trunc('hour', lead_timestamp, 'UTC'), 0, '', 0, 0,
				count(*) FILTER (WHERE counts_as = 'lead'), count(*) FILTER (WHERE counts_as = 'provisional'), 0, 0
			FROM leads WHERE program_id = $1 AND NOT is_test GROUP BY 1, 2
			UNION ALL SELECT program_id, date_trunc('hour', sale_date, 'UTC'), partner_id, currency, 0, 0, 0, 0, count(*), sum(amount_cents)
			FROM sales WHERE program_id = $1 AND NOT is_test GROUP BY 1, 2, 3, 4) x`, programID)
	return err
}

// benchProgram is the seeded program and the partners (with a link each) its events are spread over.
type benchProgram struct {
	seed.Result
	PartnerIDs, LinkIDs []int64
}

// fillChunk writes count clicks (and half as many leads, a quarter as many sales) numbered from offset,
// spread over the span seconds before end. Clicks are numbered in the order they happened, as a server
// records them, so the n clicks are evenly spaced over the span and a chunk's clicks are one stretch of
// it, written in time order: its inserts land together at one end of the indexes (a fill that scattered
// each chunk over the year ran at 0.3–0.5 M clicks a minute at 30 M, each insert a random index page).
func fillChunk(d *dbtest.Database, r benchProgram, offset, count, n int, span int64, end time.Time, clicksOnly bool) error {
	queries := []string{
		// Each click in its month, with the ids the server gives (the month in the click_id and the id),
		// and the texts a browser sends (user agent, pages, device).
		`INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url,
			page_url, referrer_url, user_agent, device_type, device_os, browser_name, geo_country, ip, visitor_hash, is_test, is_bot)
		 SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, to_char(m.month, 'YYMM') || lpad('c' || g, 22, '0'),
		        $1, ($2::bigint[])[g % cardinality($2::bigint[]) + 1], ($3::bigint[])[g % cardinality($3::bigint[]) + 1], t.ts, 'https://shop.example.com/?aff=x', 'https://shop.example.com/p/' || (g % 500),
		        'https://news.example.org/', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
		        'desktop', 'Windows', 'Chrome', 'DE', ('10.' || (g % 250) || '.' || (g / 250 % 250) || '.1')::inet,
		        sha256(g::text::bytea), g % 53 = 0, g % 61 = 0
		 FROM generate_series($5::bigint + 1, $5::bigint + $6) g
		 CROSS JOIN LATERAL (SELECT $4::timestamptz - ($7 - g::bigint * $7 / $8) * interval '1 second' AS ts) t
		 CROSS JOIN LATERAL (SELECT date_trunc('month', t.ts AT TIME ZONE 'UTC')::date AS month) m`,
		`INSERT INTO leads (program_id, click_id, customer_key, status, source, lead_timestamp, is_test, counts_as)
		 SELECT $1, 'c' || g, 'k' || g, 'provisional', 'browser', $4::timestamptz - ((g::bigint * 6007) % $7) * interval '1 second', g % 47 = 0,
		        CASE WHEN g % 47 <> 0 THEN 'provisional' END
		 FROM generate_series($5::bigint / 2 + 1, ($5::bigint + $6) / 2) g WHERE cardinality($2::bigint[]) > 0 AND cardinality($3::bigint[]) > 0`,
		`INSERT INTO customers (program_id, customer_key, partner_id, status) SELECT $1, 'bench', ($3::bigint[])[1], 'converted'
		 WHERE cardinality($2::bigint[]) > 0 AND $4::timestamptz IS NOT NULL AND $5::bigint >= 0 AND $6::bigint > 0 AND $7::bigint > 0 ON CONFLICT DO NOTHING`,
		`INSERT INTO sales (program_id, customer_id, partner_id, processor_event_id, amount_cents, currency, source, sale_date, is_test)
		 SELECT $1, (SELECT id FROM customers WHERE program_id = $1 AND customer_key = 'bench'), ($3::bigint[])[g % cardinality($3::bigint[]) + 1], 'txn_' || g, 1000, 'USD', 'api',
		        $4::timestamptz - ((g::bigint * 4001) % $7) * interval '1 second', g % 43 = 0
		 FROM generate_series($5::bigint / 4 + 1, ($5::bigint + $6) / 4) g WHERE cardinality($2::bigint[]) > 0`,
	}
	if clicksOnly {
		queries = queries[:1]
	}
	for i, q := range queries {
		args := []any{r.ProgramID, pq.Array(r.LinkIDs), pq.Array(r.PartnerIDs), end, offset, count, span}
		if i == 0 {
			args = append(args, n)
		}
		if _, err := d.DB.Exec(q, args...); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// explain logs the plans of the two queries behind a deep page.
func explain(b *testing.B, d *dbtest.Database, programID int64, page, size int) {
	b.Helper()
	var plan []string
	if err := d.DB.Select(&plan, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
		SELECT day::timestamp AT TIME ZONE 'UTC' AS start, sum(clicks + leads + provisional_leads + sales)::bigint AS n
		FROM performance_program_live WHERE program_id = $1 GROUP BY day HAVING sum(clicks + leads + provisional_leads + sales) <> 0
		ORDER BY day DESC`, programID); err != nil {
		b.Fatal(err)
	}
	b.Logf("daily counts (the total and the page's day):\n%s", strings.Join(plan, "\n"))
	plan = nil
	if err := d.DB.Select(&plan, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
		SELECT hour AS start, sum(clicks + leads + provisional_leads + sales)::bigint AS n FROM performance_hourly_live
		WHERE program_id = $1 AND hour >= $2 AND hour < $2 + interval '1 day'
		GROUP BY hour HAVING sum(clicks + leads + provisional_leads + sales) <> 0 ORDER BY hour DESC`, programID, time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -180)); err != nil {
		b.Fatal(err)
	}
	b.Logf("hourly counts of that day:\n%s", strings.Join(plan, "\n"))
	p, err := events.List(context.Background(), d.DB, events.Filter{ProgramID: programID}, page, size)
	if err != nil || len(p.Events) == 0 {
		b.Fatal(err)
	}
	upper := p.Events[0].Timestamp.Truncate(time.Hour).Add(time.Hour)
	plan = nil
	if err := d.DB.Select(&plan, `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM (
		(SELECT id, sale_date AS ts, 0 AS rank FROM sales WHERE program_id = $1 AND NOT is_test AND sale_date < $2 ORDER BY sale_date DESC, id DESC LIMIT 1000)
		UNION ALL (SELECT id, lead_timestamp, 1 FROM leads WHERE program_id = $1 AND NOT is_test AND lead_timestamp < $2 ORDER BY lead_timestamp DESC, id DESC LIMIT 1000)
		UNION ALL (SELECT id, click_timestamp, 2 FROM clicks WHERE program_id = $1 AND NOT is_test AND NOT is_bot AND click_timestamp < $2 ORDER BY click_timestamp DESC, id DESC LIMIT 1000)
		) e ORDER BY ts DESC, rank, id DESC OFFSET 500 LIMIT 50`, programID, upper); err != nil {
		b.Fatal(err)
	}
	b.Logf("merged page scan (deep page %d, its hour's end %s):\n%s", page, upper.Format(time.RFC3339), strings.Join(plan, "\n"))
}
