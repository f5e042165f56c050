// Command loadgen is the load benchmark behind `make bench`. Each run makes a fresh database, starts the
// real reftrackd on it, measures the same PostgreSQL with pgbench (a single-row INSERT at 64 clients, the
// anchor of the click and lead routes; the built-in TPC-B-like transaction at 16 clients, the anchor of
// the sale and refund routes), then drives each route over real HTTP at its anchor's concurrency, with
// its own Go load generator and with wrk when installed. It prints, per route and tool, the request rate,
// p50, p99, the ratio to the anchor, the server's CPU time per 1,000 requests, and the server's peak
// RSS; with -runs N, each run and then the spread. After each load it checks that every acknowledged
// event is stored.
//
// Requests come from many client IPs (X-Forwarded-For through a trusted proxy range) and a few browser
// User-Agents, as real traffic does; the click-ua load drives the click route again with a browser
// User-Agent of its own per request (pkg/useragent's corpus, versions varied), which the server's
// User-Agent cache never holds. Sales and refunds are spread over many programs' keys, so the
// per-IP and per-key rate limits apply as in production without refusing the benchmark.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "reftrackd", "bin/reftrackd", "reftrackd binary to run")
	flag.StringVar(&o.adminURL, "admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "server-level Postgres DSN")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each load")
	flag.IntVar(&o.runs, "runs", 1, "runs, each on a fresh database and server; several give the spread")
	flag.IntVar(&o.programs, "programs", 1000, "programs whose keys share the sale and refund load (120 per key and minute)")
	flag.StringVar(&o.tools, "tools", "go,wrk", "load generators: go and/or wrk (wrk is skipped when not installed)")
	flag.StringVar(&o.routes, "routes", "click,click-ua,lead,sale,refund,sale-hook",
		"routes to drive (click-ua: clicks each with a User-Agent of its own; sale-hook: sales with a webhook endpoint on every program, then the deliveries' lag and a backlog's drain)")
	flag.StringVar(&o.browsers, "browsers", "pkg/useragent/testdata/devices-sample.txt", "browser User-Agents, one a line, that the click-ua load varies")
	flag.StringVar(&o.profile, "profile", "", "directory for a CPU profile of reftrackd during each load (through PPROF_ADDR)")
	flag.Parse()
	if _, err := exec.LookPath("wrk"); err != nil {
		o.tools = strings.Join(slices.DeleteFunc(strings.Split(o.tools, ","), func(t string) bool { return t == "wrk" }), ",")
	}
	if o.has(o.routes, "click-ua") {
		var err error
		if o.agents, err = loadBrowsers(o.browsers); err != nil {
			fmt.Fprintln(os.Stderr, "loadgen:", err)
			os.Exit(1)
		}
	}
	if err := bench(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type options struct {
	bin, adminURL, tools, routes, profile, browsers string
	duration                                        time.Duration
	runs, programs                                  int
	agents                                          *browsers // the click-ua load's User-Agents
}

func (o options) has(list, name string) bool { return slices.Contains(strings.Split(list, ","), name) }

func bench(ctx context.Context, o options) error {
	fmt.Printf("# Load benchmark, %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Printf("Machine: %s. Each load lasts %s; PostgreSQL's default durability (every commit flushed). "+
		"Anchors: pgbench on the same PostgreSQL in the same run, just before the routes they anchor.\n\n", machine(), o.duration)
	var all []runResult
	for i := 1; i <= o.runs; i++ {
		r, err := benchRun(ctx, o, i)
		if err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		r.print(i)
		all = append(all, r)
	}
	if len(all) > 1 {
		printSpread(all)
	}
	return nil
}
