package programs

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/secret"
)

// New is a program to create. Insert checks the settings (see the ranges in settings.go).
type New struct {
	WorkspaceID int64
	Name        string
	// Domain is checked and normalised by Domain.
	Domain string
	// Slug is the program's unique slug; "" derives one from the name plus a random suffix.
	Slug string
	// LeadAuth is LeadAuthServerRequired ("" too) or LeadAuthBrowserAllowed.
	LeadAuth string
	// AllowedOrigins are checked and normalised by NormaliseOrigin.
	AllowedOrigins []string
	CommissionType string
	// CommissionRate is decimal text as sent (Rate).
	CommissionRate string
	// CookieWindowDays: nil is the default, 60.
	CookieWindowDays *int64
	// DurationMonths: nil or 0 is lifetime.
	DurationMonths *int64
	CreatedBy      int64
}

// Check refuses the settings Insert would refuse, without a database: a client (the CLI) checks what it
// is about to send with the server's own rules, and words the refusal with Message.
func (n New) Check() error {
	_, _, err := n.check()
	return err
}

// check checks n's settings and returns them as stored.
func (n New) check() (New, *int, error) {
	var err error
	if n.Domain, err = Domain(n.Domain); err != nil {
		return n, nil, err
	}
	if n.CommissionRate, err = Rate(n.CommissionType, n.CommissionRate); err != nil {
		return n, nil, err
	}
	if n.CookieWindowDays != nil {
		if err := CheckWindow("cookie_window_days", *n.CookieWindowDays); err != nil {
			return n, nil, err
		}
	}
	if n.AllowedOrigins != nil {
		if n.AllowedOrigins, err = NormaliseOrigins(n.AllowedOrigins); err != nil {
			return n, nil, err
		}
	}
	var months *int
	if n.DurationMonths != nil {
		if months, err = DurationMonths(*n.DurationMonths); err != nil {
			return n, nil, err
		}
	}
	return n, months, nil
}

// Create makes a program and its first API key in one transaction, and returns the key once.
func Create(ctx context.Context, dbx *sqlx.DB, n New) (Program, string, error) {
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Program{}, "", err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	p, key, err := Insert(ctx, tx, n)
	if err != nil {
		return Program{}, "", err
	}
	return p, key, tx.Commit()
}

// Insert makes a program and its first API key (issued by apikeys) in the caller's transaction, and
// returns the key once.
func Insert(ctx context.Context, tx sqlx.ExtContext, n New) (Program, string, error) {
	n, months, err := n.check()
	if err != nil {
		return Program{}, "", err
	}
	slug := n.Slug
	if slug == "" {
		suffix, err := secret.RandomString(6)
		if err != nil {
			return Program{}, "", err
		}
		slug = Slug(n.Name) + "-" + strings.ToLower(suffix)
	}
	leadAuth := n.LeadAuth
	if leadAuth == "" {
		leadAuth = LeadAuthServerRequired
	}
	origins := n.AllowedOrigins
	if origins == nil {
		origins = []string{} // NULL is not an empty list
	}
	cookieDays := int64(60)
	if n.CookieWindowDays != nil {
		cookieDays = *n.CookieWindowDays
	}
	var id int64
	err = sqlx.GetContext(ctx, tx, &id, `INSERT INTO programs (workspace_id, name, domain, slug, lead_auth, commission_type,
		commission_rate, commission_duration_months, cookie_window_days, allowed_origins)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		n.WorkspaceID, n.Name, n.Domain, slug, leadAuth, n.CommissionType, n.CommissionRate, months, cookieDays,
		pq.Array(origins))
	if err != nil {
		return Program{}, "", fmt.Errorf("create program: %w", err)
	}
	_, key, err := apikeys.Issue(ctx, tx, id, n.CreatedBy)
	if err != nil {
		return Program{}, "", fmt.Errorf("create API key: %w", err)
	}
	p, err := Get(ctx, tx, id)
	if err != nil {
		return Program{}, "", err
	}
	return p, key, nil
}

// Slug keeps lower-case letters and digits of s, joining the rest with single dashes ("program" when
// nothing is left).
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "program"
	}
	return b.String()
}
