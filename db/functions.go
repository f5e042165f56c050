package db

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/lib/pq"

	accountssql "github.com/reftrack/reftrack/pkg/accounts/sql"
	apikeyssql "github.com/reftrack/reftrack/pkg/apikeys/sql"
	attributionsql "github.com/reftrack/reftrack/pkg/attribution/sql"
	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
	eventssql "github.com/reftrack/reftrack/pkg/events/sql"
	leadssql "github.com/reftrack/reftrack/pkg/leads/sql"
	ledgersql "github.com/reftrack/reftrack/pkg/ledger/sql"
	"github.com/reftrack/reftrack/pkg/platform/pgtrigger"
	programssql "github.com/reftrack/reftrack/pkg/programs/sql"
	salessql "github.com/reftrack/reftrack/pkg/sales/sql"
	webhookssql "github.com/reftrack/reftrack/pkg/webhooks/sql"
)

// A Function is one database function as its owner package defines it: a file `<name>.sql` in the
// owner's sql/ folder holding one CREATE OR REPLACE FUNCTION statement.
type Function struct {
	Owner string // the package that owns it, e.g. "pkg/sales"
	Name  string
	SQL   string
}

// functionOwners are the packages with database functions; each embeds its sql/ folder and names the
// other owners' functions its functions call (Calls).
var functionOwners = []struct {
	pkg   string
	files fs.FS
	calls []string
}{
	{"pkg/accounts", accountssql.Files, nil},
	{"pkg/apikeys", apikeyssql.Files, apikeyssql.Calls},
	{"pkg/attribution", attributionsql.Files, nil},
	{"pkg/clicks", clickssql.Files, clickssql.Calls},
	{"pkg/events", eventssql.Files, nil},
	{"pkg/leads", leadssql.Files, leadssql.Calls},
	{"pkg/ledger", ledgersql.Files, nil},
	{"pkg/programs", programssql.Files, nil},
	{"pkg/sales", salessql.Files, salessql.Calls},
	{"pkg/webhooks", webhookssql.Files, nil},
}

// triggers are the owners' triggers (pkg/webhooks' outbox), attached after the
// functions they call.
var triggers = webhookssql.Triggers

// definition is what a function file may hold: comments, then one CREATE OR REPLACE FUNCTION of the
// file's name whose body is dollar-quoted, then nothing but a semicolon. Anything else (a table, a
// grant, a second statement) belongs in a migration.
var definition = regexp.MustCompile(`(?s)^(?:\s*--[^\n]*\n)*\s*CREATE OR REPLACE FUNCTION ([a-z_][a-z0-9_]*)\(.*?\bAS (\$[a-z_]*\$)`)

// Functions lists every owner's database functions, ordered by owner, then name.
func Functions() ([]Function, error) {
	var out []Function
	for _, o := range functionOwners {
		names, err := fs.Glob(o.files, "*.sql")
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
		for _, file := range names {
			b, err := fs.ReadFile(o.files, file)
			if err != nil {
				return nil, err
			}
			f := Function{Owner: o.pkg, Name: strings.TrimSuffix(file, ".sql"), SQL: string(b)}
			if err := f.check(); err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

func (f Function) check() error {
	m := definition.FindStringSubmatchIndex(f.SQL)
	if m == nil {
		return fmt.Errorf("%s/sql/%s.sql: not one CREATE OR REPLACE FUNCTION with a dollar-quoted body", f.Owner, f.Name)
	}
	if name := f.SQL[m[2]:m[3]]; name != f.Name {
		return fmt.Errorf("%s/sql/%s.sql defines function %s: name the file for its function", f.Owner, f.Name, name)
	}
	tag := f.SQL[m[4]:m[5]]
	end := strings.Index(f.SQL[m[1]:], tag)
	if end < 0 {
		return fmt.Errorf("%s/sql/%s.sql: body not closed by %s", f.Owner, f.Name, tag)
	}
	if rest := strings.TrimSpace(f.SQL[m[1]+end+len(tag):]); rest != ";" {
		return fmt.Errorf("%s/sql/%s.sql: something follows the function's body (%.40q); it belongs in a migration", f.Owner, f.Name, rest)
	}
	return nil
}

// functionsLock serialises ApplyFunctions across processes: two replicas replacing one function at once
// fail with "tuple concurrently updated".
const functionsLock = "reftrack.functions"

// ApplyFunctions creates or replaces every owner's database functions in one transaction, then attaches
// the owners' missing triggers. It is what `migrate up` does after the schema migrations, so a change to
// a function is deployed like a migration but written in one place (docs/deploy.md says how a change
// that two releases' replicas would see side by side is made, once there are releases).
func ApplyFunctions(ctx context.Context, db *sql.DB) error {
	fns, err := Functions()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	// Bodies are checked when called, not here: functions call each other, and files apply in name order.
	for _, stmt := range []string{`SELECT pg_advisory_xact_lock(hashtext('` + functionsLock + `'))`, `SET LOCAL check_function_bodies = off`} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("apply functions: %w", err)
		}
	}
	for _, f := range fns {
		if _, err := tx.ExecContext(ctx, f.SQL); err != nil {
			return fmt.Errorf("apply function %s (%s/sql/%s.sql): %w", f.Name, f.Owner, f.Name, err)
		}
	}
	missing, err := missingTriggers(ctx, tx)
	if err != nil {
		return err
	}
	// Only a missing trigger is created: CREATE TRIGGER locks its table against writes, which every
	// start of a replica should not do.
	for _, t := range missing {
		if _, err := tx.ExecContext(ctx, t.Definition()); err != nil {
			return fmt.Errorf("attach trigger %s on %s: %w", t.Name, t.Table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("apply functions: %w", err)
	}
	return nil
}

// missingTriggers are the owners' triggers not attached as defined (by name, table and function), in
// one query: the readiness probe asks on every call, within its deadline.
func missingTriggers(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]pgtrigger.Trigger, error) {
	names, tables, fns := make([]string, len(triggers)), make([]string, len(triggers)), make([]string, len(triggers))
	for i, t := range triggers {
		names[i], tables[i], fns[i] = t.Name, t.Table, t.Function
	}
	rows, err := q.QueryContext(ctx, `SELECT t.i FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(name, tbl, fn, i)
		WHERE NOT EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_proc f ON f.oid = g.tgfoid
			WHERE g.tgname = t.name AND g.tgrelid = to_regclass(t.tbl) AND f.proname = t.fn)
		ORDER BY t.i`, pq.Array(names), pq.Array(tables), pq.Array(fns))
	if err != nil {
		return nil, fmt.Errorf("read triggers: %w", err)
	}
	defer rows.Close()
	var missing []pgtrigger.Trigger
	for rows.Next() {
		var i int
		if err := rows.Scan(&i); err != nil {
			return nil, err
		}
		missing = append(missing, triggers[i-1])
	}
	return missing, rows.Err()
}

// missingFunctions names this build's functions that the database lacks (a schema migrated by an older
// build's `migrate up`): those not in the schema `migrate up` creates them in (the first of the search
// path, current_schema). Asked per function name through pg_proc's name index: pg_function_is_visible
// in the filter made PostgreSQL scan every function of the catalog, 40–50 ms on a new connection, which
// the readiness probe and every start paid.
func missingFunctions(ctx context.Context, db *sql.DB) ([]string, error) {
	fns, err := Functions()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(fns))
	for i, f := range fns {
		names[i] = f.Name
	}
	var missing []string
	rows, err := db.QueryContext(ctx, `SELECT n FROM unnest($1::text[]) AS n
		WHERE NOT EXISTS (SELECT 1 FROM pg_proc p WHERE p.proname = n AND p.pronamespace = current_schema()::regnamespace)
		ORDER BY n`,
		"{"+strings.Join(names, ",")+"}")
	if err != nil {
		return nil, fmt.Errorf("read database functions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		missing = append(missing, n)
	}
	return missing, rows.Err()
}
