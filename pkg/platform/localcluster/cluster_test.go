package localcluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/platform/localcluster"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/sdk"
)

// These tests run real processes (make test-cluster sets REFTRACK_CLUSTER=1): three replicas behind
// HAProxy, PgBouncer in transaction pooling, Redis, a PostgreSQL cluster of their own. They share one
// cluster and run one after another; each works on programs of its own.
var cluster *localcluster.Cluster

// direct reads the database itself, not through the pooler.
var direct *sqlx.DB

func TestMain(m *testing.M) {
	if os.Getenv("REFTRACK_CLUSTER") == "" {
		fmt.Println("localcluster: the cluster tests run with `make test-cluster` (REFTRACK_CLUSTER=1)")
		os.Exit(m.Run()) // every test skips
	}
	os.Exit(runCluster(m))
}

func runCluster(m *testing.M) int {
	if missing := localcluster.Missing(); len(missing) > 0 {
		fmt.Printf("localcluster: missing %s (install: %s)\n", strings.Join(missing, ", "), localcluster.InstallHint)
		return 1
	}
	dir, err := os.MkdirTemp("", "reftrack-cluster-test")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "reftrackd")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/reftrack/reftrack/cmd/reftrackd").CombinedOutput(); err != nil {
		fmt.Printf("build reftrackd: %v\n%s", err, out)
		return 1
	}
	ctx := context.Background()
	cluster, err = localcluster.Start(ctx, localcluster.Options{Reftrackd: bin, Replicas: 3,
		Logf: func(f string, a ...any) { fmt.Printf("cluster: "+f+"\n", a...) }})
	if err != nil {
		fmt.Println("start the cluster:", err)
		return 1
	}
	defer func() {
		if err := cluster.Stop(); err != nil {
			fmt.Println("stop the cluster:", err)
		}
	}()
	direct, err = sqlx.Open("postgres", cluster.DirectURL)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer direct.Close()
	code := m.Run()
	if code != 0 {
		for _, r := range cluster.Replicas {
			if b, err := os.ReadFile(r.Log); err == nil {
				fmt.Printf("--- %s log (last 3000 bytes)\n%s\n", r.Name, tail(b, 3000))
			}
		}
	}
	return code
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func need(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skip("needs the cluster: make test-cluster")
	}
}

// newProgram seeds a program through the pooler, as an operator would with reftrackd seed.
func newProgram(t *testing.T) seed.Result {
	t.Helper()
	out, err := cluster.Reftrackd(context.Background(), "seed", "--json")
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, out)
	}
	var r seed.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("seed output %s: %v", out, err)
	}
	return r
}

const browserUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36"

// click posts a click as the tracker does, from the visitor named by ip (the balancer forwards it in
// X-Forwarded-For, which the replicas trust).
func click(ctx context.Context, client *http.Client, affiliateURL, ip string) (int, string, error) {
	body, _ := json.Marshal(map[string]any{"affiliate_url": affiliateURL})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cluster.URL+"/api/v1/track/click", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", browserUA)
	req.Header.Set("X-Forwarded-For", ip)
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	var out struct {
		ClickID string `json:"click_id"`
	}
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out.ClickID, nil
}

func count(t *testing.T, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := direct.Get(&n, q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// The whole flow through the balancer: click → lead → sale → refund, each answered by whichever replica.
func TestFlowThroughTheBalancer(t *testing.T) {
	need(t)
	ctx := context.Background()
	p := newProgram(t)
	status, clickID, err := click(ctx, http.DefaultClient, p.AffiliateURL, "198.51.100.1")
	if err != nil || status != http.StatusOK || clickID == "" {
		t.Fatalf("click: %d %q %v", status, clickID, err)
	}
	brand := sdk.New(p.APIKey, sdk.WithBaseURL(cluster.URL))
	if r := brand.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "flow-1", ClickID: clickID}); !r.OK {
		t.Fatalf("lead: %d %v", r.Status, r.Err())
	}
	s := brand.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "flow-1", AmountCents: 4200, InvoiceID: "inv-flow-1"})
	if !s.OK || s.Sale == nil {
		t.Fatalf("sale: %d %v %s", s.Status, s.Err(), s.Data)
	}
	if r := brand.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "inv-flow-1"}); !r.OK {
		t.Fatalf("refund: %d %v", r.Status, r.Err())
	}
	if n := count(t, `SELECT count(*) FROM sales s JOIN refunds r ON r.sale_id = s.id WHERE s.program_id = $1 AND s.processor_event_id = 'inv-flow-1'
		AND s.refunded_amount_cents = 4200 AND s.click_id = $2`, p.ProgramID, clickID); n != 1 {
		t.Errorf("the refunded sale on the click: %d rows", n)
	}
}

// The sale limit (120 per key and minute, interface.md) holds in total across the replicas: they count in
// the shared Redis.
func TestRateLimitAcrossReplicas(t *testing.T) {
	need(t)
	ctx := context.Background()
	p := newProgram(t)
	const limit, sent = 120, 130
	for attempt := 1; ; attempt++ {
		// The windows are wall-clock minutes: start early in one, so that every request lands in it.
		if left := time.Until(time.Now().Truncate(time.Minute).Add(time.Minute)); left < 20*time.Second {
			time.Sleep(left)
		}
		statuses, resets := map[int]int{}, map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		client := &http.Client{}
		for i := range sent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := fmt.Sprintf(`{"transaction_id":"rl-%d-%d","amount_cents":100,"customer_key":"nobody"}`, attempt, i)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cluster.URL+"/api/v1/track/sale", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+p.APIKey)
				res, err := client.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					statuses[0]++
					return
				}
				res.Body.Close()
				statuses[res.StatusCode]++
				resets[res.Header.Get("X-RateLimit-Reset")] = true
			}()
		}
		wg.Wait()
		if len(resets) > 1 && attempt == 1 {
			continue // the window turned during the burst after all: once more, in a fresh one
		}
		// Unknown customer: each request the limit lets through is a 400, each one it stops a 429.
		if statuses[http.StatusBadRequest] != limit || statuses[http.StatusTooManyRequests] != sent-limit || len(statuses) != 2 {
			t.Errorf("answers %v, want %d × 400 and %d × 429 (windows %v)", statuses, limit, sent-limit, resets)
		}
		return
	}
}

// tally counts outcomes by kind.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) add(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[string]int{}
	}
	t.n[k]++
}

func (t *tally) get(k string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[k]
}

// load drives clicks (each from a new visitor; a failed click is retried once, as the tracker does) and
// sales (through the SDK, whose retries keep the transaction id) until ctx ends. It returns the clicks'
// and sales' tallies and the acknowledged ids.
type load struct {
	clicks, sales   tally
	mu              sync.Mutex
	ackedClicks     []string
	ackedSales      []string
	retriedVisitors []string
}

func runLoad(ctx context.Context, t *testing.T, p seed.Result, sellers []seller, clients int) *load {
	t.Helper()
	l := &load{}
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	var seq atomic.Int64
	for c := range clients {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := seq.Add(1)
				ip := fmt.Sprintf("10.%d.%d.%d", (n>>16)&255, (n>>8)&255, n&255)
				status, id, err := click(context.Background(), client, p.AffiliateURL, ip)
				if err != nil || status >= 500 {
					l.clicks.add("error")
					// The tracker sends the click again: the visitor's click, if stored, comes back.
					status, id, err = click(context.Background(), client, p.AffiliateURL, ip)
					l.mu.Lock()
					l.retriedVisitors = append(l.retriedVisitors, ip)
					l.mu.Unlock()
				}
				switch {
				case err == nil && status == http.StatusOK:
					l.clicks.add("ok")
					l.mu.Lock()
					l.ackedClicks = append(l.ackedClicks, id)
					l.mu.Unlock()
				default:
					l.clicks.add(fmt.Sprintf("failed %d %v", status, err))
				}
			}
		}()
		go func() {
			defer wg.Done()
			// Paced below the sale limit (120 per key and minute): each client sells for sellers of its own,
			// one sale every saleEvery.
			tick := time.NewTicker(saleEvery)
			defer tick.Stop()
			for i := 0; ctx.Err() == nil; i++ {
				s := sellers[(c+i*clients)%len(sellers)]
				inv := fmt.Sprintf("load-%d-%d-%d", s.program.ProgramID, c, i)
				r := s.brand.TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: s.customers[i%len(s.customers)], AmountCents: 1000, InvoiceID: inv})
				switch {
				case r.OK:
					l.sales.add("ok")
				case r.AlreadyRecorded():
					l.sales.add("already recorded")
				default:
					l.sales.add(fmt.Sprintf("failed %d %v", r.Status, r.Err()))
				}
				if r.Attempts > 1 {
					l.sales.add("retried")
				}
				if r.OK || r.AlreadyRecorded() {
					l.mu.Lock()
					l.ackedSales = append(l.ackedSales, inv)
					l.mu.Unlock()
				}
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
		}()
	}
	<-ctx.Done()
	wg.Wait()
	return l
}

// saleEvery paces each sale client: 8 clients on 16 programs stay far below 120 sales per key and minute.
const saleEvery = 100 * time.Millisecond

// seller is a program with customers (a click and a lead each) to sell to, and its brand's SDK client.
type seller struct {
	program   seed.Result
	customers []string
	brand     *sdk.Client
}

// newSellers seeds n programs with customers customers each.
func newSellers(t *testing.T, n, customers int) []seller {
	t.Helper()
	var out []seller
	for range n {
		p := newProgram(t)
		out = append(out, seller{program: p, customers: customersFor(t, p, customers),
			brand: sdk.New(p.APIKey, sdk.WithBaseURL(cluster.URL), sdk.WithRetry(sdk.RetryPolicy{MaxAttempts: 6, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}))})
	}
	return out
}

// customersFor records n customers (click and lead) for the sale load.
func customersFor(t *testing.T, p seed.Result, n int) []string {
	t.Helper()
	ctx := context.Background()
	brand := sdk.New(p.APIKey, sdk.WithBaseURL(cluster.URL), sdk.WithHTTPClient(backend(p)))
	var out []string
	for i := range n {
		status, clickID, err := click(ctx, http.DefaultClient, p.AffiliateURL, fmt.Sprintf("192.0.2.%d", i+1))
		if err != nil || status != http.StatusOK {
			t.Fatalf("click: %d %v", status, err)
		}
		key := fmt.Sprintf("cust-%d-%d", p.ProgramID, i)
		if r := brand.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: key, ClickID: clickID}); !r.OK {
			t.Fatalf("lead: %d %v", r.Status, r.Err())
		}
		out = append(out, key)
	}
	return out
}

// backend is the HTTP client of the program's own backend: leads are limited per client IP (interface.md),
// and each brand's server has its own, which the balancer passes on in X-Forwarded-For.
func backend(p seed.Result) *http.Client {
	ip := fmt.Sprintf("203.0.%d.%d", (p.ProgramID>>8)&255, p.ProgramID&255)
	return &http.Client{Timeout: 10 * time.Second, Transport: forwardedFor{ip: ip, next: http.DefaultTransport}}
}

type forwardedFor struct {
	ip   string
	next http.RoundTripper
}

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.ip)
	return f.next.RoundTrip(r)
}

// checkStored fails the test when an acknowledged click or sale is missing, or when a counter disagrees
// with the rows it counts.
func checkStored(t *testing.T, p seed.Result, sellers []seller, l *load) {
	t.Helper()
	var missing int64
	if err := direct.Get(&missing, `SELECT count(*) FROM unnest($1::text[]) a(id) WHERE NOT EXISTS (SELECT 1 FROM clicks WHERE click_id = a.id)`,
		"{"+strings.Join(l.ackedClicks, ",")+"}"); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d of %d acknowledged clicks missing", missing, len(l.ackedClicks))
	}
	if err := direct.Get(&missing, `SELECT count(*) FROM unnest($1::text[]) a(id) WHERE NOT EXISTS
		(SELECT 1 FROM sales WHERE processor_event_id = a.id)`, "{"+strings.Join(l.ackedSales, ",")+"}"); err != nil {
		t.Fatal(err)
	}
	if missing != 0 {
		t.Errorf("%d of %d acknowledged sales missing", missing, len(l.ackedSales))
	}
	// A visitor whose click was retried has one click: a click stored for a request that failed comes back.
	if len(l.retriedVisitors) > 0 {
		var twice int64
		if err := direct.Get(&twice, `SELECT count(*) FROM (SELECT ip FROM clicks WHERE program_id = $1 AND host(ip) = ANY($2::text[])
			GROUP BY ip HAVING count(*) > 1) x`, p.ProgramID, "{"+strings.Join(l.retriedVisitors, ",")+"}"); err != nil {
			t.Fatal(err)
		}
		if twice != 0 {
			t.Errorf("%d retried visitors have two clicks", twice)
		}
	}
	checkCounters(t, p.ProgramID)
	for _, s := range sellers {
		checkCounters(t, s.program.ProgramID)
	}
}

// checkCounters compares every counter with the rows it counts (the counts, added by the events' writers and
// rolled up by the replicas), and checks that what one statement wrote belongs together: through a
// transaction pooler that switched connections inside a statement, counters drifted silently.
func checkCounters(t *testing.T, programID int64) {
	t.Helper()
	for _, q := range []struct{ what, sql string }{
		{"conversions counted vs sales", `SELECT abs((SELECT coalesce(sum(sales), 0) FROM performance_hourly_live WHERE program_id = $1) -
			(SELECT count(*) FROM sales WHERE program_id = $1 AND NOT is_test))`},
		{"leads counted vs leads", `SELECT abs((SELECT coalesce(sum(leads + provisional_leads), 0) FROM performance_hourly_live WHERE program_id = $1) -
			(SELECT count(*) FROM leads WHERE program_id = $1 AND NOT is_test))`},
		{"clicks counted vs clicks", `SELECT abs((SELECT coalesce(sum(clicks), 0) FROM performance_hourly_live WHERE program_id = $1) -
			(SELECT count(*) FROM clicks WHERE program_id = $1 AND NOT is_test AND NOT is_bot))`},
		// (The seeded program pays a customer's first sale only: later sales have no commission.)
		{"sales with two commissions, or another program's or partner's", `SELECT count(*) FROM sales s WHERE s.program_id = $1 AND
			((SELECT count(*) FROM commissions c WHERE c.sale_id = s.id) > 1 OR EXISTS (SELECT 1 FROM commissions c WHERE c.sale_id = s.id
			AND (c.program_id <> s.program_id OR c.partner_id IS DISTINCT FROM s.partner_id)))`},
		{"customers with a sale but without exactly one commission", `SELECT count(*) FROM customers cu WHERE cu.program_id = $1 AND
			EXISTS (SELECT 1 FROM sales s WHERE s.customer_id = cu.id) AND
			(SELECT count(*) FROM commissions c JOIN sales s ON s.id = c.sale_id WHERE s.customer_id = cu.id) <> 1`},
		{"sales whose customer is another program's or another partner's", `SELECT count(*) FROM sales s JOIN customers c ON c.id = s.customer_id
			WHERE s.program_id = $1 AND (c.program_id <> s.program_id OR c.partner_id IS DISTINCT FROM s.partner_id)`},
		{"customers with a sale not converted", `SELECT count(DISTINCT c.id) FROM customers c JOIN sales s ON s.customer_id = c.id
			WHERE s.program_id = $1 AND c.status <> 'converted'`},
		{"sales whose refunds do not add up", `SELECT count(*) FROM sales s WHERE s.program_id = $1 AND s.refunded_amount_cents <>
			(SELECT coalesce(sum(r.amount_cents), 0) FROM refunds r WHERE r.sale_id = s.id)`},
	} {
		if n := count(t, q.sql, programID); n != 0 {
			t.Errorf("%s: %d off", q.what, n)
		}
	}
}

// Mixed click and sale load through the pooler: every answer is a 2xx, and every counter matches its rows
// (through a transaction pooler that switched connections inside a statement, counters drifted silently).
func TestMixedLoadThroughThePooler(t *testing.T) {
	need(t)
	began := time.Now()
	p := newProgram(t)
	sellers := newSellers(t, 16, 3)
	setup := time.Since(began)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	l := runLoad(ctx, t, p, sellers, 8)
	t.Logf("clicks %v, sales %v (setup %s, load %s)", l.clicks.n, l.sales.n, setup.Round(time.Millisecond), (time.Since(began) - setup).Round(time.Millisecond))
	defer func(checked time.Time) { t.Logf("checks %s", time.Since(checked).Round(time.Millisecond)) }(time.Now())
	if l.clicks.get("ok") == 0 || l.sales.get("ok") == 0 || len(l.clicks.n) != 1 || len(l.sales.n) != 1 {
		t.Errorf("answers: clicks %v, sales %v; want only successes", l.clicks.n, l.sales.n)
	}
	checkStored(t, p, sellers, l)
	for _, r := range cluster.Replicas {
		b, _ := os.ReadFile(r.Log)
		for _, bad := range []string{"prepared statement", "bind message", "invalid input syntax", `"level":"ERROR"`} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s logged %q", r.Name, bad)
			}
		}
	}
}

// One replica killed with SIGKILL under click and sale load: the balancer routes around it, every
// acknowledged event is stored, the SDK's retries turn every other sale into a success or a 409 already
// recorded, and a click stored for a request whose client saw an error is not counted twice.
func TestKillAReplicaUnderLoad(t *testing.T) {
	need(t)
	p := newProgram(t)
	sellers := newSellers(t, 16, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	victim := cluster.Replicas[1]
	killed := make(chan error, 1)
	go func() {
		time.Sleep(4 * time.Second) // a third of the load in: the kill lands under full load
		killed <- victim.Kill()
	}()
	l := runLoad(ctx, t, p, sellers, 8)
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	t.Logf("clicks %v, sales %v", l.clicks.n, l.sales.n)
	for k := range l.sales.n {
		if k != "ok" && k != "already recorded" && k != "retried" {
			t.Errorf("sales ended %q %d times", k, l.sales.n[k])
		}
	}
	for k := range l.clicks.n {
		if k != "ok" && k != "error" {
			t.Errorf("clicks ended %q %d times (after the tracker's retry)", k, l.clicks.n[k])
		}
	}
	checkStored(t, p, sellers, l)
	if err := victim.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A click stored for a request whose client saw an error (its replica died before answering) is sent
// again by the tracker and may land on another replica: that one answers the visitor's stored click, and
// it counts once. Here the first request goes to one replica directly, the retries to each of the others.
func TestRetriedClickCountsOnce(t *testing.T) {
	need(t)
	p := newProgram(t)
	var first string
	for i, r := range cluster.Replicas {
		body, _ := json.Marshal(map[string]any{"affiliate_url": p.AffiliateURL})
		req, _ := http.NewRequest(http.MethodPost, "http://"+r.Addr+"/api/v1/track/click", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", browserUA)
		req.Header.Set("X-Forwarded-For", "198.51.100.200")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ClickID string `json:"click_id"`
		}
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %v", r.Name, res.StatusCode, err)
		}
		if i == 0 {
			first = out.ClickID
		} else if out.ClickID != first {
			t.Errorf("%s answered click %s, want the stored %s", r.Name, out.ClickID, first)
		}
	}
	if n := count(t, `SELECT count(*) FROM clicks WHERE program_id = $1`, p.ProgramID); n != 1 {
		t.Errorf("%d clicks stored for one visitor", n)
	}
	checkCounters(t, p.ProgramID)
}

// A rolling restart under load: a replica sent SIGTERM turns /livez to 503, the balancer takes it out
// within three checks while it still answers (DRAIN_DELAY, 5 s), then it drains and exits and comes back.
// No client sees an error, and nothing acknowledged is lost.
func TestRollingRestartUnderLoad(t *testing.T) {
	need(t)
	p := newProgram(t)
	sellers := newSellers(t, 16, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Second)
	defer cancel()
	restarted := make(chan error, 1)
	go func() {
		r := cluster.Replicas[2]
		time.Sleep(2 * time.Second) // into the load
		if err := r.Terminate(); err != nil {
			restarted <- err
			return
		}
		restarted <- r.Start(context.Background())
	}()
	l := runLoad(ctx, t, p, sellers, 8)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("clicks %v, sales %v", l.clicks.n, l.sales.n)
	if len(l.clicks.n) != 1 || l.clicks.get("ok") == 0 || len(l.sales.n) != 1 || l.sales.get("ok") == 0 {
		t.Errorf("answers: clicks %v, sales %v; want only first-time successes", l.clicks.n, l.sales.n)
	}
	checkStored(t, p, sellers, l)
	b, err := os.ReadFile(cluster.Replicas[2].Log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"msg":"draining"`, `"msg":"stopped"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the restarted replica's log lacks %s", want)
		}
	}
}

// Migrations need a session: through the transaction pooler `reftrackd migrate up` refuses to run.
func TestMigrateRefusesTheTransactionPooler(t *testing.T) {
	need(t)
	cmd := exec.Command(cluster.Replicas[0].Bin(), "migrate", "up")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+cluster.PooledURL, "MIGRATE_DATABASE_URL=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "transaction pooler") || !strings.Contains(string(out), "MIGRATE_DATABASE_URL") {
		t.Errorf("migrate up through PgBouncer: %v\n%s", err, out)
	}
}

// A replica started without REDIS_URL beside the others warns at start that rate limits are per replica.
func TestWarnsWithoutRedis(t *testing.T) {
	need(t)
	cmd := exec.Command(cluster.Replicas[0].Bin(), "serve")
	cmd.Env = append(append(os.Environ(), cluster.ReplicaEnv("127.0.0.1:0")...), "REDIS_URL=")
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// The warning comes before the server listens: read the log up to the listening line.
	var log strings.Builder
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "reftrackd listening") {
			break
		}
	}
	// Four serve now (a replica killed by an earlier test counts until peers.Expiry).
	if !strings.Contains(log.String(), "rate limits are per replica") || !regexp.MustCompile(`"replicas":[4-9]`).MatchString(log.String()) {
		_ = cmd.Process.Kill()
		t.Errorf("no warning before listening (%v):\n%s", cmd.Wait(), log.String())
	}
}
