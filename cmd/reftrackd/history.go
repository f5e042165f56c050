package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/platform/config"
)

// keepHistory makes the click partitions ahead before the server listens (a click needs its month's
// partition), then in the background, at once and every clicks.MaintenanceEvery until stop is called,
// makes them again and, with CLICK_RETENTION_MONTHS, drops the expired months (which may take minutes
// the first time: never before listening). Replicas may all do it: the database serialises them.
// passed, when not nil, learns that a background pass ended (tests).
func keepHistory(ctx context.Context, cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time,
	passed func()) (stop func(), err error) {
	prepare := func(ctx context.Context) error {
		made, err := clicks.Prepare(ctx, pool, clock(), clicks.PrepareAhead)
		if made > 0 {
			logger.Info("click partitions made", "months", made)
		}
		return err
	}
	if err := prepare(ctx); err != nil {
		return nil, err
	}
	return every(ctx, clicks.MaintenanceEvery, true, func(ctx context.Context) {
		if passed != nil {
			defer passed()
		}
		if err := prepare(ctx); err != nil {
			logger.Warn("click history", "err", err)
			return
		}
		cutoff, err := clicks.Cutoff(ctx, pool, clock(), cfg.ClickRetentionMonths)
		if err != nil || cutoff.IsZero() {
			if err != nil {
				logger.Warn("click history", "err", err)
			}
			return
		}
		expired, err := clicks.Expire(ctx, pool, cutoff)
		for _, e := range expired {
			logger.Info("click month dropped", "month", e.Month.Format("2006-01"), "kept", e.Kept)
		}
		if err != nil {
			logger.Warn("click history", "err", err)
		}
	}), nil
}
