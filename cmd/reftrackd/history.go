package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/platform/config"
)

// keepHistory makes the click partitions ahead and, with CLICK_RETENTION_MONTHS, drops the expired months:
// once before the server listens (a click needs its month's partition), then every
// clicks.MaintenanceEvery until stop is called. Replicas may all do it: the database serialises them.
func keepHistory(ctx context.Context, cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time) (stop func(), err error) {
	run := func(ctx context.Context) error {
		now := clock()
		made, err := clicks.Prepare(ctx, pool, now, clicks.PrepareAhead)
		if err != nil {
			return err
		}
		if made > 0 {
			logger.Info("click partitions made", "months", made)
		}
		cutoff, err := clicks.Cutoff(ctx, pool, now, cfg.ClickRetentionMonths)
		if err != nil || cutoff.IsZero() {
			return err
		}
		expired, err := clicks.Expire(ctx, pool, cutoff)
		for _, e := range expired {
			logger.Info("click month dropped", "month", e.Month.Format("2006-01"), "kept", e.Kept)
		}
		return err
	}
	if err := run(ctx); err != nil {
		return nil, err
	}
	return every(ctx, clicks.MaintenanceEvery, func(ctx context.Context) {
		if err := run(ctx); err != nil {
			logger.Warn("click history", "err", err)
		}
	}), nil
}
