package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

var userAgents = []string{
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
}

// stats are one load's results.
type stats struct {
	took      time.Duration
	latencies []time.Duration
	ok        int
	errors    int
	fixed     []time.Duration // p50, p99, max as wrk reports them
	firstErr  string
}

func (s *stats) rate() float64 { return float64(s.ok) / s.took.Seconds() }

func (s *stats) quantile(p int) time.Duration {
	switch {
	case s.fixed != nil:
		return map[int]time.Duration{50: s.fixed[0], 99: s.fixed[1], 100: s.fixed[2]}[p]
	case len(s.latencies) == 0:
		return 0
	}
	i := (len(s.latencies)*p + 99) / 100
	return s.latencies[min(max(i-1, 0), len(s.latencies)-1)]
}

func (s *stats) pct(p int) string { return ms(s.quantile(p)) }

func ms(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// drive runs c workers sending requests for d and collects latencies.
func drive(c int, d time.Duration, send func(*http.Client, uint64) error) *stats {
	return driveN(c, d, 0, send)
}

// driveN is drive that also stops after limit requests (0: no limit); send gets 0, 1, 2, ….
func driveN(c int, d time.Duration, limit uint64, send func(*http.Client, uint64) error) *stats {
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
				i := n.Add(1) - 1
				if limit > 0 && i >= limit {
					break
				}
				t0 := time.Now()
				if err := send(client, i); err != nil {
					local.errors++
					if local.firstErr == "" {
						local.firstErr = err.Error()
					}
					continue
				}
				local.ok++
				local.latencies = append(local.latencies, time.Since(t0))
			}
			mu.Lock()
			all.ok += local.ok
			all.errors += local.errors
			if all.firstErr == "" {
				all.firstErr = local.firstErr
			}
			all.latencies = append(all.latencies, local.latencies...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	all.took = time.Since(start)
	sort.Slice(all.latencies, func(i, j int) bool { return all.latencies[i] < all.latencies[j] })
	if all.errors > 0 {
		fmt.Fprintf(os.Stderr, "loadgen: %d errors, the first: %s\n", all.errors, all.firstErr)
	}
	return &all
}

// post sends a JSON body and wants a 2xx; out, when not nil, receives the decoded answer.
func post(client *http.Client, u, body string, headers map[string]string, out any) error {
	h := make(http.Header, len(headers)+1)
	for k, v := range headers {
		h.Set(k, v)
	}
	b, err := send(client, u, body, h)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// send posts body with headers h (canonical keys; Content-Type is added) and returns the answer's body,
// wanting a 2xx. It is the loads' inner loop: the Go load generator shares the machine with the server, so
// it allocates little.
func send(client *http.Client, u, body string, h http.Header) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	h["Content-Type"] = jsonType
	req.Header = h
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	buf := bytes.NewBuffer(make([]byte, 0, 512))
	if _, err := buf.ReadFrom(res.Body); err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("POST %s: %d %s", u, res.StatusCode, bytes.TrimSpace(buf.Bytes()))
	}
	return buf.Bytes(), nil
}

var jsonType = []string{"application/json"}

// member reads a top-level string member of a flat JSON answer without decoding the rest.
func member(body []byte, name string) string {
	key := []byte(`"` + name + `":"`)
	i := bytes.Index(body, key)
	if i < 0 {
		return ""
	}
	rest := body[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// randomIP is a visitor address in 10.0.0.0/8.
func randomIP() string {
	b := make([]byte, 0, 15)
	b = append(b, "10."...)
	b = strconv.AppendInt(b, int64(rand.IntN(256)), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(rand.IntN(256)), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(1+rand.IntN(254)), 10)
	return string(b)
}

// dropDatabase drops the benchmark's database, forcing out whatever is still connected.
func dropDatabase(ctx context.Context, adminURL, name string) {
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		return
	}
	defer admin.Close()
	_, _ = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
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

func count(ctx context.Context, pool *sqlx.DB, q string, args ...any) int {
	var n int
	if err := pool.GetContext(ctx, &n, q, args...); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return -1
	}
	return n
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
	return fmt.Sprintf("%d cores (%s), load generator, reftrackd and PostgreSQL sharing them", cores, model)
}
