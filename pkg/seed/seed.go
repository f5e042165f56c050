// Package seed creates a complete, working program in one transaction: an account with a login token,
// its workspace (owner), a program with an API key, a partner with its partner-program relationship and
// a referral link. `reftrackd seed` and `make run`'s demo use it. It writes nothing itself: every row is
// made by the package that owns its table (accounts, logins, programs and, through it, apikeys).
package seed

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/logins"
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
	// Origins fill the program's allowed origins (scheme://host[:port]).
	Origins []string
	// CommissionType and CommissionRate; default "percent" and "20".
	CommissionType string
	CommissionRate string
	// Now starts the account token's 90 days; default the current time.
	Now time.Time
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
	if o.Now.IsZero() {
		o.Now = time.Now()
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
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	r := Result{AccountEmail: opts.Email}
	accountID, err := accounts.Create(ctx, tx, accounts.NewAccount{Email: opts.Email, Name: "Seed account"})
	if err != nil {
		return Result{}, err
	}
	if r.AdvertiserID, err = accounts.CreateWorkspace(ctx, tx, opts.ProgramName+" workspace", accountID, opts.Email); err != nil {
		return Result{}, err
	}
	token, err := logins.MintToken(ctx, tx, accountID, "seed", opts.Now)
	if err != nil {
		return Result{}, fmt.Errorf("create login token: %w", err)
	}
	r.AccountToken = token.Plain
	// The program's domain is the site's host name without its port, as every program's is (programs checks
	// the settings, the origins included, with the same rules as the API).
	program, key, err := programs.Insert(ctx, tx, programs.New{WorkspaceID: r.AdvertiserID, Name: opts.ProgramName,
		Domain: site.Hostname(), Slug: opts.Slug, LeadAuth: opts.LeadAuth, AllowedOrigins: opts.Origins,
		CommissionType: opts.CommissionType, CommissionRate: opts.CommissionRate, CreatedBy: accountID})
	if err != nil {
		return Result{}, err
	}
	r.ProgramID, r.APIKey = program.ID, key
	partner, err := programs.InsertPartner(ctx, tx, r.ProgramID, programs.NewPartner{Name: "Seed partner", Email: PartnerEmail(opts.Email)})
	if err != nil {
		return Result{}, err
	}
	r.PartnerID = partner.ID
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

// PartnerEmail is the email of the partner seeded for the account email: signing in to the partner portal
// (/partners) with it reaches that partner.
func PartnerEmail(accountEmail string) string { return "partner+" + accountEmail }
