package programs

import (
	"context"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/secret"
)

// New is a program to create.
type New struct {
	WorkspaceID      int64
	Name             string
	Domain           string
	CommissionType   string
	CommissionRate   string // decimal text
	CookieWindowDays *int
	DurationMonths   *int
	CreatedBy        int64
}

// Create makes a program and its first API key in one transaction, and returns the key once.
func Create(ctx context.Context, dbx *sqlx.DB, n New) (Program, string, error) {
	key, err := secret.New(secret.ProgramKeyPrefix)
	if err != nil {
		return Program{}, "", err
	}
	suffix, err := secret.RandomString(6)
	if err != nil {
		return Program{}, "", err
	}
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Program{}, "", err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	cookieDays := 60
	if n.CookieWindowDays != nil {
		cookieDays = *n.CookieWindowDays
	}
	var id int64
	err = tx.GetContext(ctx, &id, `INSERT INTO programs (workspace_id, name, domain, slug, commission_type, commission_rate,
		commission_duration_months, cookie_window_days) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		n.WorkspaceID, n.Name, n.Domain, Slug(n.Name)+"-"+strings.ToLower(suffix), n.CommissionType, n.CommissionRate,
		n.DurationMonths, cookieDays)
	if err != nil {
		return Program{}, "", fmt.Errorf("create program: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO api_keys (program_id, key_hash, last4, created_by) VALUES ($1, $2, $3, $4)`,
		id, key.Hash, key.Last4, n.CreatedBy); err != nil {
		return Program{}, "", fmt.Errorf("create API key: %w", err)
	}
	p, err := Get(ctx, tx, id)
	if err != nil {
		return Program{}, "", err
	}
	return p, key.Plain, tx.Commit()
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
