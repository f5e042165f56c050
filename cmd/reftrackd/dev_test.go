package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// `make run` with a database an earlier build made before the schema baseline (as .data/ or the local
// server's reftrack database may hold): dev's own database is dropped and made again, migrated and
// current; one that DATABASE_URL names is left as it is, and dev says why it stops.
func TestDevRecreatesItsOwnPreBaselineDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	name := "reftrack_test_dev_" + strings.ToLower(t.Name())
	dbtest.Drop(t, name)
	t.Cleanup(func() { dbtest.Drop(t, name) })
	dsn, err := dbtest.WithDatabase(dbtest.AdminURL(), name)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	say := func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }

	// A database as the migrations before the baseline left it, with a program's workspace in it.
	pool, err := migratedDatabase(ctx, dsn, true, say)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(`INSERT INTO workspaces (name) VALUES ('old');
		DELETE FROM schema_compatibility WHERE version = 1; UPDATE schema_migrations SET version = 25`); err != nil {
		t.Fatal(err)
	}
	pool.Close()
	workspaces := func() int {
		t.Helper()
		p, err := sqlx.Open("postgres", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var n int
		if err := p.Get(&n, `SELECT count(*) FROM workspaces`); err != nil {
			t.Fatal(err)
		}
		return n
	}

	if _, err := migratedDatabase(ctx, dsn, false, say); !errors.Is(err, db.ErrPreBaseline) ||
		!strings.Contains(err.Error(), fmt.Sprintf("database %q (DATABASE_URL, which dev leaves as it is)", name)) {
		t.Errorf("named by DATABASE_URL: %v, want ErrPreBaseline naming the database", err)
	}
	if n := workspaces(); n != 1 || len(said) != 0 {
		t.Errorf("named by DATABASE_URL: %d workspaces left (want 1, untouched), said %q", n, said)
	}

	pool, err = migratedDatabase(ctx, dsn, true, say)
	if err != nil {
		t.Fatalf("dev's own: %v", err)
	}
	defer pool.Close()
	if err := db.CheckCurrent(ctx, pool.DB); err != nil {
		t.Errorf("dev's own, made again: %v", err)
	}
	if n := workspaces(); n != 0 {
		t.Errorf("dev's own: %d workspaces, want none (a new database)", n)
	}
	if len(said) != 1 || !strings.Contains(said[0], fmt.Sprintf("database %q was made by an earlier build, before the schema baseline: dropping it", name)) {
		t.Errorf("dev's own: said %q, want what it does", said)
	}
}
