package programs_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// workspace makes an account and its workspace, the owner of the programs a test creates.
func workspace(t *testing.T, d *dbtest.Database, email string) (accountID, workspaceID int64) {
	t.Helper()
	ctx := context.Background()
	accountID, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: email, Name: "Brand"})
	if err != nil {
		t.Fatal(err)
	}
	workspaceID, err = accounts.CreateWorkspace(ctx, d.DB, "Brand's workspace", accountID, email)
	if err != nil {
		t.Fatal(err)
	}
	return accountID, workspaceID
}

func newProgram(t *testing.T, d *dbtest.Database, n programs.New) (programs.Program, string) {
	t.Helper()
	p, key, err := programs.Create(context.Background(), d.DB, n)
	if err != nil {
		t.Fatal(err)
	}
	return p, key
}

// shop is a fresh database with one program, as `reftrack init` makes it (no partner yet).
func shop(t *testing.T) (*dbtest.Database, programs.Program) {
	t.Helper()
	d := dbtest.New(t)
	account, ws := workspace(t, d, "brand@example.com")
	p, _ := newProgram(t, d, programs.New{WorkspaceID: ws, Name: "Shop", Domain: "shop.example.com", CommissionType: "percent",
		CommissionRate: "20", CreatedBy: account})
	return d, p
}

func addPartner(t *testing.T, d *dbtest.Database, programID int64, n programs.NewPartner) programs.Partner {
	t.Helper()
	out, err := programs.AddPartner(context.Background(), d.DB, programID, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreateIssuesTheFirstKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	account, ws := workspace(t, d, "brand@example.com")
	n := programs.New{WorkspaceID: ws, Name: "Acme Pro", Domain: "acme.example.com", CommissionType: "percent",
		CommissionRate: "30", CreatedBy: account}

	p, key := newProgram(t, d, n)
	if !regexp.MustCompile(`^acme-pro-[a-z0-9]{6}$`).MatchString(p.Slug) || p.LeadAuth != programs.LeadAuthServerRequired ||
		p.AllowedOrigins == nil || len(p.AllowedOrigins) != 0 || p.CookieWindowDays != 60 || p.CommissionRate != "30.0000" {
		t.Errorf("defaults: %+v", p)
	}
	k, err := apikeys.Authenticate(ctx, d.DB, key)
	if err != nil || k.ProgramID != p.ID {
		t.Errorf("the first key: %+v, %v; want program %d", k, err, p.ID)
	}

	// What seeding sets: its own slug, lead auth and origins.
	n.Slug, n.LeadAuth, n.AllowedOrigins = "demo", programs.LeadAuthBrowserAllowed, []string{"http://localhost:8080"}
	p, _ = newProgram(t, d, n)
	if p.Slug != "demo" || p.LeadAuth != programs.LeadAuthBrowserAllowed || len(p.AllowedOrigins) != 1 || p.AllowedOrigins[0] != "http://localhost:8080" {
		t.Errorf("chosen settings: %+v", p)
	}

	// A refused program leaves neither a program nor a key behind.
	var programsBefore, keysBefore int
	_ = d.Get(&programsBefore, `SELECT count(*) FROM programs`)
	_ = d.Get(&keysBefore, `SELECT count(*) FROM api_keys`)
	for name, bad := range map[string]programs.New{
		"taken slug":      {WorkspaceID: ws, Name: "Again", Domain: "a.example.com", Slug: "demo", CommissionType: "percent", CommissionRate: "5", CreatedBy: account},
		"commission type": {WorkspaceID: ws, Name: "Tiered", Domain: "a.example.com", CommissionType: "tiered", CommissionRate: "5", CreatedBy: account},
		"unknown creator": {WorkspaceID: ws, Name: "Ghost", Domain: "a.example.com", CommissionType: "percent", CommissionRate: "5", CreatedBy: account + 1000},
	} {
		if _, _, err := programs.Create(ctx, d.DB, bad); err == nil {
			t.Errorf("%s: created", name)
		}
	}
	var programsAfter, keysAfter int
	_ = d.Get(&programsAfter, `SELECT count(*) FROM programs`)
	_ = d.Get(&keysAfter, `SELECT count(*) FROM api_keys`)
	if programsAfter != programsBefore || keysAfter != keysBefore {
		t.Errorf("refused programs left rows: programs %d → %d, keys %d → %d", programsBefore, programsAfter, keysBefore, keysAfter)
	}
}

// The synthetic flag: set for the chain's partner, never lost when its address is added again, and
// gained by a partner the chain reuses.
func TestAddPartnerMarksSyntheticPartners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, p := shop(t)
	add := func(n programs.NewPartner) programs.Partner { return addPartner(t, d, p.ID, n) }

	pat := add(programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	if pat.Synthetic || pat.ProgramID != p.ID || pat.PartnerProgramID == 0 {
		t.Errorf("real partner = %+v", pat)
	}
	if again := add(programs.NewPartner{Name: "Patricia", Email: "PAT@example.com"}); again.ID != pat.ID || again.Name != "Pat" || again.Synthetic {
		t.Errorf("the same address again = %+v, want %+v", again, pat)
	}
	chain := add(programs.NewPartner{Name: "reftrack synthetic partner", Email: "synthetic+1@reftrack.test", Synthetic: true})
	if !chain.Synthetic {
		t.Errorf("synthetic partner = %+v", chain)
	}
	if again := add(programs.NewPartner{Name: "Someone", Email: "synthetic+1@reftrack.test"}); again.ID != chain.ID || !again.Synthetic {
		t.Errorf("the synthetic address added as a real partner = %+v, want it to stay synthetic", again)
	}
	if reused := add(programs.NewPartner{Name: "x", Email: "pat@example.com", Synthetic: true}); reused.ID != pat.ID || !reused.Synthetic {
		t.Errorf("a partner the chain reuses = %+v, want it synthetic", reused)
	}

	list, err := programs.Partners(ctx, d.DB, p.ID)
	if err != nil || len(list) != 2 || !list[0].Synthetic || !list[1].Synthetic {
		t.Errorf("partners = %+v, %v", list, err)
	}
}

// EnsureLink makes the chain's link, and points it back at its partner and switches it on however it was
// left.
func TestEnsureLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, p := shop(t)
	chain := addPartner(t, d, p.ID, programs.NewPartner{Name: "chain", Email: "synthetic+1@reftrack.test", Synthetic: true})
	other := addPartner(t, d, p.ID, programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	link := func() programs.Link {
		t.Helper()
		list, err := programs.Links(ctx, d.DB, p.ID)
		if err != nil || len(list) != 1 {
			t.Fatalf("links = %+v, %v", list, err)
		}
		return list[0]
	}
	if err := programs.EnsureLink(ctx, d.DB, p.ID, chain.ID, "rt-synthetic-1"); err != nil {
		t.Fatal(err)
	}
	l := link()
	if l.ShortLink != "rt-synthetic-1" || !l.Enabled || *l.PartnerID != chain.ID || *l.ProgramID != p.ID {
		t.Errorf("new link = %+v", l)
	}
	if _, err := d.Exec(`UPDATE referral_links SET enabled = false, partner_id = $2 WHERE id = $1`, l.ID, other.ID); err != nil {
		t.Fatal(err)
	}
	if err := programs.EnsureLink(ctx, d.DB, p.ID, chain.ID, "rt-synthetic-1"); err != nil {
		t.Fatal(err)
	}
	if again := link(); again.ID != l.ID || !again.Enabled || *again.PartnerID != chain.ID {
		t.Errorf("refreshed link = %+v", again)
	}
}

// An account's programs with what `reftrack programs` shows: commission and real partners.
func TestOfAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	account, ws := workspace(t, d, "brand@example.com")
	first, _ := newProgram(t, d, programs.New{WorkspaceID: ws, Name: "First", Domain: "a.example.com", CommissionType: "recurring_fixed",
		CommissionRate: "25", CreatedBy: account})
	second, _ := newProgram(t, d, programs.New{WorkspaceID: ws, Name: "Second", Domain: "b.example.com", CommissionType: "percent",
		CommissionRate: "12.5", CreatedBy: account})
	for _, n := range []programs.NewPartner{{Name: "Pat", Email: "pat@example.com"}, {Name: "Kim", Email: "kim@example.com"},
		{Name: "chain", Email: "synthetic+1@reftrack.test", Synthetic: true}} {
		addPartner(t, d, first.ID, n)
	}
	if _, err := d.Exec(`UPDATE partner_programs SET status = 'banned' WHERE partner_id = (SELECT id FROM partners WHERE email = 'kim@example.com')`); err != nil {
		t.Fatal(err)
	}
	other, otherWS := workspace(t, d, "other@example.com")
	newProgram(t, d, programs.New{WorkspaceID: otherWS, Name: "Not mine", Domain: "c.example.com", CommissionType: "percent",
		CommissionRate: "5", CreatedBy: other})

	list, err := programs.OfAccount(ctx, d.DB, account)
	if err != nil || len(list) != 2 {
		t.Fatalf("programs = %+v, %v", list, err)
	}
	got := list
	if got[0].ID != first.ID || got[0].CommissionType != "recurring_fixed" || got[0].CommissionRate != "25.0000" || got[0].Partners != 1 ||
		got[0].WorkspaceID != ws || got[0].Status != "active" {
		t.Errorf("first = %+v (partners: the active real one only)", got[0])
	}
	if got[1].ID != second.ID || got[1].CommissionRate != "12.5000" || got[1].Partners != 0 || got[1].CreatedAt.Before(got[0].CreatedAt) {
		t.Errorf("second = %+v", got[1])
	}
}

// The referral URL takes its scheme and port from an allowed origin on the program's domain (the domain
// holds a host name only): `make run`'s demo shop at http://localhost:8080 keeps its port.
func TestReferralURL(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, c := range []struct {
		domain  *string
		origins []string
		want    string
	}{
		{s("shop.example.com"), nil, "https://shop.example.com/?aff=ada"},
		{s("localhost"), nil, "http://localhost/?aff=ada"},
		{s("localhost"), []string{"http://localhost:18090"}, "http://localhost:18090/?aff=ada"},
		{s("shop.example.com"), []string{"http://shop.example.com:8080", "https://shop.example.com"}, "https://shop.example.com/?aff=ada"},
		{s("shop.example.com"), []string{"https://www.shop.example.com", "https://other.example.com:8443"}, "https://shop.example.com/?aff=ada"},
		{s("Shop.Example.com"), []string{"https://shop.example.com:8443"}, "https://shop.example.com:8443/?aff=ada"},
		{nil, []string{"https://shop.example.com"}, ""},
	} {
		l := programs.Link{ShortLink: "ada", Domain: c.domain, Origins: c.origins}
		if got := l.ReferralURL(); got != c.want {
			t.Errorf("domain %v, origins %v: %q, want %q", c.domain, c.origins, got, c.want)
		}
	}
}
