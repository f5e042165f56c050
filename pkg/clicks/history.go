package clicks

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
)

// Clicks are partitioned by month (the schema: db/migrations; the functions: pkg/clicks/sql). The server makes the months ahead (PrepareAhead
// months from the current one) at start and every MaintenanceEvery; with a retention set it drops the
// months past it (Expire), keeping the clicks a customer, lead or sale points at.
const (
	PrepareAhead     = 4
	MaintenanceEvery = time.Hour
)

// The maintenance calls and their inputs.
var (
	prepareCall = pgcall.New[pgcall.None, prepareInput](clickssql.Prepare)
	expireCall  = pgcall.New[pgcall.None, expireInput](clickssql.Expire)
)

type prepareInput struct {
	From   string `pg:"p_from,date"`
	Months int32  `pg:"p_months"`
}

type expireInput struct {
	Before string `pg:"p_before,date"`
}

// Prepare makes the monthly partitions from now's month on, months of them, and reports how many it made.
func Prepare(ctx context.Context, db *sqlx.DB, now time.Time, months int) (int, error) {
	var made int
	in := prepareInput{From: day(monthOf(now)), Months: int32(months)}
	if err := db.GetContext(ctx, &made, prepareCall.Query(), prepareCall.Args(nil, in)...); err != nil {
		return 0, fmt.Errorf("prepare click partitions: %w", err)
	}
	return made, nil
}

// Expired is one month of clicks dropped, with how many of its clicks were kept (clicks_kept) because a
// customer, lead or sale points at them.
type Expired struct {
	Month time.Time `db:"month"`
	Kept  int64     `db:"kept"`
}

// Cutoff is the first month Expire keeps under a retention of retentionMonths: never later than any
// program's cookie or attribution window reaches back, so that a click still able to attribute a lead or
// a sale is never dropped. Zero retention keeps everything (the zero time).
func Cutoff(ctx context.Context, db *sqlx.DB, now time.Time, retentionMonths int) (time.Time, error) {
	if retentionMonths <= 0 {
		return time.Time{}, nil
	}
	var windowDays int
	if err := db.GetContext(ctx, &windowDays, `SELECT COALESCE(max(GREATEST(cookie_window_days, attribution_window_days)), 0) FROM programs`); err != nil {
		return time.Time{}, fmt.Errorf("read the programs' windows: %w", err)
	}
	cutoff := monthOf(now).AddDate(0, -retentionMonths, 0)
	if reach := monthOf(now.AddDate(0, 0, -windowDays)); reach.Before(cutoff) {
		cutoff = reach
	}
	return cutoff, nil
}

// Expire drops the months before the cutoff's month, first copying into clicks_kept the clicks a customer,
// lead or sale points at. It runs in a transaction of its own with a statement timeout for the work, not
// the serving pool's (SET LOCAL: transaction-scoped, so also right through a transaction pooler); the
// lock timeout stays, so a busy table makes it fail and try again at the next pass instead of queueing
// the inserts behind it.
func Expire(ctx context.Context, db *sqlx.DB, cutoff time.Time) ([]Expired, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("expire click partitions: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var out []Expired
	if _, err := tx.ExecContext(ctx, `SET LOCAL statement_timeout = '15min'`); err != nil {
		return nil, fmt.Errorf("expire click partitions: %w", err)
	}
	if err := expireCall.Select(ctx, tx, &out, nil, expireInput{Before: day(monthOf(cutoff))}); err != nil {
		return nil, fmt.Errorf("expire click partitions: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("expire click partitions: %w", err)
	}
	return out, nil
}

// monthOf is the first day of t's month, in UTC (as the partitions and click ids count months).
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// day is t's date as PostgreSQL reads a date.
func day(t time.Time) string { return t.Format(time.DateOnly) }
