package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
)

// ledgerEvery is how often the ledger's background work runs: docs/rules.md#the-ledger-and-payouts gives auto
// approval a minute to be written down (every read says approved from the instant it takes effect, whatever
// this has done).
const ledgerEvery = time.Minute

// keepLedger rejects what a sale racing a ban left open (ledger.SweepBanned), writes down the auto
// approvals that took effect (ledger.AutoApprove) and drops the
// Idempotency-Key answers older than a day, at once and every ledgerEvery until stop is called. Replicas
// may all run it: rows another holds are skipped, and both statements are idempotent.
func keepLedger(ctx context.Context, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time) (stop func()) {
	return every(ctx, ledgerEvery, true, func(ctx context.Context) {
		if n, err := ledger.SweepBanned(ctx, pool, clock()); err != nil {
			logger.Warn("banned partners' commissions not rejected", "err", err)
		} else if n > 0 {
			logger.Info("banned partners' commissions rejected", "count", n)
		}
		if n, err := ledger.AutoApprove(ctx, pool, clock()); err != nil {
			logger.Warn("commissions not auto-approved", "err", err)
		} else if n > 0 {
			logger.Info("commissions auto-approved", "count", n)
		}
		if _, err := idempotency.Expire(ctx, pool, clock()); err != nil {
			logger.Warn("idempotency keys not expired", "err", err)
		}
	})
}
