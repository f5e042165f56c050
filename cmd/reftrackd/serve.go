package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/api"
	"github.com/reftrack/reftrack/pkg/config"
	"github.com/reftrack/reftrack/pkg/ratelimit"
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
	return e.serveWith(ctx, cfg, e.logger(cfg))
}

// serveWith serves until ctx ends, then shuts down gracefully: in-flight requests get
// cfg.ShutdownTimeout to finish.
func (e *env) serveWith(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	pool, err := db.Open(ctx, cfg.DatabaseURL, db.PoolOptions{MaxOpenConns: cfg.DBMaxOpenConns, MaxIdleConns: cfg.DBMaxOpenConns})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.CheckCurrent(ctx, pool.DB); err != nil {
		return err
	}
	limiter, closeLimiter, err := newLimiter(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeLimiter()
	handler, err := api.New(ctx, api.Deps{DB: pool, Logger: logger, Config: cfg, Limiter: limiter})
	if err != nil {
		return err
	}
	defer handler.Close() // after the HTTP server below has stopped: finishes the queued clicks
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	srv := api.NewHTTPServer(cfg.ListenAddr, handler)
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

// newLimiter counts in process, or in Redis when REDIS_URL is set so that every replica shares the counts.
func newLimiter(ctx context.Context, cfg config.Config, logger *slog.Logger) (*ratelimit.Limiter, func(), error) {
	if cfg.RedisURL == "" {
		return ratelimit.New(ratelimit.NewMemory(), nil), func() {}, nil
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
	return ratelimit.New(ratelimit.NewRedis(client, "reftrack:rl:"), nil), func() { client.Close() }, nil
}
