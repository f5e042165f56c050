package programs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Access answers the program to a member whose role allows the action, and refuses everyone else.
func TestAccess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	owner, ws := workspace(t, d, "brand@example.com")
	p, _ := newProgram(t, d, programs.New{WorkspaceID: ws, Name: "Shop", Domain: "shop.example.com", CommissionType: "percent",
		CommissionRate: "20", CreatedBy: owner})
	stranger, _ := workspace(t, d, "other@example.com")
	analyst, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "kim@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := accounts.Invite(ctx, d.DB, ws, "kim@example.com", accounts.RoleAnalyst, accounts.RoleOwner); err != nil {
		t.Fatal(err)
	}
	if err := accounts.LinkInvitations(ctx, d.DB, analyst, "kim@example.com"); err != nil {
		t.Fatal(err)
	}
	var roleErr *accounts.RoleError
	for _, tc := range []struct {
		name               string
		account, programID int64
		action             string
		ok                 func(error) bool
	}{
		{"the owner writes", owner, p.ID, accounts.ActionProgramWrite, func(err error) bool { return err == nil }},
		{"an analyst reads", analyst, p.ID, accounts.ActionProgramRead, func(err error) bool { return err == nil }},
		{"an analyst writes", analyst, p.ID, accounts.ActionProgramWrite, func(err error) bool { return errors.As(err, &roleErr) }},
		{"another workspace's owner", stranger, p.ID, accounts.ActionProgramRead, func(err error) bool { return errors.Is(err, programs.ErrNotMember) }},
		{"no such program", owner, p.ID + 1000, accounts.ActionProgramRead, func(err error) bool { return errors.Is(err, programs.ErrNotFound) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := programs.Access(ctx, d.DB, tc.account, tc.programID, tc.action)
			if !tc.ok(err) {
				t.Fatalf("Access: %v", err)
			}
			if err == nil && got.ID != p.ID {
				t.Errorf("Access answered program %d, want %d", got.ID, p.ID)
			}
		})
	}
}

// Show adds the masked key ("" without one); Change stores a change and shows the program changed.
func TestShowAndChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, p := shop(t)
	shown, err := programs.Show(ctx, d.DB, p)
	if err != nil || shown.KeyMasked == "" || shown.KeyMasked[:3] != "rt_" || shown.Program.ID != p.ID {
		t.Fatalf("Show: %+v, %v", shown, err)
	}
	name := "Shop 2"
	changed, err := programs.Change(ctx, d.DB, p.ID, programs.Update{Name: &name})
	if err != nil || changed.Name != name || changed.KeyMasked != shown.KeyMasked {
		t.Fatalf("Change: %+v, %v", changed, err)
	}
	if _, err := d.Exec(`UPDATE api_keys SET revoked_at = now() WHERE program_id = $1`, p.ID); err != nil {
		t.Fatal(err)
	}
	if shown, err := programs.Show(ctx, d.DB, p); err != nil || shown.KeyMasked != "" {
		t.Errorf("Show without a key: %+v, %v", shown, err)
	}
}

// AccessLink checks access to the link's program; a link without a program (or none at all) is not found.
func TestAccessLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	owner, ws := workspace(t, d, "brand@example.com")
	p, _ := newProgram(t, d, programs.New{WorkspaceID: ws, Name: "Shop", Domain: "shop.example.com", CommissionType: "percent",
		CommissionRate: "20", CreatedBy: owner})
	partner := addPartner(t, d, p.ID, programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	link, err := programs.CreateLink(ctx, d.DB, p.ID, partner.ID, "pat")
	if err != nil {
		t.Fatal(err)
	}
	stranger, _ := workspace(t, d, "other@example.com")
	var orphan int64
	if err := d.Get(&orphan, `INSERT INTO referral_links (short_link) VALUES ('orphan') RETURNING id`); err != nil {
		t.Fatal(err)
	}
	if got, err := programs.AccessLink(ctx, d.DB, owner, link.ID, accounts.ActionLinksWrite); err != nil || got.ID != link.ID {
		t.Errorf("the owner: %+v, %v", got, err)
	}
	if _, err := programs.AccessLink(ctx, d.DB, stranger, link.ID, accounts.ActionLinksWrite); !errors.Is(err, programs.ErrNotMember) {
		t.Errorf("another workspace's owner: %v, want ErrNotMember", err)
	}
	for _, id := range []int64{orphan, link.ID + 1000} {
		if _, err := programs.AccessLink(ctx, d.DB, owner, id, accounts.ActionLinksWrite); !errors.Is(err, programs.ErrLinkNotFound) {
			t.Errorf("link %d: %v, want ErrLinkNotFound", id, err)
		}
	}
}
