// Package dbtest gives each test its own freshly migrated database on a real Postgres
// (TEST_DATABASE_URL, default the local server) and drops it when the test ends, or, under Recycle,
// empties it for the next test (of this process, or of the next test process).
//
// Databases are cloned from a template that is migrated once per migration set, so a new database costs
// one CREATE DATABASE, not a full migration run.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/db"
)

// DefaultURL is the Postgres the tests use unless TEST_DATABASE_URL says otherwise.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable&connect_timeout=5"

// AdminURL is the server-level DSN tests connect to for creating databases.
func AdminURL() string {
	if v := os.Getenv("TEST_DATABASE_URL"); v != "" {
		return v
	}
	return DefaultURL
}

// Database is one test's database.
type Database struct {
	*sqlx.DB
	// URL connects to this database (for code under test that opens its own pool).
	URL  string
	Name string
	// template is the migrated template the database is a copy of ("" for an unmigrated one).
	template string
	// schema is the database's schema fingerprint from before any test used it, under Recycle (see
	// pool.learn); "" otherwise.
	schema string
}

// patience bounds what dbtest waits for the server to make, empty or rename a database. Past it the test
// fails with the reason: a loaded machine must not quietly change what a test gets.
const patience = 2 * time.Minute

// New creates a migrated database for t and drops it when t ends.
func New(t testing.TB) *Database {
	t.Helper()
	return create(t, true)
}

// Empty creates an empty, unmigrated database for t (migration tests) and drops it when t ends.
func Empty(t testing.TB) *Database {
	t.Helper()
	return create(t, false)
}

// Drop removes a database, disconnecting whoever still uses it.
func Drop(t testing.TB, name string) {
	t.Helper()
	if err := drop(name); err != nil {
		t.Errorf("dbtest: %v", err)
	}
}

// adminDB is the process's pool on the server's own database, for creating, claiming, renaming and
// dropping test databases, opened on first use and left to the process's exit: one pool for the whole
// test binary, not a connection per operation. A new PostgreSQL backend costs about 25 ms of CPU on
// these 2-core VMs (the fork and its page faults), and `make test` opened 430 of them for this alone.
var adminDB = sync.OnceValues(func() (*sql.DB, error) { return sql.Open("postgres", AdminURL()) })

func drop(name string) error {
	admin, err := adminDB()
	if err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	if _, err := admin.Exec("DROP DATABASE IF EXISTS " + pq.QuoteIdentifier(name) + " WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	return nil
}

// create makes a database for t, a copy of the migrated template when migrated is set. Under Recycle a
// migrated database may be one an earlier test of the process used, reset to the migrated template's
// state.
func create(t testing.TB, migrated bool) *Database {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var d *Database
	if migrated {
		if d = recycled.take(); d == nil {
			d = recycled.claim(ctx)
		}
	}
	if d == nil {
		var err error
		if d, err = Create(ctx, migrated); err != nil {
			t.Fatalf("dbtest: %v", err)
		}
	}
	t.Cleanup(func() {
		if migrated {
			kept, err := recycled.give(d)
			if err != nil {
				t.Errorf("dbtest: %v", err)
			}
			if kept {
				return
			}
		}
		if err := d.Close(); err != nil {
			t.Errorf("dbtest: %v", err)
		}
	})
	if migrated {
		if err := recycled.learn(ctx, d); err != nil {
			t.Fatalf("dbtest: %v", err)
		}
	}
	return d
}

// Create makes a database outside any one test (a package's TestMain, whose examples have no
// *testing.T); Close drops it. Tests use New.
func Create(ctx context.Context, migrated bool) (*Database, error) {
	admin, err := adminDB()
	if err != nil {
		return nil, err
	}
	if err := admin.PingContext(ctx); err != nil {
		return nil, fmt.Errorf("no Postgres at TEST_DATABASE_URL (%s): %w", redact(AdminURL()), err)
	}
	name := "reftrack_test_" + randomSuffix()
	stmt := "CREATE DATABASE " + pq.QuoteIdentifier(name)
	var tmpl string
	if migrated {
		if tmpl, err = ensureTemplate(ctx, admin); err != nil {
			return nil, fmt.Errorf("template database: %w", err)
		}
		stmt += " TEMPLATE " + pq.QuoteIdentifier(tmpl)
	}
	if _, err := admin.ExecContext(ctx, stmt); err != nil {
		return nil, fmt.Errorf("create database: %w", err)
	}
	dsn, err := WithDatabase(AdminURL(), name)
	if err != nil {
		return nil, err
	}
	conn, err := openPool(dsn)
	if err != nil {
		return nil, err
	}
	return &Database{DB: conn, URL: dsn, Name: name, template: tmpl}, nil
}

// idleConns is how many idle connections a test's pool keeps (database/sql's default is 2). A test's
// server writes from its request handlers and its batching recorders at once, and each connection above
// the idle ones was closed when it came back: a new backend for the next burst, at about 25 ms of CPU
// each on these VMs.
const idleConns = 4

// openPool opens a test's pool on the database at dsn.
func openPool(dsn string) (*sqlx.DB, error) {
	conn, err := sqlx.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	conn.SetMaxIdleConns(idleConns)
	return conn, nil
}

// Close closes the connections and drops the database.
func (d *Database) Close() error {
	d.DB.Close()
	return drop(d.Name)
}

// lockID serialises template builds across test processes (go test runs packages in parallel).
const lockID = 7340021

// ensureTemplate returns the name of a template database migrated with this build's migrations, building
// it when missing. It is built under a temporary name and renamed, so a crashed build leaves no
// half-migrated template behind.
func ensureTemplate(ctx context.Context, admin *sql.DB) (string, error) {
	fp, err := db.Fingerprint()
	if err != nil {
		return "", err
	}
	// The month is part of the name: a template made in an earlier month lacks this month's click
	// partitions (the baseline makes the current month and three ahead), so a new month builds anew.
	tmpl := "reftrack_tmpl_" + fp[:16] + "_" + time.Now().UTC().Format("0601")

	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", lockID); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1)", lockID) //nolint:errcheck

	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", tmpl).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return tmpl, nil
	}

	build := tmpl + "_build_" + randomSuffix()[:8]
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(build)); err != nil {
		return "", err
	}
	dsn, err := WithDatabase(AdminURL(), build)
	if err != nil {
		return "", err
	}
	if err := migrateDSN(ctx, dsn); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(build)+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("ALTER DATABASE %s RENAME TO %s",
		pq.QuoteIdentifier(build), pq.QuoteIdentifier(tmpl))); err != nil {
		return "", err
	}
	dropStaleTemplates(ctx, conn, "reftrack_tmpl_", tmpl)
	dropStaleKept(ctx, conn, tmpl)
	return tmpl, nil
}

// dropStaleTemplates drops the databases named prefix… other than keep: the templates of other migration
// sets, which only earlier builds used, so that test runs leave one template behind (the current one,
// kept so the next run needn't migrate). A template that a concurrent run (another checkout, another
// branch) is connected to or cloning right now is skipped, never forced.
func dropStaleTemplates(ctx context.Context, conn *sql.Conn, prefix, keep string) {
	// Connected databases are left out up front: DROP DATABASE would wait five seconds for them to go.
	pattern := strings.ReplaceAll(prefix, "_", `\_`) + "%"
	stale := databaseNames(ctx, conn, `SELECT d.datname FROM pg_database d WHERE d.datname LIKE $1
		AND d.datname <> $2 AND d.datname NOT LIKE '%\_build\_%'
		AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`, pattern, keep)
	// A clone in progress holds a lock on its template: give up on that one at once.
	if _, err := conn.ExecContext(ctx, "SET lock_timeout = '100ms'"); err != nil {
		return
	}
	defer conn.ExecContext(context.Background(), "RESET lock_timeout") //nolint:errcheck
	for _, name := range stale {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name))
	}
}

// databaseNames answers the names query (one column) finds; none when it fails.
func databaseNames(ctx context.Context, db interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) []string {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if rows.Scan(&name) == nil {
			names = append(names, name)
		}
	}
	return names
}

func migrateDSN(ctx context.Context, dsn string) error {
	d, err := sql.Open("postgres", dsn)
	if err != nil {
		return err
	}
	defer d.Close()
	return db.MigrateUp(ctx, d)
}

// WithDatabase returns dsn (a postgres:// URL) pointing at database name, its sessions committing without
// waiting for the WAL to reach the disk (synchronous_commit=off, a startup parameter lib/pq passes on) unless
// dsn says otherwise: a test database does not outlive a crash of the shared server, and waiting for flushes
// was a tenth of `make test`'s time.
func WithDatabase(dsn, name string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("TEST_DATABASE_URL must be a postgres:// URL, got %q", redact(dsn))
	}
	u.Path = "/" + name
	if q := u.Query(); !q.Has("synchronous_commit") {
		q.Set("synchronous_commit", "off")
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "<unparseable>"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return strings.TrimSpace(u.String())
}
