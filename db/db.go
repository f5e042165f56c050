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
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return 0, err
	}
	var latest uint
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		v, err := strconv.ParseUint(prefix, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		latest = max(latest, uint(v))
	}
	return latest, nil
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

// MigrateUp applies every pending migration.
func MigrateUp(ctx context.Context, db *sql.DB) error {
	return withMigrator(ctx, db, func(m *migrate.Migrate) error {
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("migrate up: %w", err)
		}
		return nil
	})
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
		return nil
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
	case uint(got) != want:
		return fmt.Errorf("%w: database at version %d, this build wants %d (run `reftrackd migrate up`)", ErrSchemaNotCurrent, got, want)
	}
	return nil
}

// Fingerprint identifies the embedded migrations' content (test harnesses key template databases on it).
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
	return hex.EncodeToString(h.Sum(nil)), nil
}
