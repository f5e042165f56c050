package main

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/api/webhookdata"
	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/seal"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// webhooksCleanEvery is how often the events past their 30 days are dropped.
const webhooksCleanEvery = time.Hour

// requestsInFlight counts the requests this replica is handling, and their mean over the last busyWindow,
// so that its webhook worker can yield to them (webhooks.Worker.Busy). The mean, not the count of the
// moment: under a saturating load the count dips below the threshold now and then (between one answer
// and the next request), and each dip let the worker claim a full batch; make bench's sale with an
// endpoint lost 22 – 32 % in such runs.
type requestsInFlight struct {
	next http.Handler
	now  func() time.Time

	mu      sync.Mutex
	n       int64         // in flight now
	changed time.Time     // when n last changed (or was last accounted for)
	start   time.Time     // the current window's start
	area    time.Duration // n integrated over the current window, up to changed
	mean    float64       // n's mean over the last complete window
}

// busyWindow is how long the mean is taken over: long enough to see through the gaps between requests,
// short enough that deliveries resume within half a second of a load's end.
const busyWindow = 250 * time.Millisecond

func (r *requestsInFlight) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.add(1)
	defer r.add(-1)
	r.next.ServeHTTP(w, req)
}

func (r *requestsInFlight) add(d int64) {
	r.mu.Lock()
	r.advance(r.now())
	r.n += d
	r.mu.Unlock()
}

// advance accounts for the time since n last changed, and closes the window once it is busyWindow long.
func (r *requestsInFlight) advance(now time.Time) {
	if r.start.IsZero() {
		r.start, r.changed = now, now
		return
	}
	r.area += time.Duration(r.n) * now.Sub(r.changed)
	r.changed = now
	if span := now.Sub(r.start); span >= busyWindow {
		r.mean = float64(r.area) / float64(span)
		r.start, r.area = now, 0
	}
}

// busy says whether the replica's requests outnumbered its cores four to one over the last window: they
// then queue for the CPU (theirs and PostgreSQL's), and the deliveries wait instead. On 2 cores
// (rate × latency): 200 sales a second keep about one in flight, half of what the machine can record
// about three, a saturating load of sixteen connections nearly all sixteen.
func (r *requestsInFlight) busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(r.now())
	return r.mean >= float64(4*runtime.GOMAXPROCS(0))
}

// newWebhooks builds the endpoint store and this replica's delivery worker. In production only public
// https destinations are reached, the dialer checking every address it connects to; in development also
// http and loopback (a receiver on this machine).
func newWebhooks(cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time, m *metrics.Metrics,
	version string, busy func() bool) (*webhooks.Store, *webhooks.Worker, error) {
	key := cfg.WebhookSecretsKey
	if key == nil {
		key = seal.DevelopmentKey // config refuses production without WEBHOOK_SECRETS_KEY
	}
	sealer, err := seal.New(key)
	if err != nil {
		return nil, nil, err
	}
	policy := egress.Policy{Development: !cfg.Production()}
	// Events' data is shaped by the API's own wire mapping: a webhook's data is the API's answer.
	store := &webhooks.Store{DB: pool, Policy: policy, Sealer: sealer, Shape: webhookdata.Data}
	worker := store.NewWorker(clock, logger, m, version)
	worker.Busy = busy
	return store, worker, nil
}

// runWebhooks delivers in the background and drops expired events every webhooksCleanEvery, until stop is
// called; stop waits for the attempts in flight to be recorded (each within webhooks.Timeout).
func runWebhooks(ctx context.Context, pool *sqlx.DB, w *webhooks.Worker, logger *slog.Logger, clock func() time.Time) (stop func()) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { w.Run(runCtx) })
	stopClean := every(ctx, webhooksCleanEvery, true, func(ctx context.Context) {
		if n, err := webhooks.Clean(ctx, pool, clock()); err != nil {
			logger.Warn("expired webhook events not dropped", "err", err)
		} else if n > 0 {
			logger.Info("expired webhook events dropped", "count", n)
		}
	})
	return func() { stopClean(); cancel(); wg.Wait() }
}
