package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jmoiron/sqlx"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/seed"
)

// withDB opens the configured database for fn.
func (e *env) withDB(ctx context.Context, fn func(context.Context, *sqlx.DB) error) error {
	cfg, err := e.config(nil)
	if err != nil {
		return err
	}
	pool, err := db.Open(ctx, cfg.DatabaseURL, db.PoolOptions{MaxOpenConns: 4})
	if err != nil {
		return err
	}
	defer pool.Close()
	return fn(ctx, pool)
}

func (e *env) seedCmd() *cobra.Command {
	var (
		asJSON   bool
		opts     seed.Options
		origins  []string
		leadAuth string
	)
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Create a fresh account, workspace, program (with API key), partner and referral link",
		Long: `seed creates a fresh account (with a login token), its workspace, a program with its API key,
a partner with its partner-program relationship and a referral link, and prints them. The API key and the
token are shown only here.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Origins, opts.LeadAuth = origins, leadAuth
			return e.withDB(cmd.Context(), func(ctx context.Context, d *sqlx.DB) error {
				if err := db.CheckCurrent(ctx, d.DB); err != nil {
					return err
				}
				r, err := seed.Run(ctx, d, opts)
				if err != nil {
					return err
				}
				if asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(r)
				}
				printSeed(e, r)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&leadAuth, "lead-auth", "server_required", "server_required or browser_allowed")
	f.StringArrayVar(&origins, "origin", nil, "an allowed browser origin of the program (repeatable)")
	f.StringVar(&opts.SiteURL, "site", "https://shop.example.com", "the brand's site: program domain and affiliate URL")
	f.StringVar(&opts.ProgramName, "name", "Seed program", "program name")
	f.StringVar(&opts.Email, "email", "", "account email (default a fresh seed-…@reftrack.test)")
	return cmd
}

func printSeed(e *env, r seed.Result) {
	fmt.Fprintf(e.stdout, `account        %s
account token  %s
advertiser id  %d
program id     %d
API key        %s
partner id     %d
link id        %d  (short link %s)
affiliate URL  %s
`, r.AccountEmail, r.AccountToken, r.AdvertiserID, r.ProgramID, r.APIKey, r.PartnerID, r.LinkID, r.ShortLink, r.AffiliateURL)
}
