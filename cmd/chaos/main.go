// Command chaos is `make chaos`: it proves that faults lose no acknowledged event. It starts its own
// PostgreSQL cluster (a temporary directory, a free port: never a shared server) and reftrackd on it,
// drives clicks and sales concurrently, kills the server with SIGKILL and restarts it, then stops
// PostgreSQL (pg_ctl stop -m fast) and starts it again while the load continues. At the end it counts
// in the database every event that was acknowledged (a 2xx answer) and exits non-zero when one is
// missing. Some programs have a webhook endpoint on a real receiver in this process; the receivers go
// down and come back during the load, and at the end every acknowledged sale of those programs must have
// reached its program's receiver, and no receiver another program's event (webhooks.go). The cluster, the
// server and the receivers are removed at the end, on failure too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/platform/localpg"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "reftrackd", "bin/reftrackd", "reftrackd binary to run")
	flag.DurationVar(&o.duration, "duration", 40*time.Second, "length of the load; the server is killed at 30% of it, PostgreSQL stopped at 60%")
	flag.DurationVar(&o.pgDown, "pg-down", 3*time.Second, "how long PostgreSQL stays stopped")
	flag.IntVar(&o.concurrency, "concurrency", 4, "concurrent clients per event type (click, sale)")
	flag.IntVar(&o.programs, "programs", 150, "programs whose keys share the sales (the sale limit is 120 per key and minute)")
	flag.IntVar(&o.receivers, "receivers", 30, "programs with a webhook endpoint on a receiver of this process (spread over the programs)")
	flag.DurationVar(&o.receiverDown, "receiver-down", 3*time.Second, "how long a group of receivers stays down (under the 5 s retry's 4.5 s, so that the retry finds it back)")
	flag.DurationVar(&o.drain, "drain", 3*time.Minute, "how long to wait after the load for the webhook deliveries to end")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
}

type options struct {
	bin                              string
	duration, pgDown                 time.Duration
	concurrency, programs, receivers int
	receiverDown, drain              time.Duration
}

// receiverGroups is how many groups the receivers are split into, each down once during the load.
const receiverGroups = 3

func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "reftrack-chaos")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	pgPort, err := localpg.FreePort()
	if err != nil {
		return err
	}
	say := func(f string, a ...any) {
		fmt.Printf("%s  "+f+"\n", append([]any{time.Now().Format("15:04:05.000")}, a...)...)
	}
	pg, err := localpg.Start(ctx, dir, pgPort, say)
	if err != nil {
		return err
	}
	if !pg.Started() {
		return fmt.Errorf("something already listens on 127.0.0.1:%d; chaos only uses a cluster of its own", pgPort)
	}
	defer func() {
		if err := pg.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
		}
	}()

	dsn := pg.URL("reftrack_chaos")
	if err := createDatabase(ctx, pg.URL("postgres"), "reftrack_chaos"); err != nil {
		return err
	}
	pool, err := db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 2})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.MigrateUp(ctx, pool.DB); err != nil {
		return err
	}

	port, err := localpg.FreePort()
	if err != nil {
		return err
	}
	srv := &server{bin: o.bin, log: filepath.Join(dir, "reftrackd.log"), base: fmt.Sprintf("http://127.0.0.1:%d", port),
		env: append(os.Environ(), "DATABASE_URL="+dsn, fmt.Sprintf("LISTEN_ADDR=127.0.0.1:%d", port),
			"TRUSTED_PROXIES=127.0.0.0/8", "LOG_LEVEL=warn")}
	if err := srv.start(); err != nil {
		return err
	}
	defer srv.stop()
	if err := srv.waitReady(ctx); err != nil {
		return err
	}
	if o.receiverDown >= webhooks.Schedule[1]*9/10 {
		say("warning: -receiver-down %s is not under the 5 s retry's earliest (4.5 s): deliveries may wait 5 min for their third attempt, past -drain", o.receiverDown)
	}
	hooks := newHooks(o.programs, o.receivers, receiverGroups)
	defer hooks.close()
	progs, err := setup(ctx, pool, srv.base, o.programs, hooks)
	if err != nil {
		return err
	}
	// Rows written before the load (the setup's clicks) are left out of "stored in all".
	var clickBase, saleBase int64
	if err := pool.GetContext(ctx, &clickBase, `SELECT coalesce(max(id), 0) FROM clicks`); err != nil {
		return err
	}
	if err := pool.GetContext(ctx, &saleBase, `SELECT coalesce(max(id), 0) FROM sales`); err != nil {
		return err
	}
	say("PostgreSQL on 127.0.0.1:%d (%s), reftrackd on %s, %d programs (%d with a webhook receiver); load for %s", pgPort, dir, srv.base,
		len(progs), len(hooks.list), o.duration)

	// The load: clicks and sales, each from its own clients, until the end of the run.
	load, endLoad := context.WithCancel(ctx)
	defer endLoad()
	var (
		clicks = newTally("click")
		sales  = newTally("sale")
		faults = &faultLog{}
		wg     sync.WaitGroup
		seq    atomic.Uint64
	)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * o.concurrency}}
	for range o.concurrency {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for load.Err() == nil {
				var out struct {
					ClickID string `json:"click_id"`
				}
				body := fmt.Sprintf(`{"affiliate_url":%q}`, progs[rand.IntN(len(progs))].affiliateURL)
				t0 := time.Now()
				status, err := post(ctx, client, srv.base+"/api/v1/track/click", body, map[string]string{"X-Forwarded-For": randomIP()}, &out)
				clicks.add(status, err, out.ClickID)
				switch {
				case status == http.StatusOK:
					faults.ok(t0)
				case err != nil || status >= 500:
					faults.failed(t0)
					pause()
				default:
					pause()
				}
			}
		}()
		go func() {
			defer wg.Done()
			for load.Err() == nil {
				n := seq.Add(1)
				p := progs[n%uint64(len(progs))]
				tx := fmt.Sprintf("chaos-%d", n)
				body := fmt.Sprintf(`{"transaction_id":%q,"amount_cents":%d,"customer_key":%q}`, tx, 1000+n%5000, p.customer)
				t0 := time.Now()
				status, err := post(ctx, client, srv.base+"/api/v1/track/sale", body, map[string]string{"Authorization": "Bearer " + p.key}, nil)
				sales.add(status, err, tx)
				switch {
				case status == http.StatusOK:
					faults.ok(t0)
				case err != nil || status >= 500:
					faults.failed(t0)
					pause()
				default:
					pause()
				}
			}
		}()
	}

	// The faults, at fixed points of the run. The receivers' outages run beside the others: each group of
	// receivers is down once (-receiver-down), at 10 %, 45 % and 80 % of the run, so that the 5 s retry of
	// an attempt failed while down finds them back. With the default 40 s the retries after the first
	// outage (4-7 s) run up to the SIGKILL (12 s), and those after the second (18-21 s) up to the
	// PostgreSQL stop (24 s): a retry caught by either is attempted again once its lease runs out.
	start := time.Now()
	outagesDone := make(chan error, 1)
	go func() {
		var errs []error
		for g, at := range []int{10, 45, 80} {
			if len(hooks.list) == 0 || !sleepUntil(ctx, start.Add(o.duration*time.Duration(at)/100)) {
				break
			}
			errs = append(errs, hooks.takeDown(ctx, g, o.receiverDown, say))
		}
		outagesDone <- errors.Join(errs...)
	}()
	if !sleepUntil(ctx, start.Add(o.duration*3/10)) {
		return ctx.Err()
	}
	// What the worker holds at that moment: deliveries it leased, attempts the receivers are handling.
	var kill killSnapshot
	if err := pool.GetContext(ctx, &kill.leased, `SELECT count(*) FROM webhook_deliveries WHERE leased_until > now()`); err != nil {
		return err
	}
	say("SIGKILL reftrackd (pid %d)", srv.cmd.Process.Pid)
	f := faults.add("reftrackd SIGKILL, restarted at once")
	kill.inflight = hooks.inflight()
	if err := srv.kill(); err != nil {
		return err
	}
	if err := srv.start(); err != nil {
		return err
	}
	faults.back(f)
	say("reftrackd restarted (pid %d)", srv.cmd.Process.Pid)

	if !sleepUntil(ctx, start.Add(o.duration*6/10)) {
		return ctx.Err()
	}
	say("pg_ctl stop -m fast")
	f = faults.add(fmt.Sprintf("PostgreSQL stop -m fast, started %s later", o.pgDown))
	if err := pg.Stop(); err != nil {
		return err
	}
	if !sleepUntil(ctx, time.Now().Add(o.pgDown)) {
		return ctx.Err()
	}
	restarted, err := localpg.Start(ctx, dir, pgPort, say)
	if err != nil {
		return err
	}
	pg = restarted // the deferred Stop stops this one
	faults.back(f)

	if !sleepUntil(ctx, start.Add(o.duration)) {
		return ctx.Err()
	}
	endLoad()
	wg.Wait()
	loadEnd := time.Now()
	if err := <-outagesDone; err != nil {
		return err
	}
	say("load ended; counting")

	// A fresh pool: the old one's connections died with PostgreSQL.
	pool.Close()
	if pool, err = db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 2}); err != nil {
		return err
	}
	defer pool.Close()
	lost := 0
	fmt.Println()
	fmt.Println("| event | requests | acknowledged (2xx) | acknowledged and stored | stored during the load | lost | 5xx | other 4xx | connection errors |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range []struct {
		*tally
		stored, all string
		base        int64
	}{
		{clicks, `SELECT count(*) FROM clicks WHERE click_id = ANY($1)`, `SELECT count(*) FROM clicks WHERE id > $1`, clickBase},
		{sales, `SELECT count(*) FROM sales WHERE processor_event_id = ANY($1)`, `SELECT count(*) FROM sales WHERE id > $1`, saleBase},
	} {
		var stored, all int
		if err := pool.GetContext(ctx, &stored, t.stored, pq.Array(t.ids())); err != nil {
			return err
		}
		if err := pool.GetContext(ctx, &all, t.all, t.base); err != nil {
			return err
		}
		acked := len(t.acked)
		lost += acked - stored
		fmt.Printf("| %s | %d | %d | %d | %d | %d | %d%s | %d%s | %d |\n", t.name, t.requests, acked, stored, all, acked-stored, t.status5xx, t.statuses(5), t.status4xx, t.statuses(4), t.connErrors)
	}
	fmt.Println()
	fmt.Println("| fault | at | service back (restart done) | first 2xx after its last failure | from the fault | from service back |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for _, f := range faults.list {
		first, fromFault, fromBack := "none", "-", "-"
		if !f.firstOK.IsZero() {
			first = f.firstOK.Sub(start).Round(time.Millisecond).String()
			fromFault = f.firstOK.Sub(f.at).Round(time.Millisecond).String()
			fromBack = f.firstOK.Sub(f.backAt).Round(time.Millisecond).String()
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", f.name, f.at.Sub(start).Round(time.Millisecond), f.backAt.Sub(start).Round(time.Millisecond), first, fromFault, fromBack)
	}
	fmt.Println()

	// The webhooks: wait for the deliveries to end (the receivers are all up now), then check.
	var problems []string
	if len(hooks.list) > 0 {
		say("waiting for the webhook deliveries to end (at most %s)", o.drain)
		drained, done, err := hooks.drain(ctx, pool, loadEnd.Add(o.drain))
		if err != nil {
			return err
		}
		say("webhook deliveries ended: %t, %s after the load", done, drained.Sub(loadEnd).Round(time.Millisecond))
		if problems, err = hooks.check(ctx, pool, sales, saleBase, loadEnd, drained, done, kill, srv.log, start); err != nil {
			return err
		}
	}
	if lost > 0 {
		problems = append([]string{fmt.Sprintf("%d acknowledged events are not stored", lost)}, problems...)
	}
	for _, f := range faults.list {
		if f.firstOK.IsZero() {
			problems = append(problems, fmt.Sprintf("no request succeeded after %q: the service did not recover", f.name))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Println("0 acknowledged events lost.")
	if len(hooks.list) > 0 {
		fmt.Println("Every acknowledged sale of a watched program reached its receiver; no receiver got another program's event.")
	}
	return nil
}

// program is one seeded program with a customer (click, then lead) its sales are credited to.
type program struct {
	key, affiliateURL, customer string
}

// setup seeds n programs; the watched ones get their webhook endpoint before their customer's click and
// lead, so that their lead.created is delivered too.
func setup(ctx context.Context, pool *sqlx.DB, base string, n int, hooks *hooks) ([]program, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	progs := make([]program, n)
	for i := range progs {
		r, err := seed.Run(ctx, pool, seed.Options{CommissionType: "percent", CommissionRate: "10"})
		if err != nil {
			return nil, err
		}
		hooks.seeded(i, r.ProgramID)
		if hooks.watched(i) {
			if err := hooks.register(ctx, client, base, i, r.ProgramID, r.AccountToken); err != nil {
				return nil, err
			}
		}
		var out struct {
			ClickID string `json:"click_id"`
		}
		if s, err := post(ctx, client, base+"/api/v1/track/click", fmt.Sprintf(`{"affiliate_url":%q}`, r.AffiliateURL),
			map[string]string{"X-Forwarded-For": randomIP()}, &out); err != nil || s != http.StatusOK {
			return nil, fmt.Errorf("setup click: %d %v", s, err)
		}
		customer := fmt.Sprintf("chaos-customer-%d", i)
		if s, err := post(ctx, client, base+"/api/v1/track/lead", fmt.Sprintf(`{"click_id":%q,"customer_key":%q}`, out.ClickID, customer),
			map[string]string{"Authorization": "Bearer " + r.APIKey, "X-Forwarded-For": randomIP()}, nil); err != nil || s != http.StatusOK {
			return nil, fmt.Errorf("setup lead: %d %v", s, err)
		}
		progs[i] = program{key: r.APIKey, affiliateURL: r.AffiliateURL, customer: customer}
	}
	return progs, nil
}

// tally counts one event type's answers and keeps the ids of the acknowledged events.
type tally struct {
	name                                       string
	mu                                         sync.Mutex
	requests, status5xx, status4xx, connErrors int
	acked                                      map[string]bool
	byStatus                                   map[int]int // the failed answers by status
}

func newTally(name string) *tally {
	return &tally{name: name, acked: map[string]bool{}, byStatus: map[int]int{}}
}

func (t *tally) add(status int, err error, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	switch {
	case err != nil:
		t.connErrors++
	case status >= 200 && status < 300:
		t.acked[id] = true
	case status >= 500:
		t.status5xx++
		t.byStatus[status]++
	default:
		t.status4xx++
		t.byStatus[status]++
	}
}

// statuses lists the answers of one class (5 for 5xx, 4 for 4xx) by status, e.g. " (500: 3, 503: 12)".
func (t *tally) statuses(class int) string {
	codes := slices.DeleteFunc(slices.Sorted(maps.Keys(t.byStatus)), func(c int) bool { return c/100 != class })
	if len(codes) == 0 {
		return ""
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d: %d", c, t.byStatus[c])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (t *tally) ids() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.acked))
	for id := range t.acked {
		ids = append(ids, id)
	}
	return ids
}

// faultLog records each fault and when the service was back from it: the first 2xx answer after the last
// failure (5xx or connection error) of a request sent after the fault.
type faultLog struct {
	mu   sync.Mutex
	list []*fault
}

type fault struct {
	name                string
	at, backAt, firstOK time.Time
}

func (l *faultLog) add(name string) *fault {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := &fault{name: name, at: time.Now()}
	l.list = append(l.list, f)
	return f
}

func (l *faultLog) back(f *fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f.backAt = time.Now()
}

// latest is the last fault before a request sent at sent (nil before the first).
func (l *faultLog) latest(sent time.Time) *fault {
	for i := len(l.list) - 1; i >= 0; i-- {
		if sent.After(l.list[i].at) {
			return l.list[i]
		}
	}
	return nil
}

// ok notes a 2xx answer to a request sent at sent: the service is back from the latest fault unless a
// later request fails again.
func (l *faultLog) ok(sent time.Time) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.latest(sent); f != nil && f.firstOK.IsZero() {
		f.firstOK = now
	}
}

// failed notes a 5xx or a connection error for a request sent at sent: a 2xx seen before it (a request
// that slipped through while the fault was still taking hold) did not mean the service was back.
func (l *faultLog) failed(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.latest(sent)
	if f == nil || f.firstOK.IsZero() || !sent.After(f.firstOK) || l.latest(time.Now()) != f {
		return // not yet back, sent before the 2xx, or failed by the next fault
	}
	f.firstOK = time.Time{}
}

// server is the reftrackd process under test; its output goes to a log file in the run's directory.
type server struct {
	bin, log, base string
	env            []string
	cmd            *exec.Cmd
	exited         chan struct{}
}

func (s *server) start() error {
	out, err := os.OpenFile(s.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	s.cmd = exec.Command(s.bin, "serve")
	s.cmd.Env, s.cmd.Stdout, s.cmd.Stderr = s.env, out, out
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	s.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); out.Close(); close(exited) }(s.cmd)
	return nil
}

func (s *server) kill() error {
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-s.exited
	return nil
}

// stop ends the server with SIGTERM (its graceful shutdown), SIGKILL after 10 s.
func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

func (s *server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if res, err := http.Get(s.base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond) // polling a process we started; there is nothing to await
	}
	return fmt.Errorf("reftrackd did not become ready (log: %s)", s.log)
}

// post sends a JSON body and returns the status; out, when not nil, receives a 2xx answer decoded.
func post(ctx context.Context, client *http.Client, u, body string, headers map[string]string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode/100 == 2 && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return 0, err
		}
	}
	return res.StatusCode, nil
}

func createDatabase(ctx context.Context, adminURL, name string) error {
	admin, err := sqlx.Open("postgres", adminURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name))
	return err
}

// randomIP is a visitor address in 10.0.0.0/8 (each click a new visitor, so each acknowledged click is a
// new row).
func randomIP() string {
	return fmt.Sprintf("10.%d.%d.%d", rand.IntN(256), rand.IntN(256), 1+rand.IntN(254))
}

// pause is a client's short wait after a failure, as a real client would back off: during an outage a
// refused connection comes back at once and the clients would otherwise only spin.
func pause() { time.Sleep(20 * time.Millisecond) }

// sleepUntil waits for t; false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}
