package leads_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The calls this package makes take exactly the inputs its functions declare.
func TestCallsMatchTheirFunctions(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	for _, err := range []error{
		pgcall.Check(ctx, d.DB, leads.StateCall),
		pgcall.Check(ctx, d.DB, leads.WriteCall),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fixture is a database with programs, clicks and customers for the lead's functions.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	d      *dbtest.Database
	clicks *clicks.Recorder
	n      int // clicks made, for distinct visitors
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), d: dbtest.New(t)}
	f.clicks = clicks.NewRecorder(f.d.DB, quiet(), 1, 8, nil)
	t.Cleanup(f.clicks.Close)
	return f
}

func (f *fixture) seed(o seed.Options) seed.Result {
	f.t.Helper()
	r, err := seed.Run(f.ctx, f.d.DB, o)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// click records a click on the program's link.
func (f *fixture) click(r seed.Result) clicks.Result {
	f.t.Helper()
	f.n++
	c, err := f.clicks.Record(f.ctx, clicks.Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua " + strings.Repeat("x", f.n)})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// customer stores a customer of the program at status, with key (nil: none) and click (nil: none).
func (f *fixture) customer(program int64, key *string, click *clicks.Result, status string, email *string) int64 {
	f.t.Helper()
	var clickRef, partner *int64
	if click != nil {
		clickRef, partner = &click.ID, &click.PartnerID
	}
	var id int64
	if err := f.d.Get(&id, `INSERT INTO customers (program_id, customer_key, click_ref, partner_id, status, email)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, program, key, clickRef, partner, status, email); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// version is the customer's row version as leads_state reads it.
func (f *fixture) version(customer int64) string {
	f.t.Helper()
	var v string
	if err := f.d.Get(&v, `SELECT xmin::text FROM customers WHERE id = $1`, customer); err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) state(in ...leads.StateInput) []leads.State {
	f.t.Helper()
	var out []leads.State
	if err := leads.StateCall.Select(f.ctx, f.d.DB, &out, in, pgcall.None{}); err != nil {
		f.t.Fatal(err)
	}
	if len(out) != len(in) {
		f.t.Fatalf("%d rows for %d leads", len(out), len(in))
	}
	return out
}

func (f *fixture) write(in ...leads.WriteInput) []leads.Written {
	f.t.Helper()
	var out []leads.Written
	if err := leads.WriteCall.Select(f.ctx, f.d.DB, &out, in, pgcall.None{}); err != nil {
		f.t.Fatal(err)
	}
	if len(out) != len(in) {
		f.t.Fatalf("%d rows for %d leads", len(out), len(in))
	}
	for i, w := range out {
		if w.Ord != int64(i+1) {
			f.t.Fatalf("row %d has ord %d", i, w.Ord)
		}
	}
	return out
}

// leadRow is a stored lead.
type leadRow struct {
	ID          int64   `db:"id"`
	Customer    *int64  `db:"customer_id"`
	ClickRef    *int64  `db:"click_ref"`
	ClickID     *string `db:"click_id"`
	CustomerKey *string `db:"customer_key"`
	Email       *string `db:"email"`
	Status      string  `db:"status"`
	Source      string  `db:"source"`
	Settled     bool    `db:"settled"`
	Test        bool    `db:"is_test"`
}

// leadsOf are the program's stored leads, oldest first.
func (f *fixture) leadsOf(program int64) []leadRow {
	f.t.Helper()
	var out []leadRow
	if err := f.d.Select(&out, `SELECT id, customer_id, click_ref, click_id, customer_key, email, status, source,
		settled_at IS NOT NULL AS settled, is_test FROM leads WHERE program_id = $1 ORDER BY id`, program); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// customerRow is a stored customer.
type customerRow struct {
	ID             int64   `db:"id"`
	Key            *string `db:"customer_key"`
	ClickRef       *int64  `db:"click_ref"`
	PartnerID      *int64  `db:"partner_id"`
	PartnerProgram bool    `db:"partner_program"`
	Status         string  `db:"status"`
	Email          *string `db:"email"`
	SignedUp       bool    `db:"signed_up"`
	Test           bool    `db:"is_test"`
}

func (f *fixture) customerRow(id int64) customerRow {
	f.t.Helper()
	var c customerRow
	if err := f.d.Get(&c, `SELECT id, customer_key, click_ref, partner_id, partner_program_id IS NOT NULL AS partner_program,
		status, email, signed_up_at IS NOT NULL AS signed_up, is_test FROM customers WHERE id = $1`, id); err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fixture) count(query string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.d.Get(&n, query, args...); err != nil {
		f.t.Fatal(err)
	}
	return n
}

// leads_state, called directly: the click by click_id, the program (the click's when the click
// decides, else the one given), the program's customer by key, else the first made from the click, its
// row version, and the owner's suspension. NULL is a value not given.
func TestStateFunction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	brand := f.seed(seed.Options{Origins: []string{"https://shop.example.com"}})
	other := f.seed(seed.Options{LeadAuth: "browser_allowed"})
	suspended := f.seed(seed.Options{})

	clk := f.click(brand)         // the brand's click, with a customer made from it
	bare := f.click(brand)        // the brand's click without a customer
	keyClk := f.click(brand)      // the brand's click of the keyed customer
	otherClk := f.click(other)    // the other program's click
	suspClk := f.click(suspended) // clicked before its owner was suspended
	if err := accounts.Suspend(f.ctx, f.d.DB, suspended.AccountEmail); err != nil {
		t.Fatal(err)
	}
	fromClick := f.customer(brand.ProgramID, nil, &clk, "visitor", nil)
	f.customer(brand.ProgramID, nil, &clk, "visitor", nil) // made later from the same click: not the first
	keyed := f.customer(brand.ProgramID, ptr("k1"), &keyClk, "lead", nil)
	otherKeyed := f.customer(other.ProgramID, ptr("k1"), nil, "visitor", nil) // the same key in another program

	// want is what a case expects of a state row; nil is absent.
	type want struct {
		ClickRef       *int64
		ClickProgram   *int64
		Program        *int64
		LeadAuth       *string
		OwnerSuspended bool
		Customer       *int64
		CustomerKey    *string
		CustomerClick  *int64
		CustomerClkID  *string
		Status         *string
	}
	cases := []struct {
		name string
		in   leads.StateInput
		want want
	}{
		{"click decides: its program and the first customer made from it",
			leads.StateInput{ClickID: &clk.ClickID, ClickDecides: true},
			want{ClickRef: &clk.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required"),
				Customer: &fromClick, CustomerClick: &clk.ID, CustomerClkID: &clk.ClickID, Status: ptr("visitor")}},
		{"click decides over the program given",
			leads.StateInput{ClickID: &clk.ClickID, ProgramID: &other.ProgramID, ClickDecides: true},
			want{ClickRef: &clk.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required"),
				Customer: &fromClick, CustomerClick: &clk.ID, CustomerClkID: &clk.ClickID, Status: ptr("visitor")}},
		{"server mode: the program given, not the click's, and no customer of it from the click",
			leads.StateInput{ClickID: &clk.ClickID, ProgramID: &other.ProgramID},
			want{ClickRef: &clk.ID, ClickProgram: &brand.ProgramID, Program: &other.ProgramID, LeadAuth: ptr("browser_allowed")}},
		{"unknown click: the program given",
			leads.StateInput{ClickID: ptr("2601nosuchclickid000000000"), ProgramID: &other.ProgramID, ClickDecides: true},
			want{Program: &other.ProgramID, LeadAuth: ptr("browser_allowed")}},
		{"a click without a customer",
			leads.StateInput{ClickID: &bare.ClickID, ClickDecides: true},
			want{ClickRef: &bare.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required")}},
		{"by key, in the program given",
			leads.StateInput{ProgramID: &brand.ProgramID, CustomerKey: ptr("k1")},
			want{Program: &brand.ProgramID, LeadAuth: ptr("server_required"), Customer: &keyed, CustomerKey: ptr("k1"),
				CustomerClick: &keyClk.ID, CustomerClkID: &keyClk.ClickID, Status: ptr("lead")}},
		{"by key, another program's customer of that key",
			leads.StateInput{ProgramID: &other.ProgramID, CustomerKey: ptr("k1")},
			want{Program: &other.ProgramID, LeadAuth: ptr("browser_allowed"), Customer: &otherKeyed, CustomerKey: ptr("k1"), Status: ptr("visitor")}},
		{"the key wins over the click's customer",
			leads.StateInput{ClickID: &clk.ClickID, CustomerKey: ptr("k1"), ClickDecides: true},
			want{ClickRef: &clk.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required"),
				Customer: &keyed, CustomerKey: ptr("k1"), CustomerClick: &keyClk.ID, CustomerClkID: &keyClk.ClickID, Status: ptr("lead")}},
		{"a keyed customer, by its click",
			leads.StateInput{ClickID: &keyClk.ClickID, ClickDecides: true},
			want{ClickRef: &keyClk.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required"),
				Customer: &keyed, CustomerKey: ptr("k1"), CustomerClick: &keyClk.ID, CustomerClkID: &keyClk.ClickID, Status: ptr("lead")}},
		{"an unknown key",
			leads.StateInput{ProgramID: &brand.ProgramID, CustomerKey: ptr("nosuch")},
			want{Program: &brand.ProgramID, LeadAuth: ptr("server_required")}},
		{"an empty key is a key, not none: no customer, not the click's",
			leads.StateInput{ClickID: &clk.ClickID, CustomerKey: ptr(""), ClickDecides: true},
			want{ClickRef: &clk.ID, ClickProgram: &brand.ProgramID, Program: &brand.ProgramID, LeadAuth: ptr("server_required")}},
		{"a key without a program",
			leads.StateInput{CustomerKey: ptr("k1")},
			want{}},
		{"nothing given",
			leads.StateInput{},
			want{}},
		{"another program's click decides",
			leads.StateInput{ClickID: &otherClk.ClickID, ProgramID: &brand.ProgramID, ClickDecides: true},
			want{ClickRef: &otherClk.ID, ClickProgram: &other.ProgramID, Program: &other.ProgramID, LeadAuth: ptr("browser_allowed")}},
		{"a suspended owner's program, by its click",
			leads.StateInput{ClickID: &suspClk.ClickID, ClickDecides: true},
			want{ClickRef: &suspClk.ID, ClickProgram: &suspended.ProgramID, Program: &suspended.ProgramID, LeadAuth: ptr("server_required"),
				OwnerSuspended: true}},
		{"a suspended owner's program, given",
			leads.StateInput{ProgramID: &suspended.ProgramID, CustomerKey: ptr("k1")},
			want{Program: &suspended.ProgramID, LeadAuth: ptr("server_required"), OwnerSuspended: true}},
	}
	in := make([]leads.StateInput, len(cases))
	for i, c := range cases {
		in[i] = c.in
	}
	rows := f.state(in...) // one call: every case in one batch, answered in order
	for i, c := range cases {
		r := rows[i]
		if r.Ord != int64(i+1) {
			t.Fatalf("%s: ord %d, want %d", c.name, r.Ord, i+1)
		}
		got := want{ClickRef: r.ClickRef, ClickProgram: r.ClickProgramID, Program: r.ProgramID, LeadAuth: r.LeadAuth,
			OwnerSuspended: r.OwnerSuspended, Customer: r.Customer, CustomerKey: r.CustomerKey, CustomerClick: r.CustomerClick,
			CustomerClkID: r.CustomerClkID, Status: r.Status}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		if (r.ClickRef != nil) != (r.ClickID != nil && r.ClickPartnerID != nil && r.ClickTest != nil) {
			t.Errorf("%s: click facts partly absent: %+v", c.name, r)
		}
		if r.Customer != nil && (r.Version == nil || *r.Version != f.version(*r.Customer)) {
			t.Errorf("%s: customer version %v, want its row's xmin %s", c.name, r.Version, f.version(*r.Customer))
		}
	}
	if got := rows[0].AllowedOrigins; len(got) != 1 || got[0] != "https://shop.example.com" {
		t.Errorf("allowed origins = %v", got)
	}
}

// leads_write, called directly: a provisional lead on its click (once), a settled lead making its
// customer from the click (through attribution_create_lead) and taking over the click's provisional
// lead, a settled lead of a stored customer (attribution_mark_lead) only at the version read, the
// customer's email kept unless one is given, NULL stored for what was not given, and a key bound
// meanwhile writing nothing.
func TestWriteFunction(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	brand := f.seed(seed.Options{})
	program := brand.ProgramID

	// Provisional, on a click: stored once; a repeat on the click stores nothing and is still written.
	first := f.click(brand)
	provisional := leads.WriteInput{Kind: leads.KindProvisional, ProgramID: program, ClickRef: &first.ID, ClickID: &first.ClickID,
		Email: ptr("browser@example.com"), Source: leads.SourceBrowser, Test: true}
	for range 2 {
		if w := f.write(provisional); !w[0].Written || w[0].LeadID != nil {
			t.Fatalf("provisional lead: %+v, want written without an id", w[0])
		}
	}
	stored := f.leadsOf(program)
	if diff := cmp.Diff([]leadRow{{ID: stored[0].ID, ClickRef: &first.ID, ClickID: &first.ClickID, Email: ptr("browser@example.com"),
		Status: "provisional", Source: leads.SourceBrowser, Test: true}}, stored); diff != "" {
		t.Fatalf("after a provisional lead and its repeat (-want +got):\n%s", diff)
	}
	provisionalID := stored[0].ID

	// Settled on the same click, its customer made now with the key: the provisional lead becomes the
	// settled one (its email kept, none given), the customer is a lead bound to the click's partner.
	// Decided on a read that saw no provisional lead (one was made meanwhile): nothing written, the caller
	// decides again.
	settleNew := leads.WriteInput{Kind: leads.KindSettle, ProgramID: program, ClickRef: &first.ID, ClickID: &first.ClickID,
		PartnerID: &first.PartnerID, CustomerKey: ptr("new-1"), Source: leads.SourceServer, CountsAs: ptr("lead")}
	if w := f.write(settleNew)[0]; w.Written || w.LeadID != nil {
		t.Fatalf("settle decided without the click's provisional lead: %+v, want nothing written", w)
	}
	if n := f.count(`SELECT count(*) FROM customers WHERE program_id = $1`, program); n != 0 {
		t.Fatalf("the refused settle made %d customers", n)
	}
	settleNew.Provisional = &provisionalID
	w := f.write(settleNew)[0]
	if !w.Written || w.LeadID == nil || *w.LeadID != provisionalID {
		t.Fatalf("settle with a new customer: %+v, want written as the provisional lead %d", w, provisionalID)
	}
	var made int64
	if err := f.d.Get(&made, `SELECT id FROM customers WHERE program_id = $1 AND customer_key = 'new-1'`, program); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(customerRow{ID: made, Key: ptr("new-1"), ClickRef: &first.ID, PartnerID: &first.PartnerID, PartnerProgram: true,
		Status: "lead", SignedUp: true}, f.customerRow(made)); diff != "" {
		t.Errorf("customer made by the lead (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]leadRow{{ID: provisionalID, Customer: &made, ClickRef: &first.ID, ClickID: &first.ClickID, CustomerKey: ptr("new-1"),
		Email: ptr("browser@example.com"), Status: "settled", Source: leads.SourceServer, Settled: true, Test: true}}, f.leadsOf(program)); diff != "" {
		t.Errorf("the provisional lead settled (-want +got):\n%s", diff)
	}
	if n := f.count(`SELECT count(*) FROM clicks WHERE id = $1 AND converted`, first.ID); n != 1 {
		t.Errorf("the lead's click is not marked converted")
	}

	// The same key on another click: bound meanwhile, so nothing is written.
	second := f.click(brand)
	taken := settleNew
	taken.ClickRef, taken.ClickID, taken.PartnerID = &second.ID, &second.ClickID, &second.PartnerID
	if w := f.write(taken)[0]; w.Written || w.LeadID != nil {
		t.Errorf("settle on a bound key: %+v, want not written", w)
	}
	if n := f.count(`SELECT count(*) FROM leads WHERE program_id = $1`, program); n != 1 {
		t.Errorf("%d leads after a settle on a bound key, want 1", n)
	}

	// Without a key: the customer made now has none (NULL), and the lead a new row with the email given.
	noKey := leads.WriteInput{Kind: leads.KindSettle, ProgramID: program, ClickRef: &second.ID, ClickID: &second.ClickID,
		PartnerID: &second.PartnerID, Email: ptr("b@example.com"), Source: leads.SourceWebhook}
	w = f.write(noKey)[0]
	if !w.Written || w.LeadID == nil {
		t.Fatalf("settle without a key: %+v", w)
	}
	var keyless int64
	if err := f.d.Get(&keyless, `SELECT customer_id FROM leads WHERE id = $1`, *w.LeadID); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(customerRow{ID: keyless, ClickRef: &second.ID, PartnerID: &second.PartnerID, PartnerProgram: true,
		Status: "lead", Email: ptr("b@example.com"), SignedUp: true}, f.customerRow(keyless)); diff != "" {
		t.Errorf("customer made without a key (-want +got):\n%s", diff)
	}
	if got := f.leadsOf(program)[1]; got.CustomerKey != nil || got.Email == nil || *got.Email != "b@example.com" || got.Status != "settled" {
		t.Errorf("lead without a key: %+v", got)
	}

	// Stored visitors: settled only at the version read; the email kept unless one is given.
	third := f.click(brand)
	keep := f.customer(program, ptr("v-keep"), &third, "visitor", ptr("old@example.com"))
	replace := f.customer(program, ptr("v-replace"), nil, "visitor", ptr("old@example.com"))
	stale := f.customer(program, ptr("v-stale"), nil, "visitor", nil)
	staleVersion := f.version(stale)
	if _, err := f.d.Exec(`UPDATE customers SET updated_at = now() WHERE id = $1`, stale); err != nil {
		t.Fatal(err)
	}
	ws := f.write(
		leads.WriteInput{Kind: leads.KindSettle, Customer: &keep, Version: ptr(f.version(keep)), ProgramID: program,
			ClickRef: &third.ID, ClickID: &third.ClickID, CustomerKey: ptr("v-keep"), Source: leads.SourceServer},
		leads.WriteInput{Kind: leads.KindSettle, Customer: &replace, Version: ptr(f.version(replace)), ProgramID: program,
			CustomerKey: ptr("v-replace"), Email: ptr("new@example.com"), Source: leads.SourceServer, Test: true},
		leads.WriteInput{Kind: leads.KindSettle, Customer: &stale, Version: &staleVersion, ProgramID: program,
			CustomerKey: ptr("v-stale"), Source: leads.SourceServer},
	)
	if !ws[0].Written || ws[0].LeadID == nil || !ws[1].Written || ws[1].LeadID == nil {
		t.Fatalf("settles at the version read: %+v", ws)
	}
	if ws[2].Written || ws[2].LeadID != nil {
		t.Errorf("settle at a stale version: %+v, want not written", ws[2])
	}
	if c := f.customerRow(keep); c.Status != "lead" || !c.SignedUp || c.Email == nil || *c.Email != "old@example.com" {
		t.Errorf("customer settled without an email: %+v, want a lead keeping old@example.com", c)
	}
	if c := f.customerRow(replace); c.Status != "lead" || c.Email == nil || *c.Email != "new@example.com" {
		t.Errorf("customer settled with an email: %+v, want a lead with new@example.com", c)
	}
	if c := f.customerRow(stale); c.Status != "visitor" || c.SignedUp {
		t.Errorf("customer of a stale settle: %+v, want unchanged", c)
	}
	var got []leadRow
	for _, id := range []int64{*ws[0].LeadID, *ws[1].LeadID} {
		for _, l := range f.leadsOf(program) {
			if l.ID == id {
				got = append(got, l)
			}
		}
	}
	if diff := cmp.Diff([]leadRow{
		{ID: *ws[0].LeadID, Customer: &keep, ClickRef: &third.ID, ClickID: &third.ClickID, CustomerKey: ptr("v-keep"),
			Status: "settled", Source: leads.SourceServer, Settled: true},
		{ID: *ws[1].LeadID, Customer: &replace, CustomerKey: ptr("v-replace"), Email: ptr("new@example.com"),
			Status: "settled", Source: leads.SourceServer, Settled: true, Test: true},
	}, got); diff != "" {
		t.Errorf("leads of stored customers (-want +got):\n%s", diff)
	}
	if n := f.count(`SELECT count(*) FROM leads WHERE customer_id = $1`, stale); n != 0 {
		t.Errorf("%d leads of the stale settle, want 0", n)
	}

	// A kind it does not know is an error, not a settle.
	var out []leads.Written
	err := leads.WriteCall.Select(f.ctx, f.d.DB, &out, []leads.WriteInput{{Kind: "settled", ProgramID: program, Source: leads.SourceServer}}, pgcall.None{})
	if err == nil || !strings.Contains(err.Error(), "want provisional or settle") {
		t.Errorf("an unknown kind: %v, want refused", err)
	}
}

// The customer functions the lead's write calls (pkg/attribution/sql), called directly:
// attribution_create_lead makes a lead customer from a click, binding the key when given and NULL
// when not, and answers NULL when the key is bound; attribution_mark_lead moves a customer to lead,
// keeping its email unless one is given.
func TestAttributionLeadFunctions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	brand := f.seed(seed.Options{})
	c := f.click(brand)
	create := func(key, email *string) *int64 {
		t.Helper()
		var id *int64
		if err := f.d.Get(&id, `SELECT attribution_create_lead($1, $2, $3, $4, $5, false)`,
			brand.ProgramID, key, c.ID, c.PartnerID, email); err != nil {
			t.Fatal(err)
		}
		return id
	}
	for _, tc := range []struct {
		name       string
		key, email *string
		made       bool
	}{
		{"no key, no email", nil, nil, true},
		{"a key and an email", ptr("a"), ptr("a@example.com"), true},
		{"the key again", ptr("a"), nil, false},
		{"no key again (keys bind, NULL does not)", nil, ptr("b@example.com"), true},
	} {
		id := create(tc.key, tc.email)
		if (id != nil) != tc.made {
			t.Errorf("%s: made %v, want %v", tc.name, id, tc.made)
			continue
		}
		if id == nil {
			continue
		}
		want := customerRow{ID: *id, Key: tc.key, ClickRef: &c.ID, PartnerID: &c.PartnerID, PartnerProgram: true, Status: "lead",
			Email: tc.email, SignedUp: true}
		if diff := cmp.Diff(want, f.customerRow(*id)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}

	visitor := f.customer(brand.ProgramID, ptr("v"), nil, "visitor", ptr("old@example.com"))
	for _, tc := range []struct {
		name  string
		email *string
		want  string
	}{
		{"no email: kept", nil, "old@example.com"},
		{"an email: replaced", ptr("new@example.com"), "new@example.com"},
		{"no email again: kept", nil, "new@example.com"},
	} {
		if _, err := f.d.Exec(`SELECT attribution_mark_lead($1, $2)`, visitor, tc.email); err != nil {
			t.Fatal(err)
		}
		if got := f.customerRow(visitor); got.Status != "lead" || !got.SignedUp || got.Email == nil || *got.Email != tc.want {
			t.Errorf("%s: %+v, want a lead with email %s", tc.name, got, tc.want)
		}
	}
}
