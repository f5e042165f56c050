package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The serving pool's timeouts are set on every connection; a statement or a lock wait past them fails
// quickly with an error the HTTP layer answers 503. A timeout the DSN sets itself wins.
func TestTimeoutsPerConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	pool, err := db.Open(ctx, d.URL, db.PoolOptions{MaxOpenConns: 2, StatementTimeout: 300 * time.Millisecond, LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var st, lt string
	if err := pool.QueryRowContext(ctx, `SELECT current_setting('statement_timeout'), current_setting('lock_timeout')`).Scan(&st, &lt); err != nil {
		t.Fatal(err)
	}
	if st != "300ms" || lt != "100ms" {
		t.Errorf("statement_timeout = %s, lock_timeout = %s; want 300ms, 100ms", st, lt)
	}

	// Too slow: statement_timeout (57014).
	_, err = pool.ExecContext(ctx, `SELECT pg_sleep(5)`)
	if pe, ok := err.(*pq.Error); !ok || pe.Code != "57014" || !dbfault.Unavailable(err) {
		t.Errorf("slow statement: %v; want 57014, recognised as unavailable", err)
	}

	// A lock held elsewhere: lock_timeout (55P03).
	tx, err := d.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `LOCK TABLE sales IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = pool.ExecContext(ctx, `SELECT count(*) FROM sales`)
	if pe, ok := err.(*pq.Error); !ok || pe.Code != "55P03" || !dbfault.Unavailable(err) {
		t.Errorf("locked table: %v; want 55P03, recognised as unavailable", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the lock wait took %s", took)
	}

	// The DSN's own setting wins over the option.
	own, err := db.Open(ctx, d.URL+"&statement_timeout=1234", db.PoolOptions{StatementTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.QueryRowContext(ctx, `SELECT current_setting('statement_timeout')`).Scan(&st); err != nil || st != "1234ms" {
		t.Errorf("statement_timeout = %s, %v; want the DSN's 1234ms", st, err)
	}
}
