package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Membership errors.
var (
	ErrNoWorkspace    = errors.New("workspace not found")
	ErrAlreadyMember  = errors.New("already a member")
	ErrInvalidRole    = errors.New("invalid role")
	ErrOwnerGrantOnly = errors.New("only an owner grants the owner role")
)

// Member is a workspace member, or an invitation not yet accepted (AccountID nil).
type Member struct {
	AccountID *int64    `db:"account_id"`
	Email     string    `db:"email"`
	Role      string    `db:"role"`
	CreatedAt time.Time `db:"created_at"`
}

// CreateWorkspace makes a workspace with the account as its owner and returns the workspace's id. Its two
// inserts belong in one transaction: pass the caller's.
func CreateWorkspace(ctx context.Context, db sqlx.ExtContext, name string, ownerID int64, ownerEmail string) (int64, error) {
	var id int64
	if err := sqlx.GetContext(ctx, db, &id, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id`, name); err != nil {
		return 0, fmt.Errorf("create workspace: %w", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO workspace_members (workspace_id, account_id, email, role) VALUES ($1, $2, $3, 'owner')`,
		id, ownerID, ownerEmail); err != nil {
		return 0, fmt.Errorf("create membership: %w", err)
	}
	return id, nil
}

// LinkInvitations makes the account the member that every invitation sent to its email was waiting for.
func LinkInvitations(ctx context.Context, db sqlx.ExecerContext, accountID int64, email string) error {
	_, err := db.ExecContext(ctx, `UPDATE workspace_members SET account_id = $1 WHERE lower(email) = lower($2) AND account_id IS NULL`,
		accountID, email)
	return err
}

// Membership is the account's role in one workspace.
type Membership struct {
	WorkspaceID int64  `db:"workspace_id"`
	Role        string `db:"role"`
}

// Memberships lists the account's memberships: the workspaces it owns first, then in the order the
// memberships were made.
func Memberships(ctx context.Context, db sqlx.QueryerContext, accountID int64) ([]Membership, error) {
	list := []Membership{}
	err := sqlx.SelectContext(ctx, db, &list, `SELECT workspace_id, role FROM workspace_members WHERE account_id = $1
		ORDER BY (role = 'owner') DESC, id`, accountID)
	return list, err
}

// WorkspaceRole is the account's role in an existing workspace: ErrNoWorkspace, or ErrNotMember.
func WorkspaceRole(ctx context.Context, db sqlx.QueryerContext, accountID, workspaceID int64) (string, error) {
	var exists bool
	if err := sqlx.GetContext(ctx, db, &exists, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE id = $1)`, workspaceID); err != nil {
		return "", err
	}
	if !exists {
		return "", ErrNoWorkspace
	}
	return Role(ctx, db, accountID, workspaceID)
}

// Members lists the workspace's members and pending invitations, oldest first.
func Members(ctx context.Context, db sqlx.QueryerContext, workspaceID int64) ([]Member, error) {
	list := []Member{}
	err := sqlx.SelectContext(ctx, db, &list, `SELECT account_id, email, role, created_at FROM workspace_members
		WHERE workspace_id = $1 ORDER BY created_at, id`, workspaceID)
	return list, err
}

// Invite adds email to the workspace with role, granted by a member whose role is byRole; the person
// joins when they log in with that email.
func Invite(ctx context.Context, db sqlx.QueryerContext, workspaceID int64, email, role, byRole string) (Member, error) {
	if _, ok := allowed[role]; !ok {
		return Member{}, ErrInvalidRole
	}
	if role == RoleOwner && byRole != RoleOwner {
		return Member{}, ErrOwnerGrantOnly
	}
	var m Member
	err := sqlx.GetContext(ctx, db, &m, `INSERT INTO workspace_members (workspace_id, account_id, email, role)
		VALUES ($1, NULL, $2, $3) RETURNING account_id, email, role, created_at`, workspaceID, strings.TrimSpace(email), role)
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "23505" {
		return Member{}, ErrAlreadyMember
	}
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, ErrNoWorkspace
	}
	return m, err
}

// Workspace is a workspace the account belongs to, with its role there.
type Workspace struct {
	ID   int64  `db:"id"`
	Name string `db:"name"`
	Role string `db:"role"`
}

// Workspaces lists the account's workspaces, oldest membership first.
func Workspaces(ctx context.Context, db sqlx.QueryerContext, accountID int64) ([]Workspace, error) {
	list := []Workspace{}
	err := sqlx.SelectContext(ctx, db, &list, `SELECT w.id, w.name, m.role FROM workspace_members m
		JOIN workspaces w ON w.id = m.workspace_id WHERE m.account_id = $1 ORDER BY m.created_at, m.id`, accountID)
	return list, err
}
