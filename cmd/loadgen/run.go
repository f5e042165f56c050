package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/seed"
)

// Anchors.
const (
	anchorInsert = "pgbench single-row INSERT, 64 clients"
	anchorTPCB   = "pgbench TPC-B-like, 16 clients"
)

// A route's concurrency is its anchor's. click-ua is the click route again, each request with a browser
// User-Agent of its own (browsers) where click cycles through a few.
// sale-hook is the sale route again, every program with a webhook endpoint (hooks.go); sale-events the same
// with the endpoints disabled (the events written, nothing sent), measured just before it.
var routeConns = map[string]int{"click": 64, "click-ua": 64, "lead": 64, "sale": 16, "refund": 16, "sale-hook": 16, "sale-events": 16}
var routeAnchor = map[string]string{"click": anchorInsert, "click-ua": anchorInsert, "lead": anchorInsert, "sale": anchorTPCB, "refund": anchorTPCB,
	"sale-hook": anchorTPCB, "sale-events": anchorTPCB}

// routePath is the route a load drives, whose batch metrics it reads.
func routePath(load string) string {
	switch load {
	case "click-ua":
		return "click"
	case "sale-hook", "sale-events":
		return "sale"
	}
	return load
}

// load is one route driven by one tool.
type load struct {
	route, tool string
	conns       int
	st          *stats
	cpu         time.Duration // reftrackd's CPU time (user + system) during the load
	batch       batchStats    // the batches written during the load (clicks, leads, sales and refunds)
	machine     cpuSplit      // CPU time of each group of processes during the load
}

// cpuMsPer1000 is the CPU time of group per 1,000 requests, in milliseconds.
func (l load) cpuMsPer1000(group string) float64 {
	n := l.st.ok + l.st.errors
	if n == 0 {
		return 0
	}
	return float64(l.machine[group].Microseconds()) / float64(n)
}

func (l load) cpuPer1000() float64 {
	n := l.st.ok + l.st.errors
	if n == 0 {
		return 0
	}
	return float64(l.cpu.Microseconds()) / 1000 / float64(n) * 1000
}

type runResult struct {
	anchors map[string]float64
	loads   []load
	peakRSS int64 // bytes
	notes   []string
}

// fixture is what a run's loads use.
type fixture struct {
	base     string
	main     seed.Result
	sellers  []seller // programs with customers, for sales and refunds
	clickIDs []string // clicks acknowledged by the Go click load, for leads
	sold     []sold   // sales acknowledged by the Go sale load, for refunds
}

type seller struct {
	key       string
	customers []string
	programID int64
	account   string // the program's owner's token (the sale-hook load's endpoints)
	endpoint  int64
}

type sold struct{ key, txn string }

func benchRun(ctx context.Context, o options, run int) (runResult, error) {
	res := runResult{anchors: map[string]float64{}}
	name := "reftrack_bench"
	dsn, err := withDatabase(o.adminURL, name)
	if err != nil {
		return res, err
	}
	if err := recreate(ctx, o.adminURL, name); err != nil {
		return res, err
	}
	// The run's database goes when the run ends (the server and the pool are gone by then).
	defer dropDatabase(context.WithoutCancel(ctx), o.adminURL, name)
	pool, err := db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 8})
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if err := db.MigrateUp(ctx, pool.DB); err != nil {
		return res, err
	}
	if err := pgbenchInit(ctx, dsn); err != nil {
		return res, err
	}
	srv, err := startServer(o, dsn)
	if err != nil {
		return res, err
	}
	defer srv.stop()

	f := &fixture{base: srv.base}
	if f.main, err = seed.Run(ctx, pool, seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"}); err != nil {
		return res, err
	}
	if o.has(o.routes, "sale") || o.has(o.routes, "refund") || o.has(o.routes, "sale-hook") {
		if f.sellers, err = sellers(ctx, pool, f.base, o.programs); err != nil {
			return res, err
		}
	}

	measure := func(route, tool string, drive func(conns int) (*stats, error)) error {
		wanted := o.has(o.routes, route) || (route == "sale-events" && o.has(o.routes, "sale-hook")) // sale-hook's first half
		if !wanted || !o.has(o.tools, tool) {
			return nil
		}
		// Statistics current before each load, as autovacuum keeps them in a database that has run for a
		// while: otherwise whether it happened to reach this fresh database between two loads (it visits
		// the server's databases in turn) decided the plans the next load's functions made, and the refund
		// load ran at one of two speeds.
		if _, err := pool.ExecContext(ctx, `ANALYZE`); err != nil {
			return err
		}
		if _, err := pool.ExecContext(ctx, `CHECKPOINT`); err != nil {
			return err
		}
		stopProfile := srv.profile(o.profile, fmt.Sprintf("run%d-%s-%s", run, route, tool), o.duration)
		cpu0, b0, m0 := srv.cpu(), srv.batches(routePath(route)), sampleCPU()
		st, err := drive(routeConns[route])
		cpu, b, m := srv.cpu()-cpu0, srv.batches(routePath(route)).minus(b0), sampleCPU().minus(m0)
		stopProfile()
		if err != nil {
			return fmt.Errorf("%s (%s): %w", route, tool, err)
		}
		res.loads = append(res.loads, load{route: route, tool: tool, conns: routeConns[route], st: st, cpu: cpu, batch: b, machine: m})
		return nil
	}

	if o.has(o.routes, "click") || o.has(o.routes, "click-ua") || o.has(o.routes, "lead") {
		if res.anchors[anchorInsert], err = pgbenchInsert(ctx, dsn, o.duration); err != nil {
			return res, err
		}
	}
	// Clicks first with the Go generator: its acknowledged click ids feed the lead load.
	if err := measure("click", "go", func(c int) (*stats, error) {
		st, ids, err := goClicks(ctx, pool, f, c, o.duration, fewAgents)
		f.clickIDs = ids
		return st, err
	}); err != nil {
		return res, err
	}
	if err := measure("click", "wrk", func(c int) (*stats, error) { return wrkClicks(ctx, pool, f, c, o.duration, run) }); err != nil {
		return res, err
	}
	if err := measure("click-ua", "go", func(c int) (*stats, error) {
		st, _, err := goClicks(ctx, pool, f, c, o.duration, o.agents.at)
		return st, err
	}); err != nil {
		return res, err
	}
	if o.has(o.routes, "lead") && len(f.clickIDs) == 0 {
		if f.clickIDs, err = clickIDs(f, 20000); err != nil {
			return res, err
		}
	}
	if err := measure("lead", "go", func(c int) (*stats, error) { return goLeads(ctx, pool, f, c, o.duration) }); err != nil {
		return res, err
	}
	if o.has(o.routes, "sale") || o.has(o.routes, "refund") || o.has(o.routes, "sale-hook") {
		if res.anchors[anchorTPCB], err = pgbenchTPCB(ctx, dsn, o.duration); err != nil {
			return res, err
		}
	}
	if err := measure("sale", "go", func(c int) (*stats, error) { return goSales(ctx, pool, f, c, o.duration) }); err != nil {
		return res, err
	}
	if err := measure("sale", "wrk", func(c int) (*stats, error) { return wrkSales(ctx, pool, f, c, o.duration, run) }); err != nil {
		return res, err
	}
	if o.has(o.routes, "refund") && len(f.sold) == 0 {
		res.notes = append(res.notes, "refunds need the Go sale load's sales: run it too")
	}
	if err := measure("refund", "go", func(c int) (*stats, error) { return goRefunds(ctx, pool, f, c, o.duration) }); err != nil {
		return res, err
	}
	// Last: from here on every seller's program has a webhook endpoint, which the loads above must not.
	if o.has(o.routes, "sale-hook") && o.has(o.tools, "go") {
		rc, err := startHookReceiver()
		if err != nil {
			return res, err
		}
		defer rc.srv.Close()
		if err := addEndpoints(f, rc.url); err != nil {
			return res, err
		}
		// First with the endpoints disabled: the events are written with each sale, nothing is sent (the
		// outbox's own cost); then enabled, the deliveries going out while the sales come in.
		if err := setEndpoints(f, false); err != nil {
			return res, err
		}
		if err := measure("sale-events", "go", func(c int) (*stats, error) { return goSalesPrefixed(ctx, pool, f, c, o.duration, "events-") }); err != nil {
			return res, err
		}
		if err := setEndpoints(f, true); err != nil {
			return res, err
		}
		start := time.Now()
		if err := measure("sale-hook", "go", func(c int) (*stats, error) { return goSalesPrefixed(ctx, pool, f, c, o.duration, "hook-") }); err != nil {
			return res, err
		}
		h, err := measureHooks(ctx, pool, f, rc, start, o.duration)
		if err != nil {
			return res, err
		}
		res.notes = append(res.notes, h.String())
	}
	res.peakRSS = srv.peakRSS()
	return res, nil
}

// sellers makes n programs, each with three customers (a click and a server-mode lead each), for the
// sale and refund loads: 120 sales and refunds per key and minute, so n keys allow 2n per second.
func sellers(ctx context.Context, pool *sqlx.DB, base string, n int) ([]seller, error) {
	out := make([]seller, n)
	client := &http.Client{Timeout: 30 * time.Second}
	errs := make(chan error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := int(next.Add(1)) - 1; p < n; p = int(next.Add(1)) - 1 {
				r, err := seed.Run(ctx, pool, seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
				if err != nil {
					errs <- err
					return
				}
				out[p].key, out[p].programID, out[p].account = r.APIKey, r.ProgramID, r.AccountToken
				for c := range 3 {
					var click struct {
						ClickID string `json:"click_id"`
					}
					if err := post(client, base+"/api/v1/track/click", fmt.Sprintf(`{"affiliate_url":%q}`, r.AffiliateURL),
						map[string]string{"User-Agent": userAgents[0], "X-Forwarded-For": randomIP()}, &click); err != nil {
						errs <- err
						return
					}
					ck := fmt.Sprintf("bench-%d-%d", p, c)
					if err := post(client, base+"/api/v1/track/lead", fmt.Sprintf(`{"click_id":%q,"customer_key":%q}`, click.ClickID, ck),
						map[string]string{"Authorization": "Bearer " + r.APIKey, "X-Forwarded-For": randomIP()}, nil); err != nil {
						errs <- err
						return
					}
					out[p].customers = append(out[p].customers, ck)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return out, <-errs
}

// clickIDs records n clicks for the lead load when the click load did not run.
func clickIDs(f *fixture, n int) ([]string, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	ids := make([]string, 0, n)
	for range n {
		var out struct {
			ClickID string `json:"click_id"`
		}
		if err := post(client, f.base+"/api/v1/track/click", fmt.Sprintf(`{"affiliate_url":%q}`, f.main.AffiliateURL),
			map[string]string{"User-Agent": userAgents[0], "X-Forwarded-For": randomIP()}, &out); err != nil {
			return nil, err
		}
		ids = append(ids, out.ClickID)
	}
	return ids, nil
}

// fewAgents cycles through a few browser User-Agents, as the click load always has.
func fewAgents(i uint64) string { return userAgents[i%uint64(len(userAgents))] }

// goClicks drives the click route, each request from a visitor of its own with User-Agent agent(i), checks
// that every acknowledged click is stored, and returns their ids.
func goClicks(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration, agent func(uint64) string) (*stats, []string, error) {
	var (
		mu  sync.Mutex
		ids = map[string]bool{}
	)
	body := fmt.Sprintf(`{"affiliate_url":%q,"page_url":%q}`, f.main.AffiliateURL, f.main.AffiliateURL)
	st := drive(conns, d, func(client *http.Client, i uint64) error {
		b, err := send(client, f.base+"/api/v1/track/click", body, http.Header{
			"User-Agent": {agent(i)}, "X-Forwarded-For": {randomIP()}})
		if err != nil {
			return err
		}
		id := member(b, "click_id")
		mu.Lock()
		ids[id] = true
		mu.Unlock()
		return nil
	})
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	if stored := count(ctx, pool, `SELECT count(*) FROM clicks WHERE click_id = ANY($1)`, pq.Array(list)); stored != len(list) {
		return nil, nil, fmt.Errorf("%d distinct clicks acknowledged but only %d stored", len(list), stored)
	}
	return st, list, nil
}

// goLeads drives server-mode leads: each binds a new customer key to one of the acknowledged clicks.
func goLeads(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration) (*stats, error) {
	auth := "Bearer " + f.main.APIKey
	var acked atomic.Int64
	st := drive(conns, d, func(client *http.Client, i uint64) error {
		body := fmt.Sprintf(`{"click_id":%q,"customer_key":"lead-%d","email":"lead-%d@example.com"}`, f.clickIDs[i%uint64(len(f.clickIDs))], i, i)
		if _, err := send(client, f.base+"/api/v1/track/lead", body, http.Header{"Authorization": {auth}, "X-Forwarded-For": {randomIP()}}); err != nil {
			return err
		}
		acked.Add(1)
		return nil
	})
	if stored := count(ctx, pool, `SELECT count(*) FROM leads l JOIN customers c ON c.id = l.customer_id
		WHERE c.customer_key LIKE 'lead-%' AND l.status = 'settled'`); int64(stored) < acked.Load() {
		return nil, fmt.Errorf("%d leads acknowledged but only %d stored", acked.Load(), stored)
	}
	return st, nil
}

// goSales drives sales with fresh transaction ids over every seller's key and customers, each paying a
// commission, and checks that every acknowledged sale is stored with it; their sales feed the refund load.
func goSales(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration) (*stats, error) {
	st, err := goSalesPrefixed(ctx, pool, f, conns, d, "go-")
	if err == nil {
		rand.Shuffle(len(f.sold), func(i, j int) { f.sold[i], f.sold[j] = f.sold[j], f.sold[i] })
	}
	return st, err
}

// goSalesPrefixed is goSales with transaction ids prefix<n>, keeping the acknowledged sales in f.sold.
func goSalesPrefixed(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration, prefix string) (*stats, error) {
	return goSalesPaced(ctx, pool, f, conns, d, prefix, nil)
}

// goSalesPaced is goSalesPrefixed where each sale first waits for a tick of pace (nil: as fast as it can).
func goSalesPaced(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration, prefix string, pace <-chan time.Time) (*stats, error) {
	var (
		mu    sync.Mutex
		acked []sold
	)
	n := uint64(len(f.sellers))
	st := drive(conns, d, func(client *http.Client, i uint64) error {
		s := f.sellers[i%n]
		if pace != nil {
			<-pace
		}
		txn := fmt.Sprintf("%s%d", prefix, i)
		body := fmt.Sprintf(`{"transaction_id":%q,"amount_cents":%d,"customer_key":%q}`, txn, 1000+i%5000, s.customers[(i/n)%uint64(len(s.customers))])
		if _, err := send(client, f.base+"/api/v1/track/sale", body, http.Header{"Authorization": {"Bearer " + s.key}}); err != nil {
			return err
		}
		mu.Lock()
		acked = append(acked, sold{s.key, txn})
		mu.Unlock()
		return nil
	})
	if stored := count(ctx, pool, `SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id WHERE s.processor_event_id LIKE $1`,
		prefix+"%"); stored < len(acked) {
		return nil, fmt.Errorf("%d sales acknowledged but only %d stored with a commission", len(acked), stored)
	}
	f.sold = acked
	return st, nil
}

// goRefunds refunds the Go sale load's sales in full, each once; it stops early when they run out.
func goRefunds(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration) (*stats, error) {
	// driveN's limit 0 is no limit: with no sale to refund, the load would index past them.
	if len(f.sold) == 0 {
		return nil, fmt.Errorf("no sale of the sale load to refund")
	}
	var acked atomic.Int64
	st := driveN(conns, d, uint64(len(f.sold)), func(client *http.Client, i uint64) error {
		s := f.sold[i]
		if _, err := send(client, f.base+"/api/v1/track/refund", `{"transaction_id":"`+s.txn+`"}`,
			http.Header{"Authorization": {"Bearer " + s.key}}); err != nil {
			return err
		}
		acked.Add(1)
		return nil
	})
	if stored := count(ctx, pool, `SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id
		WHERE s.processor_event_id LIKE 'go-%' AND s.refunded_amount_cents = s.amount_cents AND c.status = 'reversed'`); int64(stored) < acked.Load() {
		return nil, fmt.Errorf("%d refunds acknowledged but only %d sales refunded with their commission reversed", acked.Load(), stored)
	}
	return st, nil
}

// wrkClicks drives the click route with wrk: each request from a visitor of its own.
func wrkClicks(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration, run int) (*stats, error) {
	before := count(ctx, pool, `SELECT count(*) FROM clicks`)
	st, err := runWrk(f.base, clickScript(f.main.AffiliateURL), conns, d)
	if err != nil {
		return nil, err
	}
	// Every request came from its own visitor, so every acknowledged click is a new row.
	if stored := count(ctx, pool, `SELECT count(*) FROM clicks`) - before; stored < st.ok {
		return nil, fmt.Errorf("%d clicks acknowledged but only %d stored", st.ok, stored)
	}
	return st, nil
}

// wrkSales drives the sale route with wrk over the same keys and customers as goSales.
func wrkSales(ctx context.Context, pool *sqlx.DB, f *fixture, conns int, d time.Duration, run int) (*stats, error) {
	st, err := runWrk(f.base, saleScript(f.sellers), conns, d)
	if err != nil {
		return nil, err
	}
	if stored := count(ctx, pool, `SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id WHERE s.processor_event_id LIKE 'wrk-%'`); stored < st.ok {
		return nil, fmt.Errorf("%d sales acknowledged but only %d stored with a commission", st.ok, stored)
	}
	return st, nil
}

func (r runResult) print(run int) {
	fmt.Printf("## Run %d\n\n", run)
	for _, a := range []string{anchorInsert, anchorTPCB} {
		if v, ok := r.anchors[a]; ok {
			fmt.Printf("- %s: **%.0f tps**\n", a, v)
		}
	}
	fmt.Println()
	fmt.Println("| route | load | connections | requests/s | p50 | p99 | max | errors | anchor tps | ratio | server CPU ms per 1,000 | per commit | ms per commit |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range r.loads {
		anchor := r.anchors[routeAnchor[l.route]]
		perCommit, msPerCommit := "", ""
		if l.batch.count > 0 {
			perCommit, msPerCommit = fmt.Sprintf("%.1f", l.batch.size/l.batch.count), fmt.Sprintf("%.1f", 1000*l.batch.seconds/l.batch.count)
		}
		fmt.Printf("| %s | %s | %d | %.0f | %s | %s | %s | %d | %.0f | %.2f× | %.0f | %s | %s |\n", l.route, l.tool, l.conns, l.st.rate(),
			l.st.pct(50), l.st.pct(99), l.st.pct(100), l.st.errors, anchor, l.st.rate()/anchor, l.cpuPer1000(), perCommit, msPerCommit)
	}
	if slices.ContainsFunc(r.loads, func(l load) bool { return l.route == "click-ua" }) {
		fmt.Printf("\nclick: %d browser User-Agents in turn, nearly always found in the server's User-Agent cache. "+
			"click-ua: the same route, each request with a browser User-Agent of its own (a real one with its last "+
			"version number varied), so each is parsed anew.\n", len(userAgents))
	}
	fmt.Printf("\nreftrackd's peak RSS: **%.0f MiB**. Every acknowledged event was found stored after each load.\n\n", float64(r.peakRSS)/(1<<20))
	fmt.Println("Where the machine's CPU went, in ms per 1,000 requests:")
	fmt.Println()
	fmt.Println("| route | load | reftrackd | PostgreSQL | load generator | other |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, l := range r.loads {
		fmt.Printf("| %s | %s | %.0f | %.0f | %.0f | %.0f |\n", l.route, l.tool, l.cpuMsPer1000("reftrackd"), l.cpuMsPer1000("postgres"),
			l.cpuMsPer1000("load"), l.cpuMsPer1000("other"))
	}
	fmt.Println()
	for _, n := range r.notes {
		fmt.Println("Note:", n)
	}
}

// printSpread summarises several runs: each route and tool's ratio and p99, lowest to highest.
func printSpread(runs []runResult) {
	fmt.Printf("## Spread over %d runs\n\n", len(runs))
	fmt.Println("| route | load | ratio to anchor (min – max) | requests/s (min – max) | p99 (min – max) | CPU ms per 1,000 (min – max) |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, l := range runs[0].loads {
		var ratio, rate, cpu []float64
		var p99 []time.Duration
		for _, r := range runs {
			if i >= len(r.loads) {
				continue
			}
			x := r.loads[i]
			rate = append(rate, x.st.rate())
			ratio = append(ratio, x.st.rate()/r.anchors[routeAnchor[x.route]])
			cpu = append(cpu, x.cpuPer1000())
			p99 = append(p99, x.st.quantile(99))
		}
		fmt.Printf("| %s | %s | %.2f× – %.2f× | %.0f – %.0f | %s – %s | %.0f – %.0f |\n", l.route, l.tool,
			minOf(ratio), maxOf(ratio), minOf(rate), maxOf(rate), ms(minOf(p99)), ms(maxOf(p99)), minOf(cpu), maxOf(cpu))
	}
	var rss []float64
	for _, r := range runs {
		rss = append(rss, float64(r.peakRSS)/(1<<20))
	}
	fmt.Printf("\nPeak RSS: %.0f – %.0f MiB.\n", minOf(rss), maxOf(rss))
}

func minOf[T int64 | float64 | time.Duration](v []T) T { return slices.Min(v) }
func maxOf[T int64 | float64 | time.Duration](v []T) T { return slices.Max(v) }

func withDatabase(dsn, name string) (string, error) {
	i := strings.LastIndex(dsn, "/")
	q := strings.Index(dsn, "?")
	if i < 0 {
		return "", fmt.Errorf("admin URL %q has no database", dsn)
	}
	if q < 0 {
		return dsn[:i+1] + name, nil
	}
	return dsn[:i+1] + name + dsn[q:], nil
}

func tempFile(dir, name, body string) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, []byte(body), 0o644)
}
