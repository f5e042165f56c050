package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

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
	admin, err := sql.Open("postgres", AdminURL())
	if err != nil {
		return ""
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_database WHERE datname LIKE $1`,
		likePrefix(keptPrefix(d.template))).Scan(&n); err != nil || n >= maxKept {
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
	admin, err := sql.Open("postgres", AdminURL())
	if err != nil {
		return nil
	}
	defer admin.Close()
	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		return nil
	}
	d := claimKept(ctx, admin, tmpl)
	if d != nil {
		p.learn(ctx, d)
	}
	return d
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
		conn, err := sqlx.Open("postgres", dsn)
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
	// schema is the migrated template's schema fingerprint; a database that no longer has it is dropped.
	schema string
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

// learn notes the migrated template's schema from a fresh copy, before a test can change it.
func (p *pool) learn(ctx context.Context, d *Database) {
	p.mu.Lock()
	known := !p.on || p.schema != ""
	p.mu.Unlock()
	if known {
		return
	}
	var schema string
	if err := d.GetContext(ctx, &schema, fingerprint); err != nil {
		return // nothing is recycled until a fingerprint is known
	}
	p.mu.Lock()
	p.schema = schema
	p.mu.Unlock()
}

// give empties d for another test and keeps it; false means d was not kept (the caller drops it).
func (p *pool) give(d *Database) bool {
	p.mu.Lock()
	on := p.on
	p.mu.Unlock()
	if !on {
		return false
	}
	d.DB.Close() // the test's connections
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := sqlx.Open("postgres", d.URL)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	schema, err := empty(ctx, conn, d.Name)
	if err != nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.on || p.schema == "" || schema != p.schema {
		return false
	}
	fresh, err := sqlx.Open("postgres", d.URL)
	if err != nil {
		return false
	}
	p.free = append(p.free, &Database{DB: fresh, URL: d.URL, Name: d.Name, template: d.template})
	return true
}

// fingerprint describes what a test could have changed besides rows: tables and their columns (type,
// length, nullability, default), constraints, indexes, sequences, triggers (and whether they fire),
// functions, enum values, schemas, the migrations' record (versions and their compatibility), and the
// database's own settings (ALTER DATABASE … SET, connections allowed).
const fingerprint = `SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	SELECT 'r ' || c.relname || ' ' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'public'
	UNION ALL SELECT 'a ' || c.relname || '.' || a.attname || ' ' || a.atttypid::text || ' ' || a.atttypmod::text || ' ' ||
		a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
	FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
	WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
	UNION ALL SELECT 'k ' || c.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
	FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'public'
	UNION ALL SELECT 'i ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
	JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'
	UNION ALL SELECT 't ' || t.tgname || ' ' || t.tgenabled::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
	JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal
	UNION ALL SELECT 'f ' || p.proname || ' ' || md5(p.prosrc) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	WHERE n.nspname = 'public'
	UNION ALL SELECT 'e ' || e.enumtypid::regtype::text || ' ' || e.enumlabel FROM pg_enum e
	UNION ALL SELECT 'n ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema'
	UNION ALL SELECT 'm ' || version::text || ' ' || dirty::text FROM schema_migrations
	UNION ALL SELECT 'c ' || version::text || ' ' || backward_compatible::text FROM schema_compatibility
	UNION ALL SELECT 's ' || array_to_string(s.setconfig, ' ') FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
	WHERE d.datname = current_database()
	UNION ALL SELECT 'd ' || datallowconn::text || ' ' || datconnlimit::text FROM pg_database WHERE datname = current_database()
) s(x)`

// empty ends every other session of the database, checks its schema and deletes every row but the
// migrations' own, restarting the sequences. It answers the schema's fingerprint (taken before the rows
// are deleted, so a changed schema is never emptied).
func empty(ctx context.Context, conn *sqlx.DB, name string) (string, error) {
	if _, err := conn.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = $1 AND pid <> pg_backend_pid()`, name); err != nil {
		return "", err
	}
	var schema string
	if err := conn.GetContext(ctx, &schema, fingerprint); err != nil {
		return "", err
	}
	var tables []string
	if err := conn.SelectContext(ctx, &tables, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'
		AND tablename NOT IN ('schema_migrations', 'schema_compatibility') ORDER BY tablename`); err != nil {
		return "", err
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
		return "", err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, b.String()); err != nil {
		return "", err
	}
	return schema, tx.Commit()
}
