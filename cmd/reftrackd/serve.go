package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	"github.com/reftrack/reftrack/pkg/portalpage"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/useragent"
	"github.com/reftrack/reftrack/sdk"
	"github.com/reftrack/reftrack/tracker"
)

func (e *env) serveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (the default command)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.serve(cmd.Context())
		},
	}
}

func (e *env) serve(ctx context.Context) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	return e.serveWith(ctx, cfg, e.logger(cfg), nil)
}

// rollUpEvery is how often the counts' deltas are folded into the hourly, daily and monthly counts (pkg/events
// RollUp). A fold costs one upsert per program, hour, partner and currency in each of the four tables,
// however many deltas it folds: under a steady load of many programs, folding every 5 s rather than every
// second upserts a fifth as often for the same deltas (docs/performance.md, issue 43). Readers add the
// deltas still waiting, so every count stays exact meanwhile.
const rollUpEvery = 5 * time.Second

// serveWith serves until ctx ends, then shuts down gracefully: in-flight requests get
// cfg.ShutdownTimeout to finish.
func (e *env) serveWith(ctx context.Context, cfg config.Config, logger *slog.Logger, shop *seed.Result) error {
	pool, err := db.Open(ctx, cfg.DatabaseURL, db.PoolOptions{MaxOpenConns: cfg.DBMaxOpenConns, MaxIdleConns: cfg.DBMaxOpenConns,
		StatementTimeout: cfg.DBStatementTimeout, LockTimeout: cfg.DBLockTimeout})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.CheckCurrent(ctx, pool.DB); err != nil {
		return err
	}
	var draining atomic.Bool
	readPool, err := openReadPool(ctx, cfg, logger) // nil without READ_DATABASE_URL
	if err != nil {
		return err
	}
	if readPool != nil {
		defer readPool.Close()
	}
	clock := time.Now // the server's one clock
	limiter, closeLimiter, err := newLimiter(ctx, cfg, logger, clock)
	if err != nil {
		return err
	}
	defer closeLimiter()
	defer announce(ctx, cfg, pool, logger, clock)() // after the limiter: the warning is about it
	stopHistory, err := keepHistory(ctx, cfg, pool, logger, clock, e.onHistoryPass)
	if err != nil {
		return err
	}
	defer stopHistory()
	deps, err := collaborators(ctx, cfg, pool, readPool, logger, clock, limiter)
	if err != nil {
		return err
	}
	if shop != nil && !cfg.Production() {
		// The demo shop reports to this server as a brand's backend would: the Go SDK with the demo key.
		deps.Demo = &demoshop.Shop{DB: pool, ProgramID: shop.ProgramID, Brand: sdk.New(shop.APIKey, sdk.WithBaseURL(cfg.BaseURL))}
	}
	defer deps.Clicks.Close()  // after the HTTP server below has stopped: finishes the queued clicks
	defer deps.Sales.Close()   // likewise the queued sales
	defer deps.Leads.Close()   // and leads
	defer deps.Refunds.Close() // and refunds
	defer deps.Keys.Close()
	// The counts' deltas are folded in every rollUpEvery; a failure waits for the next tick (the deltas
	// wait, and every count stays exact meanwhile: readers add the deltas still waiting).
	defer every(ctx, rollUpEvery, false, func(ctx context.Context) {
		if _, err := events.RollUp(ctx, pool); err != nil && ctx.Err() == nil {
			logger.WarnContext(ctx, "event counts not rolled up", "err", err)
		}
	})()
	defer keepLedger(ctx, pool, logger, clock)()
	inFlight := &requestsInFlight{now: clock}
	store, worker, err := newWebhooks(cfg, pool, logger, clock, deps.Metrics, deps.Spec.Info.Version, inFlight.busy)
	if err != nil {
		return err
	}
	defer runWebhooks(ctx, pool, worker, logger, clock)() // after the HTTP server has stopped
	sender, mailbox, err := newMail(cfg, clock)
	if err != nil {
		return err
	}
	wakeMail, stopMail := runMail(ctx, newCourier(pool, sender, logger, clock), logger)
	defer stopMail() // after the HTTP server has stopped
	deps.Webhooks, deps.Mailbox = store, mailbox
	deps.Changed, deps.MailQueued = worker.Wake, wakeMail
	deps.Draining = draining.Load
	handler, err := api.New(ctx, deps)
	if err != nil {
		return err
	}
	inFlight.next = handler
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	if cfg.PprofAddr != "" {
		addr, stop, err := startProfiler(cfg.PprofAddr, logger)
		if err != nil {
			ln.Close()
			return err
		}
		defer stop()
		if e.onPprof != nil {
			e.onPprof(addr)
		}
	}
	srv := api.NewHTTPServer(cfg.ListenAddr, inFlight)
	logger.Info("reftrackd listening", "addr", ln.Addr().String(), "base_url", cfg.BaseURL, "env", cfg.Env)
	if e.onListen != nil {
		e.onListen(ln.Addr().String())
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Drain: /livez answers 503 at once so that balancers take this replica out, while every request
	// still gets its answer (on connections that then close) until the delay has passed.
	draining.Store(true)
	srv.SetKeepAlivesEnabled(false)
	logger.Info("draining", "delay", cfg.DrainDelay.String())
	if e.drainWait != nil {
		e.drainWait(cfg.DrainDelay)
	} else {
		time.Sleep(cfg.DrainDelay)
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// collaborators builds what the HTTP layer uses.
func collaborators(ctx context.Context, cfg config.Config, pool, readPool *sqlx.DB, logger *slog.Logger, clock func() time.Time,
	limiter *ratelimit.Limiter) (api.Deps, error) {
	login, err := identity.NewLogin(ctx, identity.LoginOptions{
		Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret, BaseURL: cfg.BaseURL,
		Production: cfg.Production(), Now: clock,
	})
	if err != nil {
		return api.Deps{}, err
	}
	script, err := tracker.Load()
	if err != nil {
		return api.Deps{}, err
	}
	assets, err := dashboard.Load()
	if err != nil {
		return api.Deps{}, err
	}
	portalAssets, err := portalpage.Load()
	if err != nil {
		return api.Deps{}, err
	}
	spec, err := openapi.Spec()
	if err != nil {
		return api.Deps{}, err
	}
	m := metrics.New()
	return api.Deps{
		DB: pool, ReadDB: readPool, Logger: logger, Config: cfg, Clock: clock, Limiter: limiter, Login: login, Metrics: m, Spec: spec,
		Tracker: script, Dashboard: assets, Portal: portalAssets, Devices: useragent.NewParser(4096),
		Clicks:  clicks.NewRecorder(pool, logger, clicks.Writers, clicks.MaxBatch, m.ClickBatch),
		Leads:   leads.NewRecorder(pool, logger, leads.MaxBatch, m.LeadBatch),
		Sales:   sales.NewRecorder(pool, logger, clock, sales.MaxBatch, m.SaleBatch),
		Refunds: sales.NewRefundRecorder(pool, logger, clock, sales.MaxBatch, m.RefundBatch),
		Keys:    apikeys.NewLookups(pool, apikeys.LookupWriters, apikeys.LookupMaxBatch),
		Origins: origins.New(pool, clock), Stripe: &payments.Stripe{DB: pool, Log: logger, Now: clock},
		DNS: net.DefaultResolver,
	}, nil
}

// newLimiter counts in process, or in Redis when REDIS_URL is set so that every replica shares the counts.
func newLimiter(ctx context.Context, cfg config.Config, logger *slog.Logger, clock func() time.Time) (*ratelimit.Limiter, func(), error) {
	if cfg.RedisURL == "" {
		return ratelimit.New(ratelimit.NewMemory(), clock), func() {}, nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	client := redis.NewClient(opts)
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("connect to Redis (REDIS_URL): %w", err)
	}
	logger.Info("rate limits shared through Redis", "addr", opts.Addr)
	return ratelimit.New(ratelimit.NewRedis(client, "reftrack:rl:"), clock), func() { client.Close() }, nil
}
