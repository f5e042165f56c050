package dbtest

import (
	"context"
	"sync"
	"testing"

	"github.com/jmoiron/sqlx"
)

// A database a test process ends with is kept, emptied, for the next process of the same migration set,
// and two processes claiming it at once never both get it. (The kept databases here are filed under a
// template name of this test's own, so that the packages testing alongside cannot claim them.)
func TestKeptDatabasesAreClaimedOnce(t *testing.T) {
	ctx := context.Background()
	d, err := Create(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.GetContext(ctx, &d.schema, fingerprint); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO workspaces (name) VALUES ('left behind')`); err != nil {
		t.Fatal(err)
	}
	d.DB.Close()
	conn := mustOpen(t, d.URL)
	if err := empty(ctx, conn, d.Name, d.schema); err != nil {
		t.Fatal(err)
	}
	conn.Close() // as Recycle leaves it before keep: the pool closed, its backend perhaps still going (keep waits)
	d.template = "reftrack_tmpl_keptclaim" + randomSuffix()[:8]
	kept := keep(d)
	if kept == "" {
		t.Fatal("not kept")
	}
	t.Cleanup(func() { _ = drop(kept) })

	admin := mustOpen(t, AdminURL()).DB
	claims := make(chan *Database, 2)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { claims <- claimKept(ctx, admin, d.template) })
	}
	wg.Wait()
	close(claims)
	var got []*Database
	for c := range claims {
		if c != nil {
			got = append(got, c)
			t.Cleanup(func() { _ = c.Close() })
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d claims got the one kept database, want 1", len(got))
	}
	var rows, migrations int
	if err := got[0].Get(&rows, `SELECT count(*) FROM workspaces`); err != nil {
		t.Fatal(err)
	}
	if err := got[0].Get(&migrations, `SELECT count(*) FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || migrations != 1 {
		t.Errorf("the claimed database has %d workspaces and %d migration records, want 0 and 1", rows, migrations)
	}
	var left int
	if err := admin.QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, kept).Scan(&left); err != nil || left != 0 {
		t.Errorf("the kept name is still there (%d, %v)", left, err)
	}
	if again := claimKept(ctx, admin, d.template); again != nil {
		t.Errorf("claimed %s after the only kept database was taken", again.Name)
		_ = again.Close()
	}
}

func mustOpen(t *testing.T, dsn string) *sqlx.DB {
	t.Helper()
	conn, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
