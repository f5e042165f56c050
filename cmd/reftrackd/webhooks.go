package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// webhooksCleanEvery is how often the events past their 30 days are dropped.
const webhooksCleanEvery = time.Hour

// newWebhooks builds the endpoint store and this replica's delivery worker. In production only public
// https destinations are reached, the dialer checking every address it connects to; in development also
// http and loopback (a receiver on this machine).
func newWebhooks(cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time, m *metrics.Metrics,
	version string) (*webhooks.Store, *webhooks.Worker, error) {
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
	worker := &webhooks.Worker{DB: pool, Client: policy.Client(webhooks.Timeout), Sealer: sealer, Now: clock,
		Log: logger, Observe: m, UserAgent: "reftrack-webhooks/" + version}
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
