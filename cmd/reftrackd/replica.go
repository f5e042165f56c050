package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/platform/config"
)

// openReadPool opens the pool on the read replica when READ_DATABASE_URL is set (nil, nil when it is
// not), with the primary pool's settings. The server does not start unless the replica answers and has
// this build's schema: a replica that is down or a URL naming the wrong database is a configuration
// error, better found at start than on the dashboard.
func openReadPool(ctx context.Context, cfg config.Config, logger *slog.Logger) (*sqlx.DB, error) {
	if cfg.ReadDatabaseURL == "" {
		return nil, nil
	}
	pool, err := db.Open(ctx, cfg.ReadDatabaseURL, db.PoolOptions{MaxOpenConns: cfg.DBMaxOpenConns, MaxIdleConns: cfg.DBMaxOpenConns,
		StatementTimeout: cfg.DBStatementTimeout, LockTimeout: cfg.DBLockTimeout})
	if err != nil {
		return nil, fmt.Errorf("read replica (READ_DATABASE_URL): %w", err)
	}
	if err := db.CheckCurrent(ctx, pool.DB); err != nil {
		pool.Close()
		return nil, fmt.Errorf("read replica (READ_DATABASE_URL): %w", err)
	}
	logger.InfoContext(ctx, "read replica (READ_DATABASE_URL) used for reads: the events list, its daily counts and the dashboard's readiness",
		"max_open_conns", cfg.DBMaxOpenConns)
	return pool, nil
}
