package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/localpg"
	"github.com/reftrack/reftrack/pkg/seed"
)

// Local development defaults of `make run`.
const (
	devDataDir   = ".data"
	devLocalPort = 55432
	demoSlug     = "demo"
	demoEmail    = "demo@reftrack.test"
)

func (e *env) devCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "dev",
		Short: "Run on one machine: find or start Postgres, create and migrate the database, seed a demo, serve",
		Long: `dev is what "make run" does. It uses DATABASE_URL, else the local Postgres at 127.0.0.1:5432,
else starts a project-local Postgres under .data/postgres with the installed binaries. It creates the
database when missing, migrates it, seeds a demo program on first start (printing its API key and a
referral URL, also kept in .data/demo.json) and serves on LISTEN_ADDR (default :8080). A database of its
own (DATABASE_URL unset) that an earlier build made before the schema baseline is dropped and made
again, with a new demo program; one named by DATABASE_URL is left for you to recreate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.dev(cmd.Context())
		},
	}
}

func (e *env) dev(ctx context.Context) error {
	// One developer, no balancer: Ctrl-C stops at once.
	cfg, err := e.config(map[string]string{"LOG_FORMAT": "text", "DRAIN_DELAY": "0"})
	if err != nil {
		return err
	}
	logger := e.logger(cfg)
	dataDir := e.getenv("REFTRACK_DATA_DIR")
	if dataDir == "" {
		dataDir = devDataDir
	}
	say := func(format string, args ...any) { fmt.Fprintf(e.stderr, "reftrackd dev: "+format+"\n", args...) }

	if !config.DatabaseURLSet(e.getenv) && !localpg.Answers(5432) {
		cluster, err := localpg.Start(ctx, filepath.Join(dataDir, "postgres"), devLocalPort, say)
		if errors.Is(err, localpg.ErrNoBinaries) {
			return errors.New(localpg.InstallHint)
		}
		if err != nil {
			return fmt.Errorf("start a local PostgreSQL: %w", err)
		}
		defer func() {
			if err := cluster.Stop(); err != nil {
				say("stopping the local PostgreSQL: %v", err)
			}
		}()
		cfg.DatabaseURL = cluster.URL("reftrack")
	}

	pool, err := migratedDatabase(ctx, cfg.DatabaseURL, !config.DatabaseURLSet(e.getenv), say)
	if err != nil {
		return err
	}
	shop, err := e.demo(ctx, pool, cfg, dataDir)
	pool.Close()
	if err != nil {
		return err
	}
	return e.serveWith(ctx, cfg, logger, shop)
}

// migratedDatabase creates the database named in dsn when it does not exist, migrates it and returns a
// pool on it. A database made by a build from before the schema baseline cannot be migrated: when it is
// dev's own (own: DATABASE_URL unset, so the default or the project-local one under .data/), it only ever
// held development data, so it is dropped and made again; a database someone named is theirs to recreate.
func migratedDatabase(ctx context.Context, dsn string, own bool, say func(string, ...any)) (*sqlx.DB, error) {
	if err := ensureDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	pool, err := db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 4})
	if err != nil {
		return nil, err
	}
	err = db.MigrateUp(ctx, pool.DB)
	if err == nil {
		return pool, nil
	}
	pool.Close()
	if !errors.Is(err, db.ErrPreBaseline) {
		return nil, err
	}
	name := databaseName(dsn)
	if !own {
		return nil, fmt.Errorf("database %q (DATABASE_URL, which dev leaves as it is): %w", name, err)
	}
	say("database %q was made by an earlier build, before the schema baseline: dropping it and making it again (with a new demo program)", name)
	if err := dropDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	if err := ensureDatabase(ctx, dsn); err != nil {
		return nil, err
	}
	if pool, err = db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 4}); err != nil {
		return nil, err
	}
	if err := db.MigrateUp(ctx, pool.DB); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}

// databaseName is the database dsn names ("" for none).
func databaseName(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Path, "/")
}

// adminConn opens a connection to the "postgres" database of dsn's server, to create or drop the
// database dsn names, and returns that name and the server's address.
func adminConn(dsn string) (conn *sql.DB, name, host string, err error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, "", "", fmt.Errorf("DATABASE_URL must be a postgres:// URL for `reftrackd dev`")
	}
	name = strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return nil, "", "", errors.New("DATABASE_URL names no database")
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err = sql.Open("postgres", admin.String())
	return conn, name, u.Host, err
}

// dropDatabase drops the database named in dsn; another session on it makes that fail, saying so.
func dropDatabase(ctx context.Context, dsn string) error {
	conn, name, _, err := adminConn(dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "DROP DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("drop database %s (is another reftrackd or psql using it?): %w", name, err)
	}
	return nil
}

// ensureDatabase creates the database named in dsn when it does not exist, connecting to the same
// server's "postgres" database to do so.
func ensureDatabase(ctx context.Context, dsn string) error {
	conn, name, host, err := adminConn(dsn)
	if err != nil {
		return err
	}
	defer conn.Close()
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("connect to PostgreSQL at %s: %w", host, err)
	}
	if exists {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		if _, dup := db.IsUniqueViolation(err); !dup { // created meanwhile by someone else
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}

// demo seeds the demo program on first start and prints how to use it. The key is shown only when
// issued, so a copy is kept in dataDir/demo.json (0600) for later starts. It returns the program for the
// demo shop (nil when its key is lost).
func (e *env) demo(ctx context.Context, pool *sqlx.DB, cfg config.Config, dataDir string) (*seed.Result, error) {
	credsPath := filepath.Join(dataDir, "demo.json")
	var programID int64
	err := pool.GetContext(ctx, &programID, `SELECT id FROM programs WHERE slug = $1`, demoSlug)
	var r seed.Result
	switch {
	case errors.Is(err, sql.ErrNoRows):
		r, err = seed.Run(ctx, pool, seed.Options{
			Email:       demoEmail,
			ProgramName: "Demo shop",
			Slug:        demoSlug,
			SiteURL:     cfg.BaseURL,
			Origins:     []string{cfg.BaseURL},
		})
		if err != nil {
			return nil, fmt.Errorf("seed the demo program: %w", err)
		}
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return nil, err
		}
		b, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(credsPath, append(b, '\n'), 0o600); err != nil {
			return nil, err
		}
		fmt.Fprintf(e.stdout, "\nCreated the demo program (credentials kept in %s).\n", credsPath)
	case err != nil:
		return nil, err
	default:
		b, rerr := os.ReadFile(credsPath)
		if rerr != nil || json.Unmarshal(b, &r) != nil || r.ProgramID != programID {
			fmt.Fprintf(e.stdout, "\nThe demo program (id %d) exists, but its API key was shown only when it was created.\n"+
				"Run `go run ./cmd/reftrackd seed` for a fresh program with a new key.\n\n", programID)
			return nil, nil
		}
		// The key kept in demo.json stops working when someone regenerates it (the dashboard, the API):
		// printing it as the demo's key would send people, and the demo shop, into "Invalid API token".
		if k, kerr := apikeys.Authenticate(ctx, pool, r.APIKey); kerr != nil || k.ProgramID != programID {
			fmt.Fprintf(e.stdout, "\nThe demo program's API key kept in %s no longer works: it was regenerated (the\n"+
				"new key was shown once, where it was regenerated). The demo shop needs a working key: put the new\n"+
				"one in %s as \"api_key\", or remove that file and the database (.data/) to start over.\n\n", credsPath, credsPath)
			return nil, nil
		}
	}
	fmt.Fprintf(e.stdout, `
reftrack demo program
  program id     %d
  API key        %s
  account token  %s
  referral URL   %s   (opens the demo shop: Sign up, then Buy)
  dashboard      %s/dashboard (sign in as %s)
  partner portal %s/partners (sign in as %s)
  mail           %s/dev/mail (invitations to partners land here)
  API reference  %s/docs

`, r.ProgramID, r.APIKey, r.AccountToken, r.AffiliateURL, cfg.BaseURL, r.AccountEmail, cfg.BaseURL, seed.PartnerEmail(r.AccountEmail),
		cfg.BaseURL, cfg.BaseURL)
	return &r, nil
}
