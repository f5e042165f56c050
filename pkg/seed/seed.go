// Package seed creates a complete, working program in one transaction: an account with a login token,
// its workspace (owner), a program with an API key, a partner with its partner-program relationship and
// a referral link. `reftrackd seed` and `make run`'s demo use it.
package seed

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/secret"
)

// Options choose what is created. Zero values take the defaults noted.
type Options struct {
	// Email of the account; default a fresh seed-<random>@reftrack.test.
	Email string
	// ProgramName; default "Seed program".
	ProgramName string
	// Slug of the program; default derived from the name plus a random suffix.
	Slug string
	// SiteURL is the brand's site: the program's domain is its host and the affiliate URL points at it.
	// Default https://shop.example.com.
	SiteURL string
	// LeadAuth is "server_required" (default) or "browser_allowed".
	LeadAuth string
	// Origins fill the program's allowed origins.
	Origins []string
	// CommissionType and CommissionRate; default "percent" and "20".
	CommissionType string
	CommissionRate string
}

// Result is what `reftrackd seed --json` prints.
type Result struct {
	AccountEmail string `json:"account_email"`
	AccountToken string `json:"account_token"`
	AdvertiserID int64  `json:"advertiser_id"`
	ProgramID    int64  `json:"program_id"`
	APIKey       string `json:"api_key"`
	PartnerID    int64  `json:"partner_id"`
	LinkID       int64  `json:"link_id"`
	ShortLink    string `json:"short_link"`
	AffiliateURL string `json:"affiliate_url"`
}

// AccountTokenTTL is how long an account login token is valid.
const AccountTokenTTL = 90 * 24 * time.Hour

func (o *Options) defaults() error {
	if o.Email == "" {
		r, err := secret.RandomString(10)
		if err != nil {
			return err
		}
		o.Email = "seed-" + strings.ToLower(r) + "@reftrack.test"
	}
	if o.ProgramName == "" {
		o.ProgramName = "Seed program"
	}
	if o.SiteURL == "" {
		o.SiteURL = "https://shop.example.com"
	}
	if o.LeadAuth == "" {
		o.LeadAuth = "server_required"
	}
	if o.LeadAuth != "server_required" && o.LeadAuth != "browser_allowed" {
		return fmt.Errorf("lead auth must be server_required or browser_allowed, got %q", o.LeadAuth)
	}
	if o.CommissionType == "" {
		o.CommissionType, o.CommissionRate = "percent", "20"
	}
	for _, origin := range o.Origins {
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("origin must look like https://www.example.com, got %q", origin)
		}
	}
	if o.Slug == "" {
		r, err := secret.RandomString(6)
		if err != nil {
			return err
		}
		o.Slug = programs.Slug(o.ProgramName) + "-" + strings.ToLower(r)
	}
	return nil
}

// Run creates everything in one transaction.
func Run(ctx context.Context, db *sqlx.DB, opts Options) (Result, error) {
	if err := opts.defaults(); err != nil {
		return Result{}, err
	}
	site, err := url.Parse(opts.SiteURL)
	if err != nil || site.Host == "" {
		return Result{}, fmt.Errorf("site URL must be absolute, got %q", opts.SiteURL)
	}
	origins := make([]string, len(opts.Origins))
	for i, o := range opts.Origins {
		origins[i] = strings.TrimRight(o, "/")
	}

	key, err := secret.New(secret.ProgramKeyPrefix)
	if err != nil {
		return Result{}, err
	}
	token, err := secret.New(secret.AccountTokenPrefix)
	if err != nil {
		return Result{}, err
	}

	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	r := Result{AccountEmail: opts.Email, AccountToken: token.Plain, APIKey: key.Plain}
	var accountID, partnerProgramID int64
	steps := []struct {
		what string
		dest *int64
		q    string
		args []any
	}{
		{"account", &accountID, `INSERT INTO accounts (email, name) VALUES ($1, $2) RETURNING id`,
			[]any{opts.Email, "Seed account"}},
		{"workspace", &r.AdvertiserID, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id`,
			[]any{opts.ProgramName + " workspace"}},
	}
	for _, s := range steps {
		if err := tx.GetContext(ctx, s.dest, s.q, s.args...); err != nil {
			return Result{}, fmt.Errorf("create %s: %w", s.what, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO workspace_members (workspace_id, account_id, email, role)
		VALUES ($1, $2, $3, 'owner')`, r.AdvertiserID, accountID, opts.Email); err != nil {
		return Result{}, fmt.Errorf("create membership: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO login_tokens (account_id, kind, token_hash, last4, expires_at)
		VALUES ($1, 'seed', $2, $3, now() + $4 * interval '1 second')`,
		accountID, token.Hash, token.Last4, int64(AccountTokenTTL/time.Second)); err != nil {
		return Result{}, fmt.Errorf("create login token: %w", err)
	}
	if err := tx.GetContext(ctx, &r.ProgramID, `INSERT INTO programs
		(workspace_id, name, domain, slug, lead_auth, commission_type, commission_rate, allowed_origins)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		r.AdvertiserID, opts.ProgramName, site.Host, opts.Slug, opts.LeadAuth, opts.CommissionType,
		opts.CommissionRate, pq.Array(origins)); err != nil {
		return Result{}, fmt.Errorf("create program: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (program_id, key_hash, last4, created_by)
		VALUES ($1, $2, $3, $4)`, r.ProgramID, key.Hash, key.Last4, accountID); err != nil {
		return Result{}, fmt.Errorf("create API key: %w", err)
	}
	if err := tx.GetContext(ctx, &r.PartnerID, `INSERT INTO partners (workspace_id, name, email)
		VALUES ($1, 'Seed partner', $2) RETURNING id`, r.AdvertiserID, "partner+"+opts.Email); err != nil {
		return Result{}, fmt.Errorf("create partner: %w", err)
	}
	if err := tx.GetContext(ctx, &partnerProgramID, `INSERT INTO partner_programs (partner_id, program_id)
		VALUES ($1, $2) RETURNING id`, r.PartnerID, r.ProgramID); err != nil {
		return Result{}, fmt.Errorf("create partner-program relationship: %w", err)
	}
	if r.LinkID, r.ShortLink, err = programs.InsertLink(ctx, tx, r.ProgramID, r.PartnerID, ""); err != nil {
		return Result{}, err
	}
	if err := tx.Commit(); err != nil {
		return Result{}, err
	}

	aff := *site
	q := aff.Query()
	q.Set("aff", r.ShortLink)
	aff.RawQuery = q.Encode()
	if aff.Path == "" {
		aff.Path = "/"
	}
	r.AffiliateURL = aff.String()
	return r, nil
}
