package events

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"
)

// RollUp folds the event-count deltas written since the last call into the hourly and daily counts
// (roll_up_event_counts, migration 000009) and returns how many it folded. Counts read through the
// *_live views are exact whether or not it has run; rolling up keeps the deltas few, so reads stay fast.
func RollUp(ctx context.Context, db sqlx.QueryerContext) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, db, &n, `SELECT roll_up_event_counts()`)
	return n, err
}

// RollUpEvery calls RollUp every interval until ctx ends; failures are logged and tried again at the
// next tick (the deltas wait, and every count stays exact meanwhile).
func RollUpEvery(ctx context.Context, db sqlx.QueryerContext, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := RollUp(ctx, db); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "event counts not rolled up", "err", err)
			}
		}
	}
}
