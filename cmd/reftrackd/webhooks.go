package main

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// webhooksCleanEvery is how often the events past their 30 days are dropped.
const webhooksCleanEvery = time.Hour

// requestsInFlight counts the requests this replica is handling, so that its webhook worker can yield to
// them (webhooks.Worker.Busy).
type requestsInFlight struct {
	n    atomic.Int64
	next http.Handler
}

func (r *requestsInFlight) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.n.Add(1)
	defer r.n.Add(-1)
	r.next.ServeHTTP(w, req)
}

// busy says whether the replica's requests outnumber its cores four to one: they then queue for the CPU
// (theirs and PostgreSQL's), and the deliveries wait instead. On 2 cores (rate × latency): 200 sales a
// second keep about one in flight, half of what the machine can record about three (eight or more in
// about one sample of a hundred), a saturating load of sixteen connections nearly all sixteen.
func (r *requestsInFlight) busy() bool { return r.n.Load() >= int64(4*runtime.GOMAXPROCS(0)) }

// newWebhooks builds the endpoint store and this replica's delivery worker. In production only public
// https destinations are reached, the dialer checking every address it connects to; in development also
// http and loopback (a receiver on this machine).
func newWebhooks(cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time, m *metrics.Metrics,
	version string, busy func() bool) (*webhooks.Store, *webhooks.Worker, error) {
	key := cfg.WebhookSecretsKey
	if key == nil {
		key = webhooks.DevelopmentKey // config refuses production without WEBHOOK_SECRETS_KEY
	}
	sealer, err := webhooks.NewSealer(key)
	if err != nil {
		return nil, nil, err
	}
	policy := egress.Policy{Development: !cfg.Production()}
	store := &webhooks.Store{DB: pool, Policy: policy, Sealer: sealer}
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
