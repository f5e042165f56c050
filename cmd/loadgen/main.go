// Command loadgen is the load benchmark behind `make bench`: it makes a fresh database, starts the real
// reftrackd on it, drives POST /api/v1/track/click (and /sale) over real HTTP at several concurrency
// levels, measures the same machine's raw single-row INSERT rate with pgbench, and prints a Markdown
// report.
//
// Requests come from many client IPs (X-Forwarded-For through a trusted proxy range) and a small set of
// browser User-Agents, as real traffic does, so the per-IP rate limit and the repeat-visitor rule apply
// as in production without refusing the benchmark.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/seed"
)

func main() {
	var (
		bin      = flag.String("reftrackd", "bin/reftrackd", "reftrackd binary to run")
		admin    = flag.String("admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "server-level Postgres DSN")
		duration = flag.Duration("duration", 10*time.Second, "length of each run")
		levels   = flag.String("connections", "1,16,64", "concurrency levels")
		load     = flag.String("load", "wrk", "click load tool: wrk (when installed) or go")
	)
	flag.Parse()
	_, err := exec.LookPath("wrk")
	useWrk = *load == "wrk" && err == nil
	if err := run(*bin, *admin, *duration, *levels); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// useWrk drives the click route with wrk, whose C client leaves more of the machine to the server.
var useWrk bool

var userAgents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
}

func run(bin, adminURL string, duration time.Duration, levels string) error {
	ctx := context.Background()
	const name = "reftrack_bench"
	dsn, err := withDatabase(adminURL, name)
	if err != nil {
		return err
	}
	if err := recreate(ctx, adminURL, name); err != nil {
		return err
	}
	pool, err := db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 4})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.MigrateUp(ctx, pool.DB); err != nil {
		return err
	}
	prog, err := seed.Run(ctx, pool, seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
	if err != nil {
		return err
	}

	port, err := freePort()
	if err != nil {
		return err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	server := exec.Command(bin, "serve")
	server.Env = append(os.Environ(), "DATABASE_URL="+dsn, fmt.Sprintf("LISTEN_ADDR=127.0.0.1:%d", port),
		"TRUSTED_PROXIES=127.0.0.0/8", "LOG_LEVEL=warn", "DB_MAX_OPEN_CONNS=32")
	server.Stdout, server.Stderr = io.Discard, os.Stderr
	if err := server.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() { _ = server.Process.Signal(os.Interrupt); _ = server.Wait() }()
	if err := waitHealthy(base); err != nil {
		return err
	}

	fmt.Printf("# Load benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	tool := "a Go HTTP client (cmd/loadgen)"
	if useWrk {
		tool = "wrk"
	}
	fmt.Printf("Each run lasts %s. Machine: %s. Click load: %s.\n\n", duration, machine(), tool)

	// The raw insert rate is measured first, then a checkpoint settles its writes before the routes run.
	insertRate, err := pgbench(ctx, adminURL, dsn, duration)
	if err != nil {
		return err
	}
	fmt.Printf("Raw Postgres single-row INSERT rate (pgbench, 64 clients, a table shaped like `clicks`): **%.0f rows/s**\n\n", insertRate)

	fmt.Println("## POST /api/v1/track/click")
	fmt.Println()
	fmt.Println("| connections | requests/s | p50 | p99 | max | errors | clicks per commit | ms per commit |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|")
	var at64 float64
	for _, l := range strings.Split(levels, ",") {
		var c int
		fmt.Sscan(l, &c)
		if _, err := pool.ExecContext(ctx, `CHECKPOINT`); err != nil {
			return err
		}
		sizeSum0, batches0, secs0 := batchStats(base)
		var st *stats
		if useWrk {
			before := count(ctx, pool, `SELECT count(*) FROM clicks`)
			if st, err = wrkClicks(base, prog.AffiliateURL, c, duration); err != nil {
				return err
			}
			// Every request came from its own visitor, so every acknowledged click is a new row.
			if stored := count(ctx, pool, `SELECT count(*) FROM clicks`) - before; stored < st.ok {
				return fmt.Errorf("%d clicks acknowledged but only %d stored", st.ok, stored)
			}
		} else {
			var (
				mu  sync.Mutex
				ids = map[string]bool{}
			)
			st = drive(base, c, duration, func(client *http.Client, i uint64) error {
				var out struct {
					ClickID string `json:"click_id"`
				}
				body := fmt.Sprintf(`{"affiliate_url":%q,"page_url":%q}`, prog.AffiliateURL, prog.AffiliateURL)
				if err := post(client, base+"/api/v1/track/click", body, map[string]string{
					"User-Agent": userAgents[i%uint64(len(userAgents))], "X-Forwarded-For": randomIP(),
				}, &out); err != nil {
					return err
				}
				mu.Lock()
				ids[out.ClickID] = true
				mu.Unlock()
				return nil
			})
			// Every acknowledged click is committed (a repeat visitor's answer names an earlier one).
			list := make([]string, 0, len(ids))
			for id := range ids {
				list = append(list, id)
			}
			if stored := count(ctx, pool, `SELECT count(*) FROM clicks WHERE click_id = ANY($1)`, pq.Array(list)); stored != len(list) {
				return fmt.Errorf("%d distinct clicks acknowledged but only %d stored", len(list), stored)
			}
		}
		sizeSum, batches, secs := batchStats(base)
		perCommit, msPerCommit := 0.0, 0.0
		if nb := batches - batches0; nb > 0 {
			perCommit, msPerCommit = (sizeSum-sizeSum0)/nb, 1000*(secs-secs0)/nb
		}
		fmt.Printf("| %d | %.0f | %s | %s | %s | %d | %.1f | %.1f |\n", c, st.rate(), st.pct(50), st.pct(99), st.pct(100), st.errors, perCommit, msPerCommit)
		if c == 64 {
			at64 = st.rate()
		}
	}
	fmt.Println()
	if at64 > 0 {
		fmt.Printf("At 64 connections the click route sustains **%.0f%%** of the raw single-row INSERT rate. Every acknowledged click was counted in the database after each run.\n\n", 100*at64/insertRate)
	}

	// Sales: several programs (the sale limit is 120 per key and minute), a few customers each (click and
	// server-mode lead), then sales with fresh transaction ids, each paying a commission.
	const programs, perProgram = 400, 3
	type saleProgram struct {
		key  string
		keys []string
	}
	progs := make([]saleProgram, programs)
	client := &http.Client{Timeout: 10 * time.Second}
	for p := range progs {
		r, err := seed.Run(ctx, pool, seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
		if err != nil {
			return err
		}
		progs[p].key = r.APIKey
		for c := range perProgram {
			var out struct {
				ClickID string `json:"click_id"`
			}
			if err := post(client, base+"/api/v1/track/click", fmt.Sprintf(`{"affiliate_url":%q}`, r.AffiliateURL),
				map[string]string{"User-Agent": userAgents[0], "X-Forwarded-For": randomIP()}, &out); err != nil {
				return err
			}
			ck := fmt.Sprintf("bench-%d-%d", p, c)
			if err := post(client, base+"/api/v1/track/lead", fmt.Sprintf(`{"click_id":%q,"customer_key":%q}`, out.ClickID, ck),
				map[string]string{"Authorization": "Bearer " + r.APIKey, "X-Forwarded-For": randomIP()}, nil); err != nil {
				return err
			}
			progs[p].keys = append(progs[p].keys, ck)
		}
	}
	fmt.Println("## POST /api/v1/track/sale")
	fmt.Println()
	fmt.Printf("Sales with fresh transaction ids, each recording its commission, spread over %d programs' keys\n", programs)
	fmt.Println("(the sale limit is 120 per key and minute).")
	fmt.Println()
	fmt.Println("| connections | requests/s | p50 | p99 | max | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	var seq atomic.Uint64
	st := drive(base, 16, duration, func(client *http.Client, _ uint64) error {
		n := seq.Add(1)
		p := progs[n%programs]
		body := fmt.Sprintf(`{"transaction_id":"bench-%d","amount_cents":%d,"customer_key":%q}`, n, 1000+n%5000, p.keys[(n/programs)%perProgram])
		return post(client, base+"/api/v1/track/sale", body, map[string]string{"Authorization": "Bearer " + p.key}, nil)
	})
	fmt.Printf("| %d | %.0f | %s | %s | %s | %d |\n\n", 16, st.rate(), st.pct(50), st.pct(99), st.pct(100), st.errors)
	if n := count(ctx, pool, `SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id`); n < st.ok {
		return fmt.Errorf("%d sales acknowledged but only %d stored with a commission", st.ok, n)
	}
	return nil
}

var metricLine = regexp.MustCompile(`(?m)^(reftrack_click_batch_size_sum|reftrack_click_batch_size_count|reftrack_click_batch_seconds_sum) ([0-9.e+]+)$`)

// batchStats reads the server's click batch metrics: clicks written, batches, seconds spent.
func batchStats(base string) (clicks, batches, seconds float64) {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, 0, 0
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, m := range metricLine.FindAllSubmatch(b, -1) {
		var v float64
		fmt.Sscan(string(m[2]), &v)
		switch string(m[1]) {
		case "reftrack_click_batch_size_sum":
			clicks = v
		case "reftrack_click_batch_size_count":
			batches = v
		case "reftrack_click_batch_seconds_sum":
			seconds = v
		}
	}
	return clicks, batches, seconds
}

// stats are one run's results.
type stats struct {
	took      time.Duration
	latencies []time.Duration
	ok        int
	errors    int
	fixed     []time.Duration // p50, p99, max as wrk reports them
}

func (s *stats) rate() float64 { return float64(s.ok) / s.took.Seconds() }

func (s *stats) pct(p int) string {
	var d time.Duration
	switch {
	case s.fixed != nil:
		d = map[int]time.Duration{50: s.fixed[0], 99: s.fixed[1], 100: s.fixed[2]}[p]
	case len(s.latencies) == 0:
		return "-"
	default:
		i := (len(s.latencies)*p + 99) / 100
		i = min(max(i-1, 0), len(s.latencies)-1)
		d = s.latencies[i]
	}
	if d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// drive runs c workers sending requests for d and collects latencies.
func drive(base string, c int, d time.Duration, send func(*http.Client, uint64) error) *stats {
	transport := &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}
	client := &http.Client{Transport: transport, Timeout: 10 * time.Second}
	defer transport.CloseIdleConnections()
	var (
		mu  sync.Mutex
		all stats
		wg  sync.WaitGroup
		n   atomic.Uint64
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local stats
			for time.Now().Before(deadline) {
				t0 := time.Now()
				err := send(client, n.Add(1))
				if err != nil {
					local.errors++
					continue
				}
				local.ok++
				local.latencies = append(local.latencies, time.Since(t0))
			}
			mu.Lock()
			all.ok += local.ok
			all.errors += local.errors
			all.latencies = append(all.latencies, local.latencies...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	all.took = time.Since(start)
	sort.Slice(all.latencies, func(i, j int) bool { return all.latencies[i] < all.latencies[j] })
	return &all
}

// post sends a JSON body and wants 200; out, when not nil, receives the decoded answer.
func post(client *http.Client, u, body string, headers map[string]string, out any) error {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d %s", u, res.StatusCode, bytes.TrimSpace(b))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// randomIP is a visitor address in 10.0.0.0/8.
func randomIP() string {
	return fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), 1+rand.IntN(254))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitHealthy(base string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond) // polling a process we started; there is nothing to await
	}
	return errors.New("reftrackd did not become ready")
}

func recreate(ctx context.Context, adminURL, name string) error {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)"); err != nil {
		return err
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name))
	return err
}

func withDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func count(ctx context.Context, pool *sqlx.DB, q string, args ...any) int {
	var n int
	if err := pool.GetContext(ctx, &n, q, args...); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return -1
	}
	return n
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+)`)

// pgbench measures single-row INSERTs into a table shaped like clicks (its indexes included) with 64
// clients.
func pgbench(ctx context.Context, adminURL, dsn string, d time.Duration) (float64, error) {
	pool, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if _, err := pool.ExecContext(ctx, `DROP TABLE IF EXISTS bench_insert; CREATE TABLE bench_insert (LIKE clicks INCLUDING ALL)`); err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("", "reftrack-pgbench")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "insert.sql")
	if err := os.WriteFile(script, []byte(`\set r random(1, 1000000000)
INSERT INTO bench_insert (click_id, program_id, link_id, partner_id, affiliate_url, user_agent, visitor_hash, device_type, browser_name)
VALUES (md5(:r::text || clock_timestamp()::text), 1, 1, 1, 'https://shop.example.com/?aff=x', 'Mozilla/5.0', sha256(:r::text::bytea), 'desktop', 'Chrome');
`), 0o644); err != nil {
		return 0, err
	}
	out, err := exec.CommandContext(ctx, "pgbench", "-n", "-c", "64", "-j", "2", "-T", fmt.Sprint(int(d.Seconds())), "-f", script, dsn).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w\n%s", err, out)
	}
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps:\n%s", out)
	}
	var tps float64
	fmt.Sscan(string(m[1]), &tps)
	_, _ = pool.ExecContext(ctx, `DROP TABLE bench_insert`)
	return tps, nil
}

func machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	model := "unknown CPU"
	cores := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") && model == "unknown CPU" {
			model = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
		}
		if strings.HasPrefix(line, "processor") {
			cores++
		}
	}
	return fmt.Sprintf("%d cores (%s), load generator, reftrackd and PostgreSQL on the same machine", cores, model)
}

// wrkScript sends clicks, each from a visitor of its own (thread and counter make the IP), with a few
// browser User-Agents, and prints the figures loadgen reads.
const wrkScript = `
local counter, tid = 0, %d
local agents = {%s}
function setup(thread) thread:set("id", tid); tid = tid + 1 end
function init(args) counter = 0 end
function request()
  counter = counter + 1
  local ip = string.format("10.%%d.%%d.%%d", id, math.floor(counter / 250) %% 250, counter %% 250 + 1)
  return wrk.format("POST", "/api/v1/track/click",
    {["Content-Type"] = "application/json", ["User-Agent"] = agents[counter %% #agents + 1], ["X-Forwarded-For"] = ip},
    '{"affiliate_url":"%s","page_url":"%s"}')
end
function done(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
  io.write(string.format("LOADGEN %%d %%d %%d %%d %%d %%d\n", summary.requests, bad, summary.duration,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

var wrkRuns int

func wrkClicks(base, affiliateURL string, c int, d time.Duration) (*stats, error) {
	quoted := make([]string, len(userAgents))
	for i, ua := range userAgents {
		quoted[i] = fmt.Sprintf("%q", ua)
	}
	dir, err := os.MkdirTemp("", "reftrack-wrk")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "click.lua")
	// Each run's visitors get addresses of their own (the second octet), or the repeat-visitor rule would
	// answer a previous run's click.
	wrkRuns++
	body := fmt.Sprintf(wrkScript, wrkRuns*8, strings.Join(quoted, ", "), affiliateURL, affiliateURL)
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		return nil, err
	}
	threads := min(c, 2)
	out, err := exec.Command("wrk", "-t", fmt.Sprint(threads), "-c", fmt.Sprint(c), "-d", fmt.Sprintf("%ds", int(d.Seconds())),
		"-s", script, base).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("wrk: %w\n%s", err, out)
	}
	var reqs, bad, micros, p50, p99, pmax int64
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "LOADGEN ") {
			fmt.Sscan(strings.TrimPrefix(line, "LOADGEN "), &reqs, &bad, &micros, &p50, &p99, &pmax)
		}
	}
	if reqs == 0 {
		return nil, fmt.Errorf("wrk printed no figures:\n%s", out)
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return &stats{took: us(micros), ok: int(reqs - bad), errors: int(bad), fixed: []time.Duration{us(p50), us(p99), us(pmax)}}, nil
}
