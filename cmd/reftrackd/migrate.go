package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/db"
)

func (e *env) migrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply, revert or show database migrations",
		Long: `migrate applies, reverts or shows the schema's migrations. It connects with MIGRATE_DATABASE_URL,
else DATABASE_URL, and needs a direct or session-pooled connection: through a transaction pooler (PgBouncer's
pool_mode=transaction) migration locks and multi-statement files break, so up and down refuse one.
Run it once per deploy, before replacing the replicas (docs/deploy.md).`,
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "up",
			Short: "Apply every pending migration",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return e.withMigrationDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
					if err := db.MigrateUp(ctx, d.DB); err != nil {
						return err
					}
					return e.printVersion(ctx, d)
				})
			},
		},
		&cobra.Command{
			Use:   "down [N]",
			Short: "Revert the newest N migrations (default 1; \"all\" reverts every one)",
			Args:  cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				steps := 1
				if len(args) == 1 {
					if args[0] == "all" {
						steps = 0
					} else if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
						steps = n
					} else {
						return fmt.Errorf("N must be a positive number or \"all\", got %q", args[0])
					}
				}
				return e.withMigrationDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
					if err := db.MigrateDown(ctx, d.DB, steps); err != nil {
						return err
					}
					return e.printVersion(ctx, d)
				})
			},
		},
		&cobra.Command{
			Use:   "version",
			Short: "Print the database's schema version and the one this build expects",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				// golang-migrate takes and releases a session lock here too: the same connection as up and down.
				return e.withMigrationDB(cmd.Context(), e.printVersion)
			},
		},
	)
	return cmd
}

// withMigrationDB runs fn on MIGRATE_DATABASE_URL (else DATABASE_URL) after checking that the connection
// keeps its session.
func (e *env) withMigrationDB(ctx context.Context, fn func(context.Context, *sqlx.DB) error) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	dsn := cfg.DatabaseURL
	if cfg.MigrateDatabaseURL != "" {
		dsn = cfg.MigrateDatabaseURL
	}
	pool, err := db.Open(ctx, dsn, db.PoolOptions{MaxOpenConns: 4})
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := db.RequireSession(ctx, pool.DB); err != nil {
		return err
	}
	return fn(ctx, pool)
}

func (e *env) printVersion(ctx context.Context, d *sqlx.DB) error {
	v, dirty, err := db.Version(ctx, d.DB)
	if err != nil {
		return err
	}
	latest, err := db.LatestVersion()
	if err != nil {
		return err
	}
	pre, err := db.PreBaseline(ctx, d.DB)
	if err != nil {
		return err
	}
	state := "current"
	switch {
	case pre:
		state = "made by a build from before the schema baseline: drop the database and create it again"
	case dirty:
		state = "dirty: a migration failed half-way"
	case v < latest:
		state = "behind: run `reftrackd migrate up`"
	case v > latest:
		state = "ahead of this build"
	}
	fmt.Fprintf(e.stdout, "schema version %d (this build expects %d; %s)\n", v, latest, state)
	return nil
}
