// Package accounts owns accounts, workspaces and their members: it creates them (for a first login and
// for `reftrackd seed`), authenticates account login tokens (the CLI's Bearer token and the dashboard's
// session cookie) and decides what a member's role in a workspace allows.
package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/secret"
)

// Errors.
var (
	ErrInvalidToken = errors.New("login token unknown, revoked or expired")
	ErrSuspended    = errors.New("account suspended")
	ErrNotMember    = errors.New("not a member of the workspace")
)

// Account is a signed-in account.
type Account struct {
	ID          int64      `db:"id"`
	Email       string     `db:"email"`
	SuspendedAt *time.Time `db:"suspended_at"`
}

// NewAccount is an account to create. Issuer and Subject are its OpenID Connect identity; both are empty
// for an account made by `reftrackd seed` (its first login records them, found by its email).
type NewAccount struct {
	Email   string
	Name    string
	Issuer  string
	Subject string
}

// Create inserts an account, in the caller's transaction if any, and returns its id.
func Create(ctx context.Context, db sqlx.QueryerContext, n NewAccount) (int64, error) {
	var id int64
	if err := sqlx.GetContext(ctx, db, &id, `INSERT INTO accounts (email, name, oidc_issuer, oidc_subject) VALUES ($1, $2, $3, $4) RETURNING id`,
		n.Email, n.Name, nullable(n.Issuer), nullable(n.Subject)); err != nil {
		return 0, fmt.Errorf("create account: %w", err)
	}
	return id, nil
}

// RecordSubject records the OpenID Connect identity of an account that was found by its email.
func RecordSubject(ctx context.Context, db sqlx.ExecerContext, accountID int64, issuer, subject string) error {
	_, err := db.ExecContext(ctx, `UPDATE accounts SET oidc_issuer = $2, oidc_subject = $3, updated_at = now() WHERE id = $1`,
		accountID, issuer, subject)
	return err
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Authenticate finds the account of a login token.
func Authenticate(ctx context.Context, db sqlx.QueryerContext, token string) (Account, error) {
	var a Account
	err := sqlx.GetContext(ctx, db, &a, `SELECT a.id, a.email, a.suspended_at FROM login_tokens t
		JOIN accounts a ON a.id = t.account_id
		WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND t.expires_at > now()`, secret.Hash(token))
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, ErrInvalidToken
	}
	if err != nil {
		return Account{}, fmt.Errorf("authenticate login token: %w", err)
	}
	if a.SuspendedAt != nil {
		return Account{}, ErrSuspended
	}
	return a, nil
}

// Role is the account's role in a workspace.
func Role(ctx context.Context, db sqlx.QueryerContext, accountID, workspaceID int64) (string, error) {
	var role string
	err := sqlx.GetContext(ctx, db, &role, `SELECT role FROM workspace_members WHERE workspace_id = $1 AND account_id = $2`,
		workspaceID, accountID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotMember
	}
	return role, err
}

// Roles.
const (
	RoleOwner   = "owner"
	RoleAdmin   = "admin"
	RoleAnalyst = "analyst"
	RoleBilling = "billing"
)

// Actions a role may be allowed.
const (
	ActionProgramRead     = "program:read"
	ActionProgramWrite    = "program:write"
	ActionPartnersWrite   = "partners:write"
	ActionLinksWrite      = "links:write"
	ActionKeysRegenerate  = "keys:regenerate"
	ActionProcessorWrite  = "processor:write"
	ActionMembersWrite    = "members:write"
	ActionTrackingList    = "tracking:list"
	ActionCommissionsRead = "commissions:read"
	// Approving and rejecting commissions; creating payouts and marking them paid or failed.
	ActionCommissionsWrite = "commissions:write"
	ActionPayoutsWrite     = "payouts:write"
	// Managing webhook endpoints and their deliveries (they carry signing secrets): owner and admin.
	ActionWebhooksManage = "webhooks:manage"
)

// allowed is the one table of what each role may do.
var allowed = map[string]map[string]bool{
	RoleOwner: set(ActionProgramRead, ActionProgramWrite, ActionPartnersWrite, ActionLinksWrite, ActionKeysRegenerate,
		ActionProcessorWrite, ActionMembersWrite, ActionTrackingList, ActionCommissionsRead, ActionCommissionsWrite,
		ActionPayoutsWrite, ActionWebhooksManage),
	RoleAdmin: set(ActionProgramRead, ActionProgramWrite, ActionPartnersWrite, ActionLinksWrite, ActionProcessorWrite,
		ActionMembersWrite, ActionTrackingList, ActionCommissionsRead, ActionCommissionsWrite, ActionPayoutsWrite,
		ActionWebhooksManage),
	RoleAnalyst: set(ActionProgramRead, ActionTrackingList, ActionCommissionsRead),
	RoleBilling: set(ActionProgramRead, ActionCommissionsRead, ActionCommissionsWrite, ActionPayoutsWrite),
}

// Can reports whether role allows action.
func Can(role, action string) bool { return allowed[role][action] }

// Actions lists what role allows, sorted.
func Actions(role string) []string {
	out := []string{}
	for a := range allowed[role] {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func set(actions ...string) map[string]bool {
	m := make(map[string]bool, len(actions))
	for _, a := range actions {
		m[a] = true
	}
	return m
}

// Suspend marks the account with email suspended: it can no longer log in or use its tokens.
func Suspend(ctx context.Context, db sqlx.ExecerContext, email string) error {
	res, err := db.ExecContext(ctx, `UPDATE accounts SET suspended_at = COALESCE(suspended_at, now()), updated_at = now()
		WHERE lower(email) = lower($1)`, email)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("no account with email %s", email)
	}
	return nil
}

// Unsuspend lifts the suspension of the account with email: its logins, tokens and programs work again.
func Unsuspend(ctx context.Context, db sqlx.ExecerContext, email string) error {
	res, err := db.ExecContext(ctx, `UPDATE accounts SET suspended_at = NULL, updated_at = now()
		WHERE lower(email) = lower($1)`, email)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("no account with email %s", email)
	}
	return nil
}
