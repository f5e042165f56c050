package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Recycle runs a test binary's tests (run is m.Run, or what wraps it) with its migrated databases
// recycled: when a test ends, its database is emptied back to the migrated template's state (every table
// but the migrations' own emptied, every sequence restarted) and the next test of the process gets it,
// instead of a new copy of the template. Copying the template costs Postgres about five times the CPU of
// emptying a test's few rows, and a test run makes hundreds. A database whose schema a test changed is
// dropped, never reused. The databases left when run returns are kept, emptied, for the test processes
// that come next (the other packages of `go test ./...`, the next run): up to maxKept per migration set,
// renamed reftrack_kept_…; a process that has no database of its own to hand on claims one of those
// before copying the template. Copying and dropping databases was two thirds of Postgres's work in a
// `make test`.
//
// Use it from TestMain: func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }. Without it,
// every test gets a new copy of the template, as before.
func Recycle(run func() int) int {
	recycled.mu.Lock()
	recycled.on = true
	recycled.mu.Unlock()
	code := run()
	recycled.mu.Lock()
	free := recycled.free
	recycled.free, recycled.on = nil, false
	recycled.mu.Unlock()
	for _, d := range free {
		d.DB.Close()
		if keep(d) != "" {
			continue
		}
		if err := drop(d.Name); err != nil {
			fmt.Println("dbtest:", err)
			code = max(code, 1)
		}
	}
	return code
}

// maxKept is how many emptied databases of one migration set wait for the next test process at most:
// a little more than what two packages at once (go test's -p on two cores) hold at their busiest, so that few are dropped.
const maxKept = 32

// keptPrefix begins the names of the emptied databases kept for copies of the template tmpl.
func keptPrefix(tmpl string) string {
	return "reftrack_kept_" + strings.TrimPrefix(tmpl, "reftrack_tmpl_") + "_"
}

// likePrefix is a LIKE pattern matching the names that begin with prefix.
func likePrefix(prefix string) string { return strings.ReplaceAll(prefix, "_", `\_`) + "%" }

// keep renames d, emptied by give and no longer connected, into the databases kept for the next test
// process, and answers its new name; "" when it was not kept (maxKept are waiting already, or the rename
// failed), and the caller drops it.
func keep(d *Database) string {
	if d.template == "" {
		return ""
	}
	admin, err := adminDB()
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var n int
	if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE $1`,
		likePrefix(keptPrefix(d.template))).Scan(&n); err != nil || n >= maxKept {
		return ""
	}
	// The emptied database's own connection has just been closed: wait for its backend to go, as
	// ALTER DATABASE would (polling every 100 ms).
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1`,
		d.Name); err != nil {
		return ""
	}
	name := keptPrefix(d.template) + randomSuffix()[:12]
	if _, err := admin.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", pq.QuoteIdentifier(d.Name),
		pq.QuoteIdentifier(name))); err != nil {
		return ""
	}
	return name
}

// claim takes one of the databases an earlier test process kept for copies of the current template, or
// nil.
func (p *pool) claim(ctx context.Context) *Database {
	p.mu.Lock()
	on := p.on
	p.mu.Unlock()
	if !on {
		return nil
	}
	admin, err := adminDB()
	if err != nil {
		return nil
	}
	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		return nil
	}
	return claimKept(ctx, admin, tmpl)
}

// claimKept takes one of the databases kept for copies of tmpl, or nil. Renaming is the claim: of
// processes renaming the same database at once, one succeeds.
func claimKept(ctx context.Context, admin *sql.DB, tmpl string) *Database {
	kept := databaseNames(ctx, admin, `SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY random()`,
		likePrefix(keptPrefix(tmpl)))
	for _, name := range kept {
		mine := "reftrack_test_" + randomSuffix()
		if _, err := admin.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s", pq.QuoteIdentifier(name),
			pq.QuoteIdentifier(mine))); err != nil {
			continue // claimed by another process first
		}
		dsn, err := WithDatabase(AdminURL(), mine)
		if err != nil {
			return nil
		}
		conn, err := openPool(dsn)
		if err != nil {
			return nil
		}
		return &Database{DB: conn, URL: dsn, Name: mine, template: tmpl}
	}
	return nil
}

// dropStaleKept drops the kept databases of other templates than tmpl (other migration sets, other
// months) that nobody is connected to.
func dropStaleKept(ctx context.Context, conn *sql.Conn, tmpl string) {
	stale := databaseNames(ctx, conn, `SELECT d.datname FROM pg_database d WHERE d.datname LIKE 'reftrack\_kept\_%'
		AND d.datname NOT LIKE $1 AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
		likePrefix(keptPrefix(tmpl)))
	for _, name := range stale {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name))
	}
}

// recycled is the process's databases ready for another test.
var recycled pool

type pool struct {
	mu   sync.Mutex
	on   bool
	free []*Database
}

// take is an emptied database, or nil.
func (p *pool) take() *Database {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || len(p.free) == 0 {
		return nil
	}
	d := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return d
}

// learn notes d's schema fingerprint as d came to the process (a new copy of the template, or a database
// an earlier process emptied and kept), before a test can change it. Each database is compared with its
// own: two builds of the same migrations have the same schema but not the same catalog rows' xmin, and
// the template is built anew while tests run (another checkout's build drops it as stale whenever nobody
// is copying it; a new month names a new one), so one fingerprint for the whole process dropped every
// database of the other build.
func (p *pool) learn(ctx context.Context, d *Database) error {
	p.mu.Lock()
	on := p.on
	p.mu.Unlock()
	if !on || d.schema != "" {
		return nil
	}
	if err := d.GetContext(ctx, &d.schema, fingerprint); err != nil {
		return fmt.Errorf("schema fingerprint of %s: %w", d.Name, err)
	}
	return nil
}

// give empties d for another test and keeps it. It answers false when d is not kept (the caller drops
// it): a test changed its schema, recycling is off, or err says what failed. A failure is reported, not
// taken for a changed schema, so that a slow or failing server does not quietly turn recycling off.
func (p *pool) give(d *Database) (bool, error) {
	p.mu.Lock()
	on := p.on
	p.mu.Unlock()
	if !on || d.schema == "" {
		return false, nil
	}
	d.DB.Close() // the test's connections
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	conn, err := openPool(d.URL)
	if err != nil {
		return false, err
	}
	conn.SetMaxOpenConns(1) // empty ends the other sessions: its statements must share this one
	if err := empty(ctx, conn, d.Name, d.schema); err != nil {
		conn.Close()
		if errors.Is(err, errSchemaChanged) {
			return false, nil
		}
		return false, fmt.Errorf("recycle %s: %w", d.Name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on {
		conn.Close()
		return false, nil
	}
	// The connection that emptied the database is the next test's first: its session has the catalogs
	// of every table cached already, and a new backend's start-up and warm-up are much of what a short
	// test costs Postgres.
	conn.SetMaxOpenConns(0)
	conn.SetMaxIdleConns(idleConns) // lowered to 1 with the open connections above
	p.free = append(p.free, &Database{DB: conn, URL: d.URL, Name: d.Name, template: d.template, schema: d.schema})
	return true, nil
}

// fingerprint describes what a test could have changed besides rows: every catalog row of the public
// schema's tables, columns, defaults, constraints, indexes, triggers, functions, types and sequences, the
// enum values and schemas, counted and summed by the transaction that wrote it (xmin, which freezing and
// VACUUM's in-place statistics leave alone), so any DDL, even one undone later, changes it; the
// migrations' record (versions and their compatibility); and the database's own settings (ALTER DATABASE
// … SET, connections allowed). Deparsing the schema instead (pg_get_indexdef, pg_get_constraintdef…)
// cost a new backend 20–150 ms per test.
const fingerprint = `SELECT concat_ws(' ',
	(SELECT count(*) || ':' || sum(c.xmin::text::bigint) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(a.xmin::text::bigint) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
		WHERE c.relnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(d.xmin::text::bigint) FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
		WHERE c.relnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(k.xmin::text::bigint) FROM pg_constraint k WHERE k.connamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(i.xmin::text::bigint) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
		WHERE c.relnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(t.xmin::text::bigint) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		WHERE c.relnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(p.xmin::text::bigint) FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(y.xmin::text::bigint) FROM pg_type y WHERE y.typnamespace = 'public'::regnamespace),
	(SELECT count(*) || ':' || sum(s.xmin::text::bigint) FROM pg_sequence s),
	(SELECT count(*) || ':' || sum(e.xmin::text::bigint) FROM pg_enum e),
	(SELECT count(*) || ':' || sum(n.xmin::text::bigint) FROM pg_namespace n
		WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'),
	(SELECT string_agg(version::text || ':' || dirty::text, ',' ORDER BY version) FROM schema_migrations),
	(SELECT string_agg(version::text || ':' || backward_compatible::text, ',' ORDER BY version) FROM schema_compatibility),
	(SELECT string_agg(array_to_string(s.setconfig, ','), ' ') FROM pg_db_role_setting s
		JOIN pg_database d ON d.oid = s.setdatabase WHERE d.datname = current_database()),
	(SELECT datallowconn::text || ':' || datconnlimit::text FROM pg_database WHERE datname = current_database()))`

// errSchemaChanged means a test changed its database's schema: it is dropped, never handed on.
var errSchemaChanged = errors.New("schema changed")

// empty ends every other session of the database, checks that its schema fingerprint is still want
// (errSchemaChanged if not) and deletes every row but the migrations' own, restarting the sequences.
func empty(ctx context.Context, conn *sqlx.DB, name, want string) error {
	if _, err := conn.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		return err
	}
	var schema string
	if err := conn.GetContext(ctx, &schema, fingerprint); err != nil {
		// A test that dropped the migrations' tables or the public schema leaves nothing to fingerprint.
		var pqErr *pq.Error
		if errors.As(err, &pqErr) && (pqErr.Code.Class() == "42" || pqErr.Code.Class() == "3F") {
			return fmt.Errorf("%w: %v", errSchemaChanged, err)
		}
		return err
	}
	if schema != want {
		return errSchemaChanged
	}
	var tables []string
	if err := conn.SelectContext(ctx, &tables, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'
		AND tablename NOT IN ('schema_migrations', 'schema_compatibility') ORDER BY tablename`); err != nil {
		return err
	}
	var b strings.Builder
	// Rows are deleted as they are, without their triggers and foreign-key checks: every table is emptied.
	b.WriteString("SET session_replication_role = replica;")
	for _, t := range tables {
		b.WriteString("DELETE FROM " + pq.QuoteIdentifier(t) + ";")
	}
	b.WriteString(`SELECT setval(s.seqrelid, s.seqstart, false) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public';`)
	b.WriteString("SET session_replication_role = origin;")
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, b.String()); err != nil {
		return err
	}
	return tx.Commit()
}
