// Package db owns the Postgres schema: the embedded golang-migrate migrations, the functions that apply
// them, and opening a connection pool.
package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq" // also registers the "postgres" driver
)

//go:embed migrations/*.sql
var migrations embed.FS

// PoolOptions tune the connection pool.
type PoolOptions struct {
	MaxOpenConns    int
	MaxIdleConns    int
	ConnMaxLifetime time.Duration
	// StatementTimeout and LockTimeout are set on every connection (PostgreSQL's statement_timeout and
	// lock_timeout) unless the DSN sets them itself; 0 leaves the server's default. The serving pool
	// sets both, so a database that hangs fails requests quickly; migrations set neither.
	StatementTimeout time.Duration
	LockTimeout      time.Duration
}

// Open opens a pool on dsn and checks that the database answers.
func Open(ctx context.Context, dsn string, opts PoolOptions) (*sqlx.DB, error) {
	cfg, err := pq.NewConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// Each statement with parameters goes to PostgreSQL in one round trip (Parse, Bind, Execute, Sync
	// together, unnamed) instead of two: half the round trips, and correct through a transaction-pooling
	// PgBouncer, which may switch server connections between two round trips of one statement. Set here,
	// never left to the DSN.
	cfg.BinaryParameters = true
	if cfg.Runtime == nil {
		cfg.Runtime = map[string]string{}
	}
	for name, d := range map[string]time.Duration{"statement_timeout": opts.StatementTimeout, "lock_timeout": opts.LockTimeout} {
		if _, set := cfg.Runtime[name]; !set && d > 0 {
			cfg.Runtime[name] = strconv.FormatInt(d.Milliseconds(), 10) // milliseconds, PostgreSQL's unit
		}
	}
	connector, err := pq.NewConnectorConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(connector), "postgres")
	if opts.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opts.MaxOpenConns)
	}
	if opts.MaxIdleConns > 0 {
		db.SetMaxIdleConns(opts.MaxIdleConns)
	}
	if opts.ConnMaxLifetime > 0 {
		db.SetConnMaxLifetime(opts.ConnMaxLifetime)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

// LatestVersion is the highest migration version embedded in this build.
func LatestVersion() (uint, error) {
	versions, err := migrationVersions()
	if err != nil || len(versions) == 0 {
		return 0, err
	}
	return versions[len(versions)-1], nil
}

// withMigrator runs fn with a migrator on one connection of db; closing it leaves db open.
func withMigrator(ctx context.Context, db *sql.DB, fn func(*migrate.Migrate) error) error {
	src, err := iofs.New(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("read embedded migrations: %w", err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("get connection: %w", err)
	}
	driver, err := postgres.WithConnection(ctx, conn, &postgres.Config{})
	if err != nil {
		conn.Close()
		return fmt.Errorf("migration driver: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "postgres", driver)
	if err != nil {
		driver.Close()
		return fmt.Errorf("migrator: %w", err)
	}
	err = fn(m)
	srcErr, dbErr := m.Close()
	return errors.Join(err, srcErr, dbErr)
}

// CompatibleMarker, as the first line of a migration's up file, marks it backward compatible: the
// build before it runs correctly against the schema it leaves (docs/deploy.md, rolling deploys).
const CompatibleMarker = "-- reftrack: backward-compatible"

// ErrPreBaseline means the database was made by a build from before the schema baseline: its schema
// comes from the migrations the baseline replaced (before the first release), and no build migrates it
// any further. Drop the database and create it again (docs/deploy.md).
var ErrPreBaseline = errors.New("the database was made by a build from before the schema baseline")

// preBaseline reports whether db was migrated by the migrations the baseline replaced, and to which of
// their versions: it has a clean schema version but not the baseline's own compatibility record (version
// 1, written by the baseline itself; those migrations recorded none before their version 17, where they
// made the table).
func preBaseline(ctx context.Context, db *sql.DB) (version int64, pre bool, err error) {
	var dirty bool
	err = db.QueryRowContext(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&version, &dirty)
	switch {
	case errors.Is(err, sql.ErrNoRows) || isUndefinedTable(err):
		return 0, false, nil // nothing migrated yet
	case err != nil:
		return 0, false, fmt.Errorf("read schema version: %w", err)
	case dirty:
		return version, false, nil // a migration failed half-way, which is said as such
	}
	recorded, err := baselineRecorded(ctx, db)
	return version, !recorded, err
}

// PreBaseline reports whether db was made by a build from before the schema baseline (ErrPreBaseline).
func PreBaseline(ctx context.Context, db *sql.DB) (bool, error) {
	_, pre, err := preBaseline(ctx, db)
	return pre, err
}

// baselineRecorded reports whether db's compatibility record holds the baseline's row.
func baselineRecorded(ctx context.Context, db *sql.DB) (bool, error) {
	var recorded bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_compatibility WHERE version = 1)`).Scan(&recorded)
	switch {
	case isUndefinedTable(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read schema compatibility: %w", err)
	}
	return recorded, nil
}

// preBaselineError says what to do with a database made before the baseline, at version v of the
// migrations it replaced.
func preBaselineError(v int64) error {
	return fmt.Errorf("%w (version %d of the migrations the baseline replaced): this build cannot migrate it; "+
		"drop the database and create it again, then run `reftrackd migrate up` (docs/deploy.md)", ErrPreBaseline, v)
}

// MigrateUp applies every pending migration, one at a time, recording each one's compatibility marker
// in schema_compatibility, then the owner packages' database functions (ApplyFunctions). It refuses a
// database made before the baseline (ErrPreBaseline), changing nothing.
func MigrateUp(ctx context.Context, db *sql.DB) error {
	v, pre, err := preBaseline(ctx, db)
	if err != nil {
		return fmt.Errorf("migrate up: %w", err)
	}
	if pre {
		return fmt.Errorf("migrate up: %w", preBaselineError(v))
	}
	if err := migrateSchema(ctx, db); err != nil {
		return err
	}
	return ApplyFunctions(ctx, db)
}

func migrateSchema(ctx context.Context, db *sql.DB) error {
	versions, err := migrationVersions()
	if err != nil {
		return err
	}
	return withMigrator(ctx, db, func(m *migrate.Migrate) error {
		current, dirty, err := m.Version()
		if errors.Is(err, migrate.ErrNilVersion) {
			current, err = 0, nil
		}
		if err != nil {
			return fmt.Errorf("migrate up: %w", err)
		}
		if dirty {
			return fmt.Errorf("migrate up: version %d is dirty (a migration failed half-way; fix the schema, then force the version)", current)
		}
		for _, v := range versions {
			if v <= current {
				continue
			}
			if err := m.Migrate(v); err != nil && !errors.Is(err, migrate.ErrNoChange) {
				return fmt.Errorf("migrate up to %d: %w", v, err)
			}
			if err := recordCompatibility(ctx, db, v); err != nil {
				return err
			}
		}
		return nil
	})
}

// recordCompatibility notes whether migration v, just applied, is backward compatible.
func recordCompatibility(ctx context.Context, db *sql.DB, v uint) error {
	compatible, err := BackwardCompatible(v)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `INSERT INTO schema_compatibility (version, backward_compatible) VALUES ($1, $2)
		ON CONFLICT (version) DO UPDATE SET backward_compatible = EXCLUDED.backward_compatible, applied_at = now()`, int64(v), compatible)
	if err != nil {
		return fmt.Errorf("record compatibility of migration %d: %w", v, err)
	}
	return nil
}

// BackwardCompatible reports whether migration v's up file starts with CompatibleMarker.
func BackwardCompatible(v uint) (bool, error) {
	name, err := upFile(v)
	if err != nil {
		return false, err
	}
	b, err := fs.ReadFile(migrations, "migrations/"+name)
	if err != nil {
		return false, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(first) == CompatibleMarker, nil
}

// upFile is the name of migration v's up file.
func upFile(v uint) (string, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		if n, ok := fileVersion(e.Name()); ok && n == v && strings.HasSuffix(e.Name(), ".up.sql") {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("migration %d: no up file", v)
}

// migrationVersions are the embedded migrations' versions, ascending.
func migrationVersions() ([]uint, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	var out []uint
	for _, e := range entries { // sorted by name, and names start with zero-padded versions
		v, ok := fileVersion(e.Name())
		if !ok {
			return nil, fmt.Errorf("migration %s: no version prefix", e.Name())
		}
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	return out, nil
}

func fileVersion(name string) (uint, bool) {
	prefix, _, ok := strings.Cut(name, "_")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(prefix, 10, 64)
	return uint(v), err == nil
}

// MigrateDown reverts the newest steps migrations; steps <= 0 reverts them all.
func MigrateDown(ctx context.Context, db *sql.DB, steps int) error {
	return withMigrator(ctx, db, func(m *migrate.Migrate) error {
		var err error
		if steps <= 0 {
			err = m.Down()
		} else {
			err = m.Steps(-steps)
		}
		if err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("migrate down: %w", err)
		}
		// Reverted migrations are no longer applied: forget their compatibility (the table itself is gone
		// when the baseline was reverted).
		v, _, err := m.Version()
		if errors.Is(err, migrate.ErrNilVersion) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = db.ExecContext(ctx, `DELETE FROM schema_compatibility WHERE version > $1`, int64(v))
		return err
	})
}

// Version reports the schema version of db (0 when no migration ran) and whether a migration failed
// half-way (dirty).
func Version(ctx context.Context, db *sql.DB) (version uint, dirty bool, err error) {
	err = withMigrator(ctx, db, func(m *migrate.Migrate) error {
		version, dirty, err = m.Version()
		if errors.Is(err, migrate.ErrNilVersion) {
			version, dirty, err = 0, false, nil
		}
		return err
	})
	return version, dirty, err
}

// ErrSchemaNotCurrent means the database schema is not the version this build expects.
var ErrSchemaNotCurrent = errors.New("database schema is not current")

// CheckCurrent returns ErrSchemaNotCurrent (wrapped, with the versions) unless db is at LatestVersion and
// clean. It only reads, so it is cheap enough for a readiness probe.
func CheckCurrent(ctx context.Context, db *sql.DB) error {
	want, err := LatestVersion()
	if err != nil {
		return err
	}
	var (
		got   int64
		dirty bool
	)
	// golang-migrate keeps one row in schema_migrations; reading it directly avoids taking its lock.
	err = db.QueryRowContext(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&got, &dirty)
	switch {
	case errors.Is(err, sql.ErrNoRows) || isUndefinedTable(err):
		return fmt.Errorf("%w: no migration applied, want version %d (run `reftrackd migrate up`)", ErrSchemaNotCurrent, want)
	case err != nil:
		return fmt.Errorf("read schema version: %w", err)
	case dirty:
		return fmt.Errorf("%w: version %d is dirty (a migration failed half-way; fix it, then `reftrackd migrate`)", ErrSchemaNotCurrent, got)
	}
	if recorded, err := baselineRecorded(ctx, db); err != nil {
		return err
	} else if !recorded {
		return fmt.Errorf("%w: %w", ErrSchemaNotCurrent, preBaselineError(got))
	}
	switch {
	case uint(got) < want:
		return fmt.Errorf("%w: database at version %d, this build wants %d (run `reftrackd migrate up`)", ErrSchemaNotCurrent, got, want)
	case uint(got) > want:
		if err := checkAhead(ctx, db, want, uint(got)); err != nil {
			return err
		}
	}
	missing, err := missingFunctions(ctx, db)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: database functions %s missing (run this build's `reftrackd migrate up`)", ErrSchemaNotCurrent, strings.Join(missing, ", "))
	}
	unattached, err := missingTriggers(ctx, db)
	if err != nil {
		return err
	}
	if len(unattached) > 0 {
		return fmt.Errorf("%w: trigger %s on %s missing (run this build's `reftrackd migrate up`)", ErrSchemaNotCurrent, unattached[0].Name, unattached[0].Table)
	}
	return nil
}

// checkAhead accepts a schema newer than this build (a rolling deploy migrated before replacing this
// replica) when every migration after the build's is recorded as backward compatible.
func checkAhead(ctx context.Context, db *sql.DB, want, got uint) error {
	var recorded, incompatible int64
	var first sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE NOT backward_compatible),
		min(version) FILTER (WHERE NOT backward_compatible) FROM schema_compatibility WHERE version > $1 AND version <= $2`,
		int64(want), int64(got)).Scan(&recorded, &incompatible, &first)
	switch {
	case isUndefinedTable(err):
		recorded = 0
	case err != nil:
		return fmt.Errorf("read schema compatibility: %w", err)
	case incompatible > 0:
		return fmt.Errorf("%w: database at version %d, this build wants %d, and migration %d is not backward compatible (deploy a build of version %d or later)",
			ErrSchemaNotCurrent, got, want, first.Int64, got)
	}
	// Versions are consecutive (db_test checks it): every migration after the build's must be recorded.
	if recorded != int64(got-want) {
		return fmt.Errorf("%w: database at version %d, this build wants %d, and not every newer migration is known to be backward compatible (deploy a build of version %d or later)",
			ErrSchemaNotCurrent, got, want, got)
	}
	return nil
}

// Fingerprint identifies the embedded migrations' and database functions' content (test harnesses key
// template databases on it).
func Fingerprint() (string, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries { // ReadDir sorts by name
		b, err := fs.ReadFile(migrations, "migrations/"+e.Name())
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	fns, err := Functions()
	if err != nil {
		return "", err
	}
	for _, f := range fns {
		fmt.Fprintf(h, "%s/%s\x00%d\x00%s", f.Owner, f.Name, len(f.SQL), f.SQL)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrTransactionPooler means the connection reaches PostgreSQL through a pooler in transaction mode.
var ErrTransactionPooler = errors.New("the database connection goes through a transaction pooler")

// RequireSession fails with ErrTransactionPooler when db's connections do not keep one PostgreSQL
// session from one statement to the next, as through PgBouncer's transaction pooling. Migrations need a
// session: golang-migrate holds a session-level advisory lock for the whole run, and a migration file's
// statements must run on one server connection. The check watches backend process ids: a client
// connection must keep its backend while another one holds a transaction open. A pooler that happens to
// keep the same server connection for both can go unnoticed: the documentation (docs/deploy.md) is the
// rule, this check the safety net.
func RequireSession(ctx context.Context, db *sql.DB) error {
	a, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer b.Close()
	pid := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int64, error) {
		var p int64
		err := q.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&p)
		return p, err
	}
	for range 3 {
		before, err := pid(a)
		if err != nil {
			return err
		}
		tx, err := b.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		held, err := pid(tx)
		if err == nil {
			var after int64
			if after, err = pid(a); err == nil && (after != before || held == before) {
				err = fmt.Errorf("%w: a connection's PostgreSQL session changed between two statements; "+
					"migrations need a direct or session-pooled connection (set MIGRATE_DATABASE_URL)", ErrTransactionPooler)
			}
		}
		if rbErr := tx.Rollback(); err == nil {
			err = rbErr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
