package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// The sale-hook load is the sale load with every seller's program sending its events to a webhook
// endpoint on this machine (issue 28: recording a sale with an endpoint configured loses at most 10 %).
// The server delivers them while the load runs. Afterwards the run waits for every delivery, reads the
// first attempts' lag, then measures how fast one replica drains a backlog: the endpoints are disabled,
// sales written (their events kept, nothing sent), the endpoints enabled and `recover` queues them all.

// hookReceiver is a local webhook receiver that answers 204 and counts what it got.
type hookReceiver struct {
	srv      *http.Server
	url      string
	received atomic.Int64
	mu       sync.Mutex
	seen     map[string]int // webhook-id → times received
}

func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hookReceiver{url: "http://" + ln.Addr().String() + "/hooks", seen: map[string]int{}}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck // a receiver that reads what it is sent
		id := r.Header.Get("webhook-id")
		h.mu.Lock()
		h.seen[id]++
		h.mu.Unlock()
		h.received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}), ReadHeaderTimeout: 10 * time.Second}
	go h.srv.Serve(ln) //nolint:errcheck // ends with Close
	return h, nil
}

func (h *hookReceiver) duplicates() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.seen {
		n += c - 1
	}
	return n
}

// addEndpoints gives every seller's program an endpoint for url (the account's token, as a brand would).
func addEndpoints(f *fixture, url string) error {
	client := &http.Client{Timeout: 30 * time.Second}
	for i, s := range f.sellers {
		var out struct {
			Data struct {
				ID int64 `json:"id"`
			} `json:"data"`
		}
		if err := post(client, fmt.Sprintf("%s/api/v1/programs/%d/webhook-endpoints", f.base, s.programID), fmt.Sprintf(`{"url":%q}`, url),
			map[string]string{"Authorization": "Bearer " + s.account}, &out); err != nil {
			return fmt.Errorf("endpoint of seller %d: %w", i, err)
		}
		f.sellers[i].endpoint = out.Data.ID
	}
	return nil
}

// setEndpoints enables or disables every seller's endpoint.
func setEndpoints(f *fixture, enabled bool) error {
	client := &http.Client{Timeout: 30 * time.Second}
	for _, s := range f.sellers {
		req, err := http.NewRequest(http.MethodPatch, fmt.Sprintf("%s/api/v1/webhook-endpoints/%d", f.base, s.endpoint),
			strings.NewReader(fmt.Sprintf(`{"enabled":%t}`, enabled)))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+s.account)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("endpoint %d: %s", s.endpoint, res.Status)
		}
	}
	return nil
}

// recoverEndpoints queues every seller's events since since again.
func recoverEndpoints(f *fixture, since time.Time) error {
	client := &http.Client{Timeout: 30 * time.Second}
	for _, s := range f.sellers {
		if err := post(client, fmt.Sprintf("%s/api/v1/webhook-endpoints/%d/recover", f.base, s.endpoint),
			fmt.Sprintf(`{"since":%q}`, since.UTC().Format(time.RFC3339Nano)), map[string]string{"Authorization": "Bearer " + s.account}, nil); err != nil {
			return err
		}
	}
	return nil
}

// drained waits (up to limit) until every event has been picked up by a worker (fanned out to its
// endpoints) and no delivery is pending.
func drained(ctx context.Context, pool *sqlx.DB, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if count(ctx, pool, `SELECT (SELECT count(*) FROM webhook_events WHERE data IS NULL)
				+ (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')`) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("webhook deliveries still pending after %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// hookFigures are the webhook measurements of a run.
type hookFigures struct {
	delivered, duplicates, failedAttempts int
	lagP50, lagP99                        time.Duration // event to first attempt, during the sale-hook load
	drainN                                int
	drainTook                             time.Duration
	quietRate                             float64       // sales per second with the endpoints disabled (events written, nothing sent)
	pacedP50, pacedP99                    time.Duration // event to first attempt, sales at pacedRate a second
}

// pacedRate is the sale rate at which the lag is read without a backlog: about a tenth of what the
// machine can record, as a busy program would send.
const pacedRate = 200

func (h hookFigures) String() string {
	rate := 0.0
	if h.drainTook > 0 {
		rate = float64(h.drainN) / h.drainTook.Seconds()
	}
	return fmt.Sprintf("webhooks: %d delivered during and after the sale-hook load (%d received twice, %d failed attempts); "+
		"event to first attempt p50 %.1f ms, p99 %.1f ms under the saturating load, p50 %.1f ms, p99 %.1f ms at %d sales/s; "+
		"sales with the endpoints disabled (events written, nothing sent): %.0f/s; "+
		"a backlog of %d drained in %.2f s by one replica: %.0f deliveries/s",
		h.delivered, h.duplicates, h.failedAttempts, float64(h.lagP50.Microseconds())/1000, float64(h.lagP99.Microseconds())/1000,
		float64(h.pacedP50.Microseconds())/1000, float64(h.pacedP99.Microseconds())/1000, pacedRate,
		h.quietRate, h.drainN, h.drainTook.Seconds(), rate)
}

// lag reads the first attempts' lag (event to first attempt) of the deliveries made since since.
func lag(ctx context.Context, pool *sqlx.DB, since time.Time) (p50, p99 time.Duration, err error) {
	var a, b float64
	err = pool.QueryRowContext(ctx, `SELECT COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY l), 0),
			COALESCE(percentile_cont(0.99) WITHIN GROUP (ORDER BY l), 0)
		FROM (SELECT extract(epoch FROM min(a.attempted_at) - ev.occurred_at) AS l
			FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_attempts a ON a.delivery_id = d.id
			WHERE ev.occurred_at >= $1 GROUP BY d.id, ev.occurred_at) x`, since).Scan(&a, &b)
	return time.Duration(a * float64(time.Second)), time.Duration(b * float64(time.Second)), err
}

// measureHooks reads the load's deliveries, then drains a backlog: sales recorded with the endpoints
// disabled, queued at once by recover.
func measureHooks(ctx context.Context, pool *sqlx.DB, f *fixture, rc *hookReceiver, loadStart time.Time, d time.Duration) (hookFigures, error) {
	var h hookFigures
	if err := drained(ctx, pool, 2*time.Minute); err != nil {
		return h, err
	}
	var err error
	if h.lagP50, h.lagP99, err = lag(ctx, pool, loadStart); err != nil {
		return h, err
	}
	if err := setEndpoints(f, false); err != nil {
		return h, err
	}
	backlogStart := time.Now()
	st, err := goSalesPrefixed(ctx, pool, f, 16, d/2, "backlog-")
	if err != nil {
		return h, err
	}
	h.quietRate = float64(st.ok) / (d / 2).Seconds()
	if err := setEndpoints(f, true); err != nil {
		return h, err
	}
	before := rc.received.Load()
	start := time.Now()
	if err := recoverEndpoints(f, backlogStart); err != nil {
		return h, err
	}
	if err := drained(ctx, pool, 5*time.Minute); err != nil {
		return h, err
	}
	h.drainTook = time.Since(start)
	h.drainN = int(rc.received.Load() - before)
	// The lag without a backlog: sales at pacedRate a second, each delivered as it comes.
	pacedStart := time.Now()
	tick := time.NewTicker(time.Second / pacedRate)
	defer tick.Stop()
	if _, err := goSalesPaced(ctx, pool, f, 4, d/2, "paced-", tick.C); err != nil {
		return h, err
	}
	if err := drained(ctx, pool, 2*time.Minute); err != nil {
		return h, err
	}
	if h.pacedP50, h.pacedP99, err = lag(ctx, pool, pacedStart); err != nil {
		return h, err
	}
	h.delivered = int(rc.received.Load())
	h.duplicates = rc.duplicates()
	h.failedAttempts = count(ctx, pool, `SELECT count(*) FROM webhook_attempts WHERE NOT succeeded`)
	return h, nil
}
