package dbtest

import (
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
)

// ClickMonths makes the click partitions of the n months from first's (a date, 2006-01-02) with
// pkg/clicks' clicks_prepare, for tests that write clicks outside the months the template holds, and
// drops those it made (and are still there) when t ends: the database is back to the template's schema,
// so Recycle hands it on rather than dropping it.
func ClickMonths(t testing.TB, db *sqlx.DB, first string, n int) {
	t.Helper()
	const q = `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'clicks'::regclass`
	var before []string
	if err := db.Select(&before, q); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT `+clickssql.Prepare+`($1::date, $2)`, first, n); err != nil {
		t.Fatalf("%s(%s, %d): %v", clickssql.Prepare, first, n, err)
	}
	t.Cleanup(func() {
		var after []string
		if err := db.Select(&after, q); err != nil {
			t.Error(err)
		}
		for _, name := range after {
			if !slices.Contains(before, name) {
				if _, err := db.Exec(`DROP TABLE ` + pq.QuoteIdentifier(name)); err != nil {
					t.Error(err)
				}
			}
		}
	})
}
