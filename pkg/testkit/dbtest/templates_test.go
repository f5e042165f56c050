package dbtest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/lib/pq"
)

// Building a template drops the templates of other migration sets, except one in use.
func TestStaleTemplatesAreDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := sql.Open("postgres", AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() }) // after the databases' own cleanups below
	// Databases of this test's own prefix: the real templates, which other packages' tests are cloning
	// meanwhile, are out of its reach.
	prefix := "reftrack_tmpltest_" + randomSuffix()[:8] + "_"
	stale, inUse, keep := prefix+"stale", prefix+"inuse", prefix+"keep"
	for _, name := range []string{stale, inUse, keep} {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(name) + " WITH (FORCE)") }) //nolint:errcheck
	}
	dsn, err := WithDatabase(AdminURL(), inUse)
	if err != nil {
		t.Fatal(err)
	}
	user, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	if err := user.PingContext(ctx); err != nil { // a connection holds it, as a running test's would
		t.Fatal(err)
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dropStaleTemplates(ctx, conn, prefix, keep)
	exists := func(name string) bool {
		var n int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if exists(stale) || !exists(inUse) || !exists(keep) {
		t.Errorf("after dropping: stale %v (want gone), in use %v, kept %v (want both there)", exists(stale), exists(inUse), exists(keep))
	}
}
