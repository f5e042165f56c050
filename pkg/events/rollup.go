package events

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// RollUp folds the count deltas written since the last call into the hourly, daily and monthly counts
// (pkg/events/sql/roll_up_performance.sql) and returns how many it folded. Counts read through the *_live
// views are exact whether or not it has run; rolling up keeps the deltas few, so reads stay fast.
func RollUp(ctx context.Context, db sqlx.QueryerContext) (int64, error) {
	var n int64
	err := sqlx.GetContext(ctx, db, &n, `SELECT roll_up_performance()`)
	return n, err
}
