// Package programs owns a program's settings, its partners (with their partner-program relationships)
// and its referral links.
package programs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	accountssql "github.com/reftrack/reftrack/pkg/accounts/sql"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/secret"
)

// Errors of this package.
var (
	ErrNotFound        = errors.New("not found")
	ErrShortLinkTaken  = errors.New("short link taken")
	ErrPartnerNotFound = errors.New("partner not found in this program's workspace")
)

// Lead authentication modes.
const (
	LeadAuthServerRequired = "server_required"
	LeadAuthBrowserAllowed = "browser_allowed"
)

// Program is a program's settings.
type Program struct {
	ID                    int64          `db:"id"`
	WorkspaceID           int64          `db:"workspace_id"`
	Name                  string         `db:"name"`
	Domain                string         `db:"domain"`
	Slug                  string         `db:"slug"`
	Status                string         `db:"status"`
	LeadAuth              string         `db:"lead_auth"`
	CookieWindowDays      int            `db:"cookie_window_days"`
	AttributionWindowDays int            `db:"attribution_window_days"`
	CommissionType        string         `db:"commission_type"`
	CommissionRate        string         `db:"commission_rate"` // decimal text, never a float
	DurationMonths        *int           `db:"commission_duration_months"`
	AllowedOrigins        pq.StringArray `db:"allowed_origins"`
	// HoldDays, CommissionApproval and PayoutMinimumCents are the ledger's settings (pkg/ledger).
	HoldDays           int    `db:"hold_days"`
	CommissionApproval string `db:"commission_approval"`
	PayoutMinimumCents int64  `db:"payout_minimum_cents"`
	// Enrollment, PartnerApproval and PartnerLinkCodes: how partners join and what they may do.
	Enrollment       string `db:"enrollment"`
	PartnerApproval  string `db:"partner_approval"`
	PartnerLinkCodes bool   `db:"partner_link_codes"`
	// Currencies are the ISO 4217 codes the program records money in; a sale without a currency is in
	// DefaultCurrency.
	Currencies      pq.StringArray `db:"currencies"`
	DefaultCurrency string         `db:"default_currency"`
	CreatedAt       time.Time      `db:"created_at"`
	UpdatedAt       time.Time      `db:"updated_at"`
	// OwnerSuspended: an owner of the program's workspace is suspended (set by Get only).
	OwnerSuspended bool `db:"owner_suspended"`
}

// AllowsOrigin reports whether a browser on origin may call the program's browser routes.
func (p Program) AllowsOrigin(origin string) bool {
	for _, o := range p.AllowedOrigins {
		if o == origin {
			return true
		}
	}
	return false
}

const programColumns = `id, workspace_id, name, domain, slug, status, lead_auth, cookie_window_days,
	attribution_window_days, commission_type, commission_rate::text AS commission_rate,
	commission_duration_months, allowed_origins, hold_days, commission_approval, payout_minimum_cents, enrollment, partner_approval, partner_link_codes,
	currencies, default_currency, created_at, updated_at`

// Get reads a program.
func Get(ctx context.Context, q sqlx.QueryerContext, id int64) (Program, error) {
	var p Program
	err := sqlx.GetContext(ctx, q, &p, `SELECT `+programColumns+`, EXISTS (SELECT FROM `+accountssql.SuspendedOwners+`(workspace_id)) AS owner_suspended
		FROM programs WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Program{}, ErrNotFound
	}
	return p, err
}

// KnownOrigins lists every origin some program allows.
func KnownOrigins(ctx context.Context, q sqlx.QueryerContext) ([]string, error) {
	var list []string
	err := sqlx.SelectContext(ctx, q, &list, `SELECT DISTINCT unnest(allowed_origins) FROM programs`)
	return list, err
}

// Update is a partial change of settings; nil fields keep their value. Apply checks every field given
// (see the ranges in settings.go).
type Update struct {
	Name *string
	// Domain is checked and normalised by Domain.
	Domain *string
	// AllowedOrigins are checked and normalised by NormaliseOrigin.
	AllowedOrigins        *[]string
	LeadAuth              *string
	CookieWindowDays      *int64
	AttributionWindowDays *int64
	CommissionType        *string
	// CommissionRate is decimal text as sent (Rate); it is checked against the commission type the
	// program has after the update.
	CommissionRate *string
	// DurationMonths: 0 is lifetime.
	DurationMonths *int64
	// HoldDays, CommissionApproval and PayoutMinimumCents: the ledger's settings.
	HoldDays           *int64
	CommissionApproval *string
	PayoutMinimumCents *int64
	// Enrollment, PartnerApproval and PartnerLinkCodes: how partners join.
	Enrollment       *string
	PartnerApproval  *string
	PartnerLinkCodes *bool
	// Currencies and DefaultCurrency: the money the program records (commission.CheckCurrencies).
	Currencies      *[]string
	DefaultCurrency *string
}

// CurrencyError refuses a program's currencies or default currency (400); its message is the answer's.
type CurrencyError struct{ Err error }

func (e *CurrencyError) Error() string { return e.Err.Error() }

// Apply checks and changes a program's settings in one transaction: a refused change stores nothing.
func Apply(ctx context.Context, dbx *sqlx.DB, id int64, u Update) (Program, error) {
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Program{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var current Program
	// Locked, so that a concurrent change of the commission type cannot slip past the rate's check.
	err = sqlx.GetContext(ctx, tx, &current, `SELECT `+programColumns+` FROM programs WHERE id = $1 FOR UPDATE`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Program{}, ErrNotFound
	}
	if err != nil {
		return Program{}, err
	}

	sets := []string{"updated_at = now()"}
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
	}
	if u.Name != nil {
		add("name", *u.Name)
	}
	if u.Domain != nil {
		d, err := Domain(*u.Domain)
		if err != nil {
			return Program{}, err
		}
		add("domain", d)
	}
	if u.AllowedOrigins != nil {
		origins, err := NormaliseOrigins(*u.AllowedOrigins)
		if err != nil {
			return Program{}, err
		}
		add("allowed_origins", pq.Array(origins))
	}
	if u.LeadAuth != nil {
		add("lead_auth", *u.LeadAuth)
	}
	for _, w := range []struct {
		field string
		days  *int64
	}{{"cookie_window_days", u.CookieWindowDays}, {"attribution_window_days", u.AttributionWindowDays}} {
		if w.days == nil {
			continue
		}
		if err := CheckWindow(w.field, *w.days); err != nil {
			return Program{}, err
		}
		add(w.field, *w.days)
	}
	if u.CommissionType != nil || u.CommissionRate != nil {
		ctype, rate := current.CommissionType, current.CommissionRate
		if u.CommissionType != nil {
			ctype = *u.CommissionType
		}
		if u.CommissionRate != nil {
			rate = *u.CommissionRate
		}
		// The rate the program ends up with must fit the type it ends up with, whichever of them changed.
		rate, err := Rate(ctype, rate)
		if err != nil {
			return Program{}, err
		}
		add("commission_type", ctype)
		add("commission_rate", rate)
	}
	if u.DurationMonths != nil {
		months, err := DurationMonths(*u.DurationMonths)
		if err != nil {
			return Program{}, err
		}
		add("commission_duration_months", months)
	}
	if u.HoldDays != nil {
		if err := CheckHoldDays(*u.HoldDays); err != nil {
			return Program{}, err
		}
		add("hold_days", *u.HoldDays)
	}
	if u.CommissionApproval != nil {
		if err := CheckApproval(*u.CommissionApproval); err != nil {
			return Program{}, err
		}
		add("commission_approval", *u.CommissionApproval)
	}
	if u.PayoutMinimumCents != nil {
		if err := CheckPayoutMinimum(*u.PayoutMinimumCents); err != nil {
			return Program{}, err
		}
		add("payout_minimum_cents", *u.PayoutMinimumCents)
	}
	if u.Enrollment != nil {
		if err := CheckEnrollment(*u.Enrollment); err != nil {
			return Program{}, err
		}
		add("enrollment", *u.Enrollment)
	}
	if u.PartnerApproval != nil {
		if err := CheckPartnerApproval(*u.PartnerApproval); err != nil {
			return Program{}, err
		}
		add("partner_approval", *u.PartnerApproval)
	}
	if u.PartnerLinkCodes != nil {
		add("partner_link_codes", *u.PartnerLinkCodes)
	}
	if u.Currencies != nil || u.DefaultCurrency != nil {
		// The list and the default the program ends up with must fit together, whichever changed.
		list, def := []string(current.Currencies), current.DefaultCurrency
		if u.Currencies != nil {
			list = *u.Currencies
		}
		if u.DefaultCurrency != nil {
			def = *u.DefaultCurrency
		}
		if err := commission.CheckCurrencies(list, def); err != nil {
			return Program{}, &CurrencyError{Err: err}
		}
		add("currencies", pq.Array(list))
		add("default_currency", def)
	}
	args = append(args, id)
	var p Program
	err = sqlx.GetContext(ctx, tx, &p, fmt.Sprintf(`UPDATE programs SET %s WHERE id = $%d RETURNING %s`,
		strings.Join(sets, ", "), len(args), programColumns), args...)
	if err != nil {
		return Program{}, err
	}
	return p, tx.Commit()
}

// Partner is a partner as seen from one program.
type Partner struct {
	ID               int64  `db:"id"`
	Name             string `db:"name"`
	Email            string `db:"email"`
	ProgramID        int64  `db:"program_id"`
	PartnerProgramID int64  `db:"partner_program_id"`
	// Synthetic marks the partner `reftrack test --chain` records its chains against: never paid, and
	// left out of partner counts and the readiness payout gate.
	Synthetic bool      `db:"synthetic"`
	CreatedAt time.Time `db:"created_at"`
	// Status is the enrollment (Status* constants); StatusReason the reason given with a rejection or a ban.
	Status       string  `db:"status"`
	StatusReason *string `db:"status_reason"`
	// Stats are the partner's real events in the program (set by Partners, PartnerOf and
	// PartnersByEnrollment only).
	Stats Stats `db:"-"`
	// IsTest is false for every partner: only a webhook's sample (webhooks.Sample) sets it, so that a
	// receiver can tell the sample from a real partner.
	IsTest bool `db:"-"`
}

// Stats are a partner's real events in a program, all time: clicks (no bots), settled leads and sales,
// test events left out.
type Stats struct {
	Clicks int64 `db:"clicks"`
	Leads  int64 `db:"leads"`
	Sales  int64 `db:"sales"`
}

// NewPartner is a partner to add to a program.
type NewPartner struct {
	Name  string
	Email string
	// Synthetic marks the synthetic chain's fixture partner.
	Synthetic bool
}

// AddPartner creates the partner in the program's workspace (or reuses the one with that email) and its
// partner-program relationship, in one transaction.
func AddPartner(ctx context.Context, dbx *sqlx.DB, programID int64, n NewPartner) (Partner, error) {
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Partner{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	out, err := InsertPartner(ctx, tx, programID, n)
	if err != nil {
		return Partner{}, err
	}
	return out, tx.Commit()
}

// InsertPartner is AddPartner in the caller's transaction. A partner reused by a synthetic NewPartner
// becomes synthetic; a synthetic one stays so.
func InsertPartner(ctx context.Context, tx sqlx.ExtContext, programID int64, n NewPartner) (Partner, error) {
	p, err := Get(ctx, tx, programID)
	if err != nil {
		return Partner{}, err
	}
	var partnerID int64
	err = sqlx.GetContext(ctx, tx, &partnerID, `INSERT INTO partners (workspace_id, name, email, synthetic) VALUES ($1, $2, $3, $4)
		ON CONFLICT (workspace_id, lower(email)) DO UPDATE SET name = partners.name, synthetic = partners.synthetic OR EXCLUDED.synthetic
		RETURNING id`, p.WorkspaceID, n.Name, n.Email, n.Synthetic)
	if err != nil {
		return Partner{}, fmt.Errorf("create partner: %w", err)
	}
	// Added by the brand, the partner is approved at once; one whose invitation was withdrawn is back in.
	if _, err := tx.ExecContext(ctx, `INSERT INTO partner_programs (partner_id, program_id) VALUES ($1, $2)
		ON CONFLICT (partner_id, program_id) DO UPDATE SET status = 'active', status_reason = NULL, status_changed_at = now()
		WHERE partner_programs.status = 'removed'`, partnerID, programID); err != nil {
		return Partner{}, fmt.Errorf("create partner-program relationship: %w", err)
	}
	return PartnerOf(ctx, tx, programID, partnerID)
}

// RealPartners is a scalar subquery that counts the real partners of the program aliased p in the
// enclosing query: active partner-program relationships of partners that are not synthetic.
const RealPartners = `(SELECT count(*) FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id
	WHERE pp.program_id = p.id AND pp.status IN ('active', 'approved') AND NOT pa.synthetic)`

const partnerQuery = `SELECT pa.id, pa.name, pa.email, pp.program_id, pp.id AS partner_program_id, pa.synthetic, pa.created_at,
	` + StatusColumn + ` AS status, pp.status_reason
	FROM partners pa JOIN partner_programs pp ON pp.partner_id = pa.id`

// Partners lists the program's partners.
func Partners(ctx context.Context, q sqlx.QueryerContext, programID int64) ([]Partner, error) {
	list := []Partner{}
	if err := sqlx.SelectContext(ctx, q, &list, partnerQuery+` WHERE pp.program_id = $1 AND pp.status <> 'removed' ORDER BY pa.id`,
		programID); err != nil {
		return nil, err
	}
	stats, err := statsOf(ctx, q, programID, nil)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].Stats = stats[list[i].ID]
	}
	return list, nil
}

// Link is a referral link.
type Link struct {
	ID        int64   `db:"id"`
	ShortLink string  `db:"short_link"`
	PartnerID *int64  `db:"partner_id"`
	ProgramID *int64  `db:"program_id"`
	Enabled   bool    `db:"enabled"`
	Domain    *string `db:"domain"` // the program's, for the referral URL
	// Origins are the program's allowed origins: the one on the domain gives the referral URL its scheme
	// and port.
	Origins   pq.StringArray `db:"allowed_origins"`
	CreatedAt time.Time      `db:"created_at"`
	UpdatedAt time.Time      `db:"updated_at"`
	// IsTest is false for every link: only a webhook's sample (webhooks.Sample) sets it, so that a
	// receiver can tell the sample from a real link.
	IsTest bool `db:"-"`
}

// ReferralURL is the program's site with ?aff=<short_link>. The domain is a host name alone; an allowed
// origin on that host says the site's scheme and port (https preferred; `make run`'s demo shop is
// http://localhost:8080, whose port the domain cannot hold). Without one: https, or http for a local host.
func (l Link) ReferralURL() string {
	if l.Domain == nil {
		return ""
	}
	host := *l.Domain
	site := "https://" + host
	if strings.HasPrefix(host, "localhost") || strings.HasPrefix(host, "127.0.0.1") {
		site = "http://" + host
	}
	for _, o := range l.Origins {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Hostname(), host) {
			continue
		}
		site = u.Scheme + "://" + u.Host
		if u.Scheme == "https" {
			break
		}
	}
	return site + "/?aff=" + url.QueryEscape(l.ShortLink)
}

const linkQuery = `SELECT l.id, l.short_link, l.partner_id, l.program_id, l.enabled, p.domain, p.allowed_origins,
	l.created_at, l.updated_at
	FROM referral_links l LEFT JOIN programs p ON p.id = l.program_id`

// Links lists the program's referral links.
func Links(ctx context.Context, q sqlx.QueryerContext, programID int64) ([]Link, error) {
	list := []Link{}
	err := sqlx.SelectContext(ctx, q, &list, linkQuery+` WHERE l.program_id = $1 ORDER BY l.id`, programID)
	return list, err
}

// GetLink reads a referral link.
func GetLink(ctx context.Context, q sqlx.QueryerContext, id int64) (Link, error) {
	var l Link
	err := sqlx.GetContext(ctx, q, &l, linkQuery+` WHERE l.id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Link{}, ErrLinkNotFound
	}
	return l, err
}

// CreateLink makes a referral link for a partner of the program; shortLink "" draws a random one.
func CreateLink(ctx context.Context, dbx *sqlx.DB, programID, partnerID int64, shortLink string) (Link, error) {
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Link{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// FOR SHARE: a ban in progress (which locks the relationship to turn the partner's links off) finishes
	// first, and none starts until this link is in, so it cannot come out enabled for a banned partner.
	var status string
	err = tx.GetContext(ctx, &status, `SELECT status FROM partner_programs WHERE program_id = $1 AND partner_id = $2
		AND status <> 'removed' FOR SHARE`, programID, partnerID)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Link{}, ErrPartnerNotFound
	case err != nil:
		return Link{}, err
	case status == StatusBanned:
		return Link{}, ErrPartnerBanned
	}
	id, _, err := InsertLink(ctx, tx, programID, partnerID, shortLink)
	if err != nil {
		return Link{}, err
	}
	l, err := GetLink(ctx, tx, id)
	if err != nil {
		return Link{}, err
	}
	return l, tx.Commit()
}

// InsertLink inserts a referral link (in the caller's transaction, if any). shortLink "" draws a random
// one, drawing again on the unlikely clash; a chosen shortLink already in use is a *ShortLinkTakenError.
func InsertLink(ctx context.Context, q sqlx.QueryerContext, programID, partnerID int64, shortLink string) (int64, string, error) {
	for range 5 {
		short := shortLink
		if short == "" {
			r, err := secret.RandomString(8)
			if err != nil {
				return 0, "", err
			}
			short = strings.ToLower(r)
		}
		var id int64
		err := sqlx.GetContext(ctx, q, &id, `INSERT INTO referral_links (short_link, partner_id, program_id) VALUES ($1, $2, $3)
			ON CONFLICT (short_link) DO NOTHING RETURNING id`, short, partnerID, programID)
		switch {
		case err == nil:
			return id, short, nil
		case !errors.Is(err, sql.ErrNoRows):
			return 0, "", fmt.Errorf("create referral link: %w", err)
		case shortLink != "":
			return 0, "", &ShortLinkTakenError{ShortLink: shortLink}
		}
	}
	return 0, "", errors.New("create referral link: no free short link after 5 draws")
}

// EnsureLink points the referral link shortLink at the partner in the program and switches it on,
// creating it when it does not exist (the synthetic chain's fixture link).
func EnsureLink(ctx context.Context, db sqlx.ExecerContext, programID, partnerID int64, shortLink string) error {
	_, err := db.ExecContext(ctx, `INSERT INTO referral_links (short_link, partner_id, program_id) VALUES ($1, $2, $3)
		ON CONFLICT (short_link) DO UPDATE SET enabled = true, partner_id = EXCLUDED.partner_id, program_id = EXCLUDED.program_id, updated_at = now()`,
		shortLink, partnerID, programID)
	return err
}

// SetLinkEnabled turns a referral link on or off.
//
// A banned partner's link stays off (ErrPartnerBanned): the partner's relationship is read FOR SHARE, so a
// ban in progress (which locks it to turn the links off) finishes first.
func SetLinkEnabled(ctx context.Context, dbx *sqlx.DB, id int64, enabled bool) (Link, error) {
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Link{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if enabled {
		var isBanned bool
		err := tx.GetContext(ctx, &isBanned, `SELECT pp.status = 'banned' FROM referral_links l
			JOIN partner_programs pp ON pp.partner_id = l.partner_id AND pp.program_id = l.program_id
			WHERE l.id = $1 FOR SHARE OF pp`, id)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return Link{}, err
		}
		if isBanned {
			return Link{}, ErrPartnerBanned
		}
	}
	res, err := tx.ExecContext(ctx, `UPDATE referral_links SET enabled = $2, updated_at = now() WHERE id = $1`, id, enabled)
	if err != nil {
		return Link{}, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Link{}, ErrLinkNotFound
	}
	l, err := GetLink(ctx, tx, id)
	if err != nil {
		return Link{}, err
	}
	return l, tx.Commit()
}

// Summary is a program as a list of an account's programs shows it.
type Summary struct {
	ID             int64     `db:"id"`
	Name           string    `db:"name"`
	Domain         string    `db:"domain"`
	Status         string    `db:"status"`
	WorkspaceID    int64     `db:"workspace_id"`
	CommissionType string    `db:"commission_type"`
	CommissionRate string    `db:"commission_rate"` // decimal text
	Partners       int       `db:"partners"`        // real partners (RealPartners)
	CreatedAt      time.Time `db:"created_at"`
}

// OfAccount lists the programs of the workspaces the account belongs to, oldest first.
func OfAccount(ctx context.Context, q sqlx.QueryerContext, accountID int64) ([]Summary, error) {
	list := []Summary{}
	err := sqlx.SelectContext(ctx, q, &list, `SELECT p.id, p.name, p.domain, p.status, p.workspace_id, p.commission_type,
		p.commission_rate::text AS commission_rate, `+RealPartners+` AS partners, p.created_at
		FROM programs p JOIN workspace_members m ON m.workspace_id = p.workspace_id
		WHERE m.account_id = $1 ORDER BY p.created_at, p.id`, accountID)
	return list, err
}

// PartnerLinks lists the partner's referral links in the program.
func PartnerLinks(ctx context.Context, q sqlx.QueryerContext, programID, partnerID int64) ([]Link, error) {
	list := []Link{}
	err := sqlx.SelectContext(ctx, q, &list, linkQuery+` WHERE l.program_id = $1 AND l.partner_id = $2 ORDER BY l.id`, programID, partnerID)
	return list, err
}

// PayoutDetails reads the partner's payout method and sealed details ("" and nil when none were given).
func PayoutDetails(ctx context.Context, q sqlx.QueryerContext, partnerID int64) (method string, sealed []byte, at *time.Time, err error) {
	var row struct {
		Method *string    `db:"payout_method"`
		Sealed []byte     `db:"payout_details"`
		At     *time.Time `db:"payout_updated_at"`
	}
	err = sqlx.GetContext(ctx, q, &row, `SELECT payout_method, payout_details, payout_updated_at FROM partners WHERE id = $1`, partnerID)
	if err != nil || row.Method == nil {
		return "", nil, nil, err
	}
	return *row.Method, row.Sealed, row.At, nil
}

// SetPayoutDetails stores the partner's payout method and details, sealed by the caller.
func SetPayoutDetails(ctx context.Context, db sqlx.ExecerContext, partnerID int64, method string, sealed []byte, now time.Time) error {
	_, err := db.ExecContext(ctx, `UPDATE partners SET payout_method = $2, payout_details = $3, payout_updated_at = $4 WHERE id = $1`,
		partnerID, method, sealed, now)
	return err
}

// SetApplication keeps what a person sent with their application (their note and website; "" for none).
func SetApplication(ctx context.Context, tx sqlx.ExecerContext, enrollmentID int64, message, website string) error {
	_, err := tx.ExecContext(ctx, `UPDATE partner_programs SET application_message = NULLIF($2, ''), application_website = NULLIF($3, '')
		WHERE id = $1`, enrollmentID, message, website)
	return err
}

// SealedPayoutDetails reads the payout method and sealed details of each partner of ids that gave some.
func SealedPayoutDetails(ctx context.Context, q sqlx.QueryerContext, ids []int64) (map[int64]SealedDetails, error) {
	var rows []struct {
		ID int64 `db:"id"`
		SealedDetails
	}
	if err := sqlx.SelectContext(ctx, q, &rows, `SELECT id, payout_method, payout_details FROM partners
		WHERE id = ANY ($1) AND payout_method IS NOT NULL`, pq.Array(ids)); err != nil {
		return nil, err
	}
	out := make(map[int64]SealedDetails, len(rows))
	for _, r := range rows {
		out[r.ID] = r.SealedDetails
	}
	return out, nil
}

// SealedDetails are a partner's payout method and details as stored (sealed by the caller of
// SetPayoutDetails).
type SealedDetails struct {
	Method string `db:"payout_method"`
	Sealed []byte `db:"payout_details"`
}
