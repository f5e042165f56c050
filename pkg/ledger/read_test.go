package ledger_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
)

// ledger_status, the one effective-status rule, called directly.
func TestStatusFunction(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		stored, approval string
		available        *time.Time
		want             string
	}{
		{"pending", "auto", ptr(now), "approved"},
		{"pending", "auto", ptr(now.Add(time.Microsecond)), "pending"},
		{"pending", "manual", ptr(now.Add(-time.Hour)), "pending"},
		{"reversed", "auto", ptr(now.Add(-time.Hour)), "reversed"},
		{"rejected", "auto", ptr(now.Add(-time.Hour)), "rejected"},
		{"in_payout", "auto", ptr(now.Add(-time.Hour)), "in_payout"},
		{"paid", "manual", ptr(now.Add(-time.Hour)), "paid"},
		{"approved", "manual", ptr(now.Add(time.Hour)), "approved"},
	} {
		var got string
		if err := w.d.Get(&got, `SELECT ledger_status($1, $2, $3, $4)`, tc.stored, tc.available, tc.approval, now); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("ledger_status(%s, %v, %s) = %s, want %s", tc.stored, tc.available, tc.approval, got, tc.want)
		}
	}
}

// The commissions list: newest first, filtered, and paged by a cursor that neither repeats nor skips a
// row when commissions are added between pages.
func TestListCommissions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(30, ledger.ApprovalManual, 0)
	bob := w.partner("bob")
	var ids []int64
	for i := range 7 {
		p := w.brand.PartnerID
		if i%2 == 1 {
			p = bob
		}
		ids = append(ids, w.sale(p, int64(1000+i), "USD", false).Commission.ID)
	}
	if _, err := ledger.Approve(w.ctx, w.d.DB, w.req(), ids[0], true); err != nil {
		t.Fatal(err)
	}
	list := func(f ledger.Filter) ledger.CommissionPage {
		t.Helper()
		p, err := ledger.ListCommissions(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, f, w.clock())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	var seen []int64
	f := ledger.Filter{Limit: 3}
	for page := 0; ; page++ {
		p := list(f)
		for _, c := range p.Commissions {
			seen = append(seen, c.ID)
		}
		if page == 0 {
			w.sale(bob, 999, "USD", false) // newer than every page: never shown by this walk
		}
		if p.NextCursor == "" {
			break
		}
		f.Cursor = p.NextCursor
	}
	want := []int64{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]}
	if !equal(seen, want) {
		t.Errorf("walked %v, want %v", seen, want)
	}
	if got := list(ledger.Filter{Status: ledger.StatusApproved}).Commissions; len(got) != 1 || got[0].ID != ids[0] {
		t.Errorf("approved: %+v", got)
	}
	if got := list(ledger.Filter{PartnerID: bob}).Commissions; len(got) != 4 {
		t.Errorf("bob's: %d, want 4", len(got))
	}
	future := w.clock().Add(time.Hour)
	if got := list(ledger.Filter{CreatedFrom: &future}).Commissions; len(got) != 0 {
		t.Errorf("created from the future: %d", len(got))
	}
	var inv *ledger.InvalidError
	for _, f := range []ledger.Filter{{Status: "done"}, {Limit: 101}, {Limit: -1}, {Cursor: "!!"}, {Cursor: "MTIz"}} {
		if _, err := ledger.ListCommissions(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, f, w.clock()); !errors.As(err, &inv) {
			t.Errorf("filter %+v: %v, want an InvalidError", f, err)
		}
	}
	if _, err := ledger.ListCommissions(w.ctx, w.d.DB, w.accountID, 999999, ledger.Filter{}, w.clock()); !errors.Is(err, ledger.ErrProgramNotFound) {
		t.Errorf("unknown program: %v", err)
	}
}

// Owners, admins and billing members act; analysts read; others neither.
func TestRoles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalManual, 0)
	s := w.sale(w.brand.PartnerID, 5000, "USD", false)
	member := func(role string) ledger.Request {
		t.Helper()
		email := role + "-" + itoa(w.brand.ProgramID) + "@members.test"
		var id int64
		if err := w.d.Get(&id, `INSERT INTO accounts (email, name) VALUES ($1, $2) RETURNING id`, email, role); err != nil {
			t.Fatal(err)
		}
		if role != "" {
			if _, err := w.d.Exec(`INSERT INTO workspace_members (workspace_id, account_id, email, role) VALUES ($1, $2, $3, $4)`,
				w.brand.AdvertiserID, id, email, role); err != nil {
				t.Fatal(err)
			}
		}
		return ledger.Request{AccountID: id, Email: email, Now: w.clock()}
	}
	analyst, billing, stranger := member(accounts.RoleAnalyst), member(accounts.RoleBilling), member("")
	var role *accounts.RoleError
	if _, err := ledger.Approve(w.ctx, w.d.DB, analyst, s.Commission.ID, true); !errors.As(err, &role) {
		t.Errorf("analyst approves: %v", err)
	}
	if _, err := ledger.CreatePayouts(w.ctx, w.d.DB, analyst, w.brand.ProgramID, ""); !errors.As(err, &role) {
		t.Errorf("analyst pays out: %v", err)
	}
	if _, err := ledger.GetCommission(w.ctx, w.d.DB, analyst.AccountID, s.Commission.ID, w.clock()); err != nil {
		t.Errorf("analyst reads: %v", err)
	}
	if _, err := ledger.Balances(w.ctx, w.d.DB, analyst.AccountID, w.brand.ProgramID, w.clock()); err != nil {
		t.Errorf("analyst reads balances: %v", err)
	}
	if _, err := ledger.GetCommission(w.ctx, w.d.DB, stranger.AccountID, s.Commission.ID, w.clock()); !errors.Is(err, programs.ErrNotMember) {
		t.Errorf("a stranger reads: %v", err)
	}
	if c, err := ledger.Approve(w.ctx, w.d.DB, billing, s.Commission.ID, true); err != nil || c.Status != ledger.StatusApproved {
		t.Errorf("billing approves: %+v, %v", c, err)
	}
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, billing, w.brand.ProgramID, ""); err != nil || len(ps) != 1 {
		t.Errorf("billing pays out: %+v, %v", ps, err)
	}
	if _, err := ledger.GetCommission(w.ctx, w.d.DB, w.accountID, 999999, w.clock()); !errors.Is(err, ledger.ErrCommissionNotFound) {
		t.Errorf("unknown commission: %v", err)
	}
	if _, err := ledger.GetPayout(w.ctx, w.d.DB, w.accountID, 999999); !errors.Is(err, ledger.ErrPayoutNotFound) {
		t.Errorf("unknown payout: %v", err)
	}
}

// The exports: RFC 4180 with a header, or PayPal's bulk file without; amounts in major units by the
// currency's exponent; a cell a spreadsheet would read as a formula quoted.
func TestExportCSV(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	eq := w.partner("=cmd")
	w.sale(w.brand.PartnerID, 6250, "USD", false) // 1250 → 12.50
	w.sale(eq, 625000, "VND", false)              // 125000 VND
	if _, err := w.d.Exec(`UPDATE partners SET name = 'Ann, "the" partner' WHERE id = $1`, w.brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 2 {
		t.Fatalf("payouts: %+v, %v", ps, err)
	}
	at := ps[0].CreatedAt.UTC().Format(time.RFC3339)
	got, err := ledger.ExportCSV(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var program programs.Program
	if program, err = programs.Get(w.ctx, w.d.DB, w.brand.ProgramID); err != nil {
		t.Fatal(err)
	}
	want := "payout_id,partner_id,partner_name,partner_email,payout_email,amount,currency,commission_count,created_at\r\n" +
		itoa(ps[0].ID) + "," + itoa(w.brand.PartnerID) + `,"Ann, ""the"" partner",` + ps[0].PartnerEmail + "," + ps[0].PartnerEmail +
		",12.50,USD,1," + at + "\r\n" +
		itoa(ps[1].ID) + "," + itoa(eq) + ",'=cmd,'=cmd@partners.test,'=cmd@partners.test,125000,VND,1," + at + "\r\n"
	if string(got) != want {
		t.Errorf("CSV:\n%q\nwant\n%q", got, want)
	}
	got, err = ledger.ExportCSV(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, ledger.PayoutProcessing, ledger.FormatPayPal, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = ps[0].PartnerEmail + ",12.50,USD,payout_" + itoa(ps[0].ID) + ",Commission payout " + itoa(ps[0].ID) + " from " + program.Name + "\r\n" +
		"=cmd@partners.test,125000,VND,payout_" + itoa(ps[1].ID) + ",Commission payout " + itoa(ps[1].ID) + " from " + program.Name + "\r\n"
	if strings.ReplaceAll(string(got), "'=cmd@", "=cmd@") != want || !strings.Contains(string(got), "'=cmd@") {
		t.Errorf("PayPal:\n%q\nwant (with the email quoted)\n%q", got, want)
	}
	if got, _ := ledger.ExportCSV(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, ledger.PayoutPaid, "", nil); strings.Count(string(got), "\r\n") != 1 {
		t.Errorf("paid payouts: %q, want the header alone", got)
	}
	var inv *ledger.InvalidError
	if _, err := ledger.ExportCSV(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, "done", "", nil); !errors.As(err, &inv) {
		t.Errorf("bad status: %v", err)
	}
	if _, err := ledger.ExportCSV(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, "", "xlsx", nil); !errors.As(err, &inv) {
		t.Errorf("bad format: %v", err)
	}
}

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cents    int64
		currency string
		want     string
	}{{1250, "USD", "12.50"}, {5, "EUR", "0.05"}, {100, "USD", "1.00"}, {125000, "VND", "125000"}, {-1250, "USD", "-12.50"}} {
		if got := ledger.FormatAmount(tc.cents, tc.currency); got != tc.want {
			t.Errorf("FormatAmount(%d, %s) = %s, want %s", tc.cents, tc.currency, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
