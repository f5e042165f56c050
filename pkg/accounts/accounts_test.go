package accounts_test

import (
	"context"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestCreateAccountsAndWorkspaces(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	create := func(n accounts.NewAccount) int64 {
		t.Helper()
		id, err := accounts.Create(ctx, d.DB, n)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	seeded := create(accounts.NewAccount{Email: "seed@example.com", Name: "Seed account"})
	signedIn := create(accounts.NewAccount{Email: "lin@example.com", Name: "Lin", Issuer: "https://issuer.example", Subject: "sub-1"})
	var ids []struct {
		Issuer  *string `db:"oidc_issuer"`
		Subject *string `db:"oidc_subject"`
	}
	if err := d.Select(&ids, `SELECT oidc_issuer, oidc_subject FROM accounts WHERE id IN ($1, $2) ORDER BY id`, seeded, signedIn); err != nil {
		t.Fatal(err)
	}
	if ids[0].Issuer != nil || ids[0].Subject != nil || *ids[1].Issuer != "https://issuer.example" || *ids[1].Subject != "sub-1" {
		t.Errorf("identities = %+v", ids)
	}
	if _, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "LIN@example.com"}); err == nil {
		t.Error("a second account with the same email was created")
	}
	if err := accounts.RecordSubject(ctx, d.DB, seeded, "https://issuer.example", "sub-2"); err != nil {
		t.Fatal(err)
	}
	var subject string
	if err := d.Get(&subject, `SELECT oidc_subject FROM accounts WHERE id = $1`, seeded); err != nil || subject != "sub-2" {
		t.Errorf("recorded subject = %q, %v", subject, err)
	}

	ws, err := accounts.CreateWorkspace(ctx, d.DB, "Seed workspace", seeded, "seed@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if role, err := accounts.Role(ctx, d.DB, seeded, ws); err != nil || role != accounts.RoleOwner {
		t.Errorf("creator's role = %q, %v", role, err)
	}
}

// Memberships lists the workspaces an account owns first; invitations count once LinkInvitations ran.
func TestMemberships(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	account := func(email string) int64 {
		t.Helper()
		id, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: email})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	workspace := func(owner int64, email string) int64 {
		t.Helper()
		id, err := accounts.CreateWorkspace(ctx, d.DB, email+"'s workspace", owner, email)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	ana, kim := account("ana@example.com"), account("kim@example.com")
	anasWS := workspace(ana, "ana@example.com")
	// Kim is invited to Ana's workspace before she has one of her own.
	if _, err := accounts.Invite(ctx, d.DB, anasWS, "KIM@example.com", accounts.RoleAnalyst, accounts.RoleOwner); err != nil {
		t.Fatal(err)
	}
	kimsWS := workspace(kim, "kim@example.com")
	memberships := func(id int64) []accounts.Membership {
		t.Helper()
		ms, err := accounts.Memberships(ctx, d.DB, id)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if got := memberships(kim); len(got) != 1 || got[0] != (accounts.Membership{WorkspaceID: kimsWS, Role: accounts.RoleOwner}) {
		t.Errorf("before the invitation is linked: %+v", got)
	}
	if err := accounts.LinkInvitations(ctx, d.DB, kim, "kim@example.com"); err != nil {
		t.Fatal(err)
	}
	want := []accounts.Membership{{WorkspaceID: kimsWS, Role: accounts.RoleOwner}, {WorkspaceID: anasWS, Role: accounts.RoleAnalyst}}
	if got := memberships(kim); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("memberships = %+v, want %+v (owned first)", got, want)
	}
	if got := memberships(account("nobody@example.com")); got == nil || len(got) != 0 {
		t.Errorf("an account without workspaces: %#v, want an empty list", got)
	}
}
