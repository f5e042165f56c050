package accounts

import (
	"context"
	"errors"

	"github.com/jmoiron/sqlx"
)

// Refusals of WorkspaceFor.
var (
	// ErrNoMembership means the account is a member of no workspace.
	ErrNoMembership = errors.New("account is a member of no workspace")
	// ErrNotYourWorkspace means the request names a workspace the account is not a member of.
	ErrNotYourWorkspace = errors.New("workspace named is not one of the account's")
)

// WorkspaceClaim is which workspace a request names (the CLI's advertiser_id), if it names one.
type WorkspaceClaim struct {
	// Named reports whether the request names a workspace.
	Named bool
	// ID is the workspace named; 0, which is no workspace's, when what was sent is not an id.
	ID int64
	// Unread is why the request could not be read at all. It is answered once the account is known to
	// have a workspace: an account without one is told so first, whatever it sent.
	Unread error
}

// ChooseWorkspace is the membership a request acts in, among the account's memberships (owned
// workspaces first, as Memberships lists them): the workspace the request names, which must be one of
// them, else the first.
func ChooseWorkspace(ms []Membership, c WorkspaceClaim) (Membership, error) {
	switch {
	case len(ms) == 0:
		return Membership{}, ErrNoMembership
	case c.Unread != nil:
		return Membership{}, c.Unread
	case !c.Named:
		return ms[0], nil
	}
	for _, m := range ms {
		if c.ID != 0 && m.WorkspaceID == c.ID {
			return m, nil
		}
	}
	return Membership{}, ErrNotYourWorkspace
}

// WorkspaceFor is the membership in which the account does action: the workspace ChooseWorkspace picks
// among the account's, once its role there allows action (else a *RoleError).
func WorkspaceFor(ctx context.Context, db sqlx.QueryerContext, accountID int64, c WorkspaceClaim, action string) (Membership, error) {
	ms, err := Memberships(ctx, db, accountID)
	if err != nil {
		return Membership{}, err
	}
	m, err := ChooseWorkspace(ms, c)
	if err != nil {
		return Membership{}, err
	}
	if err := Authorize(m.Role, action); err != nil {
		return Membership{}, err
	}
	return m, nil
}
