package dbtest_test

import (
	"os"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }

// exists reports whether a database of that name exists.
func exists(t *testing.T, name string) bool {
	t.Helper()
	d := dbtest.Empty(t) // any connection to the server will do
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM pg_database WHERE datname = $1`, name); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// A recycled database is as the next test would find a new copy: no rows, sequences from the start,
// the migrations' record kept. A database whose schema a test changed is dropped, never handed on.
func TestRecycledDatabasesStartEmpty(t *testing.T) {
	var first, second string
	t.Run("a test writes rows", func(t *testing.T) {
		d := dbtest.New(t)
		first = d.Name
		if _, err := d.Exec(`INSERT INTO workspaces (name) VALUES ('w1'), ('w2')`); err != nil {
			t.Fatal(err)
		}
		// Statistics are no schema change: VACUUM and ANALYZE update the catalogs in place.
		if _, err := d.Exec(`VACUUM ANALYZE workspaces`); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the next test gets the same database, empty", func(t *testing.T) {
		d := dbtest.New(t)
		second = d.Name
		if d.Name != first {
			t.Fatalf("got %s, want the recycled %s", d.Name, first)
		}
		var rows, migrations int
		if err := d.Get(&rows, `SELECT count(*) FROM workspaces`); err != nil {
			t.Fatal(err)
		}
		if err := d.Get(&migrations, `SELECT count(*) FROM schema_migrations`); err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := d.Get(&id, `INSERT INTO workspaces (name) VALUES ('w') RETURNING id`); err != nil {
			t.Fatal(err)
		}
		if rows != 0 || migrations != 1 || id != 1 {
			t.Errorf("workspaces %d, migration records %d, next id %d; want 0, 1, 1", rows, migrations, id)
		}
		if _, err := d.Exec(`ALTER TABLE workspaces RENAME TO workspaces_gone`); err != nil {
			t.Fatal(err)
		}
	})
	// Every kind of change a test could make is caught: each subtest changes one thing, and the next
	// test must not get that database.
	for _, change := range []string{
		`ALTER TABLE programs ALTER COLUMN status SET DEFAULT 'paused'`,
		`ALTER TABLE sales DROP CONSTRAINT sales_amount_cents_check`,
		`UPDATE schema_migrations SET dirty = true`,
		`CREATE INDEX extra ON clicks (session_id)`,
		`ALTER TABLE sales DISABLE TRIGGER USER`,
		`ALTER TABLE programs ALTER COLUMN name TYPE varchar(300)`,
		`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET lock_timeout = ''200ms''', current_database()); END $$`,
		`CREATE OR REPLACE FUNCTION performance_add(p_program bigint[], p_hour timestamptz[], p_partner bigint[], p_currency text[],
			p_clicks bigint[], p_bot_clicks bigint[], p_leads bigint[], p_provisional_leads bigint[], p_sales bigint[],
			p_customers bigint[], p_revenue bigint[], p_commission bigint[]) RETURNS void LANGUAGE sql AS 'SELECT'`,
		`ALTER SEQUENCE workspaces_id_seq INCREMENT BY 2`,
		`CREATE TYPE mood AS ENUM ('ok')`,
		`CREATE SCHEMA scratch`,
		// Nothing left to fingerprint: dropped as changed, not reported as a failure to recycle.
		`DROP TABLE schema_compatibility`,
		// Changed and changed back: the schema reads the same, yet every change counts.
		`ALTER TABLE programs ALTER COLUMN status SET DEFAULT 'paused'; ALTER TABLE programs ALTER COLUMN status SET DEFAULT 'active'`,
	} {
		var changed string
		t.Run(change, func(t *testing.T) {
			d := dbtest.New(t)
			changed = d.Name
			if _, err := d.Exec(change); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("after "+change, func(t *testing.T) {
			if d := dbtest.New(t); d.Name == changed {
				t.Errorf("got %s again after: %s", d.Name, change)
			}
		})
	}
	// ClickMonths makes click partitions and drops them when its test ends: the schema is the template's
	// again, and the database is handed on.
	var months string
	t.Run("a test makes click months", func(t *testing.T) {
		d := dbtest.New(t)
		months = d.Name
		dbtest.ClickMonths(t, d.DB, "2024-01-01", 2)
	})
	t.Run("after click months", func(t *testing.T) {
		if d := dbtest.New(t); d.Name != months {
			t.Errorf("got %s, want %s handed on after ClickMonths", d.Name, months)
		}
	})
	t.Run("a changed schema is dropped", func(t *testing.T) {
		d := dbtest.New(t)
		if d.Name == second {
			t.Fatalf("got %s again after its schema changed", d.Name)
		}
		if exists(t, second) {
			t.Errorf("%s, whose schema changed, still exists", second)
		}
		var n int
		if err := d.Get(&n, `SELECT count(*) FROM workspaces`); err != nil {
			t.Errorf("the new database lacks workspaces: %v", err)
		}
	})
}
