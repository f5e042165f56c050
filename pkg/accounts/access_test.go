package accounts_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// ChooseWorkspace: the account's first workspace, or the one the request names if it is the account's;
// an account without a workspace is told so before anything about the request.
func TestChooseWorkspace(t *testing.T) {
	t.Parallel()
	owned, invited := accounts.Membership{WorkspaceID: 5, Role: accounts.RoleOwner}, accounts.Membership{WorkspaceID: 9, Role: accounts.RoleAnalyst}
	both := []accounts.Membership{owned, invited}
	unread := errors.New("body is not an object")
	for _, tc := range []struct {
		name  string
		ms    []accounts.Membership
		claim accounts.WorkspaceClaim
		want  accounts.Membership
		err   error
	}{
		{"none named: the first", both, accounts.WorkspaceClaim{}, owned, nil},
		{"the second named", both, accounts.WorkspaceClaim{Named: true, ID: 9}, invited, nil},
		{"another account's named", both, accounts.WorkspaceClaim{Named: true, ID: 7}, accounts.Membership{}, accounts.ErrNotYourWorkspace},
		{"not an id", both, accounts.WorkspaceClaim{Named: true}, accounts.Membership{}, accounts.ErrNotYourWorkspace},
		{"request unread", both, accounts.WorkspaceClaim{Unread: unread}, accounts.Membership{}, unread},
		{"no workspace", nil, accounts.WorkspaceClaim{Named: true, ID: 9}, accounts.Membership{}, accounts.ErrNoMembership},
		{"no workspace, request unread: no workspace first", nil, accounts.WorkspaceClaim{Unread: unread}, accounts.Membership{}, accounts.ErrNoMembership},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := accounts.ChooseWorkspace(tc.ms, tc.claim)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

// WorkspaceFor reads the account's memberships and checks the role in the workspace chosen.
func TestWorkspaceFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	ana, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "ana@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	kim, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "kim@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.WorkspaceFor(ctx, d.DB, kim, accounts.WorkspaceClaim{}, accounts.ActionProgramWrite); !errors.Is(err, accounts.ErrNoMembership) {
		t.Errorf("an account without a workspace: %v, want ErrNoMembership", err)
	}
	anas, err := accounts.CreateWorkspace(ctx, d.DB, "Ana's", ana, "ana@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Invite(ctx, d.DB, anas, "kim@example.com", accounts.RoleAnalyst, accounts.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if err := accounts.LinkInvitations(ctx, d.DB, kim, "kim@example.com"); err != nil {
		t.Fatal(err)
	}
	if m, err := accounts.WorkspaceFor(ctx, d.DB, ana, accounts.WorkspaceClaim{Named: true, ID: anas}, accounts.ActionProgramWrite); err != nil ||
		m != (accounts.Membership{WorkspaceID: anas, Role: accounts.RoleOwner}) {
		t.Errorf("the owner: %+v, %v", m, err)
	}
	var role *accounts.RoleError
	if _, err := accounts.WorkspaceFor(ctx, d.DB, kim, accounts.WorkspaceClaim{}, accounts.ActionProgramWrite); !errors.As(err, &role) ||
		*role != (accounts.RoleError{Role: accounts.RoleAnalyst, Action: accounts.ActionProgramWrite}) {
		t.Errorf("an analyst writing: %v, want a RoleError", err)
	}
	if m, err := accounts.WorkspaceFor(ctx, d.DB, kim, accounts.WorkspaceClaim{}, accounts.ActionProgramRead); err != nil || m.WorkspaceID != anas {
		t.Errorf("an analyst reading: %+v, %v", m, err)
	}
}
