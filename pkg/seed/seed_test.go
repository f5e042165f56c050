package seed_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/secret"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestRunCreatesAWorkingProgram(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	r, err := seed.Run(ctx, d.DB, seed.Options{
		LeadAuth: "browser_allowed",
		Origins:  []string{"http://localhost:8080", "https://www.shop.example.com/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^rt_[0-9A-Za-z]{40}$`).MatchString(r.APIKey) {
		t.Errorf("api_key = %q", r.APIKey)
	}
	if !regexp.MustCompile(`^rtu_[0-9A-Za-z]{40}$`).MatchString(r.AccountToken) {
		t.Errorf("account_token = %q", r.AccountToken)
	}
	u, err := url.Parse(r.AffiliateURL)
	if err != nil || u.Scheme != "https" || u.Host != "shop.example.com" || u.Query().Get("aff") != r.ShortLink {
		t.Errorf("affiliate_url = %q (short_link %q)", r.AffiliateURL, r.ShortLink)
	}

	// The key is stored only hashed, and identifies the program.
	var programID int64
	if err := d.Get(&programID, `SELECT program_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, secret.Hash(r.APIKey)); err != nil || programID != r.ProgramID {
		t.Errorf("api key lookup: program %d, %v; want %d", programID, err, r.ProgramID)
	}
	var plain int
	if err := d.Get(&plain, `SELECT count(*) FROM api_keys WHERE encode(key_hash, 'escape') LIKE '%' || $1 || '%'`, r.APIKey[3:13]); err != nil || plain != 0 {
		t.Errorf("the plain key appears in the database (%d, %v)", plain, err)
	}
	var account struct {
		Email string `db:"email"`
		Role  string `db:"role"`
	}
	if err := d.Get(&account, `SELECT a.email, m.role FROM login_tokens t JOIN accounts a ON a.id = t.account_id
		JOIN workspace_members m ON m.account_id = a.id AND m.workspace_id = $2
		WHERE t.token_hash = $1 AND t.expires_at > now() + interval '89 days'`, secret.Hash(r.AccountToken), r.AdvertiserID); err != nil {
		t.Fatalf("login token: %v", err)
	}
	if account.Email != r.AccountEmail || account.Role != "owner" {
		t.Errorf("token account = %+v, want %s as owner", account, r.AccountEmail)
	}

	var program struct {
		LeadAuth string         `db:"lead_auth"`
		Origins  pq.StringArray `db:"allowed_origins"`
		Domain   string         `db:"domain"`
		Cookie   int            `db:"cookie_window_days"`
		Window   int            `db:"attribution_window_days"`
	}
	if err := d.Get(&program, `SELECT lead_auth, allowed_origins, domain, cookie_window_days, attribution_window_days FROM programs WHERE id = $1`, r.ProgramID); err != nil {
		t.Fatal(err)
	}
	if program.LeadAuth != "browser_allowed" || strings.Join(program.Origins, " ") != "http://localhost:8080 https://www.shop.example.com" ||
		program.Domain != "shop.example.com" || program.Cookie != 60 || program.Window != 60 {
		t.Errorf("program = %+v", program)
	}
	var link struct {
		Partner int64 `db:"partner_id"`
		Program int64 `db:"program_id"`
		Enabled bool  `db:"enabled"`
	}
	if err := d.Get(&link, `SELECT partner_id, program_id, enabled FROM referral_links WHERE id = $1 AND short_link = $2`, r.LinkID, r.ShortLink); err != nil {
		t.Fatal(err)
	}
	if link.Partner != r.PartnerID || link.Program != r.ProgramID || !link.Enabled {
		t.Errorf("link = %+v", link)
	}
	var junctions int
	if err := d.Get(&junctions, `SELECT count(*) FROM partner_programs WHERE partner_id = $1 AND program_id = $2`, r.PartnerID, r.ProgramID); err != nil || junctions != 1 {
		t.Errorf("partner-program relationships = %d, %v", junctions, err)
	}

	// A second run makes a second, independent program.
	r2, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.ProgramID == r.ProgramID || r2.APIKey == r.APIKey || r2.ShortLink == r.ShortLink || r2.AccountEmail == r.AccountEmail {
		t.Errorf("second seed reused the first: %+v", r2)
	}
}

func TestRunRefusesBadOptionsAndWritesNothing(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	for name, opts := range map[string]seed.Options{
		"lead auth":      {LeadAuth: "sometimes"},
		"origin":         {Origins: []string{"localhost:8080"}},
		"origin path":    {Origins: []string{"https://a.example.com/page"}},
		"taken slug":     {Slug: "dup"},
		"non-URL site":   {SiteURL: "shop"},
		"bad commission": {CommissionType: "tiered", CommissionRate: "5"},
	} {
		t.Run(name, func(t *testing.T) {
			if name == "taken slug" {
				if _, err := seed.Run(context.Background(), d.DB, seed.Options{Slug: "dup"}); err != nil {
					t.Fatal(err)
				}
			}
			var before int
			_ = d.Get(&before, `SELECT count(*) FROM accounts`)
			if _, err := seed.Run(context.Background(), d.DB, opts); err == nil {
				t.Fatal("want an error")
			}
			var after int
			_ = d.Get(&after, `SELECT count(*) FROM accounts`)
			if after != before {
				t.Errorf("accounts %d → %d: a failed seed left rows behind", before, after)
			}
		})
	}
}

// The seeded program follows the API's rules: its domain is the site's host name without a port, its
// origins are normalised.
func TestRunStoresTheHostNameAsDomain(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	r, err := seed.Run(context.Background(), d.DB, seed.Options{SiteURL: "http://LocalHost:8080", Origins: []string{"http://LocalHost:8080/"}})
	if err != nil {
		t.Fatal(err)
	}
	var program struct {
		Domain  string         `db:"domain"`
		Origins pq.StringArray `db:"allowed_origins"`
	}
	if err := d.Get(&program, `SELECT domain, allowed_origins FROM programs WHERE id = $1`, r.ProgramID); err != nil {
		t.Fatal(err)
	}
	if program.Domain != "localhost" || strings.Join(program.Origins, " ") != "http://localhost:8080" {
		t.Errorf("program = %+v", program)
	}
	if u, err := url.Parse(r.AffiliateURL); err != nil || u.Host != "LocalHost:8080" {
		t.Errorf("affiliate URL = %s: the site as given, port included", r.AffiliateURL)
	}
}
