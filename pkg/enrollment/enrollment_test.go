package enrollment_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// brand is a seeded program paying 20 % of every sale (approving commissions by hand, no hold) and its owner acting at a fixed time.
type brand struct {
	t   *testing.T
	ctx context.Context
	d   *dbtest.Database
	r   seed.Result
	req enrollment.Request
	log *slog.Logger
}

func newBrand(t *testing.T) *brand {
	t.Helper()
	b := &brand{t: t, ctx: context.Background(), d: dbtest.New(t), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var err error
	if b.r, err = seed.Run(b.ctx, b.d.DB, seed.Options{CommissionType: "recurring_percent", CommissionRate: "20"}); err != nil {
		t.Fatal(err)
	}
	b.req = enrollment.Request{Email: b.r.AccountEmail, Now: time.Now().UTC().Truncate(time.Second)}
	if err := b.d.Get(&b.req.AccountID, `SELECT id FROM accounts WHERE email = $1`, b.r.AccountEmail); err != nil {
		t.Fatal(err)
	}
	if _, err := b.d.Exec(`UPDATE programs SET hold_days = 0, commission_approval = 'manual' WHERE id = $1`, b.r.ProgramID); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *brand) now() time.Time { return b.req.Now }

// customer adds a partner with a link and a customer of theirs (a click, then a first sale naming it),
// and returns the partner and the customer's key.
func (b *brand) customer(name string) (partnerID int64, key string) {
	b.t.Helper()
	p, err := programs.AddPartner(b.ctx, b.d.DB, b.r.ProgramID, programs.NewPartner{Name: name, Email: name + "@partners.test"})
	if err != nil {
		b.t.Fatal(err)
	}
	l, err := programs.CreateLink(b.ctx, b.d.DB, b.r.ProgramID, p.ID, "")
	if err != nil {
		b.t.Fatal(err)
	}
	rec := clicks.NewRecorder(b.d.DB, b.log, 1, 8, nil)
	defer rec.Close()
	c, err := rec.Record(b.ctx, clicks.Input{AffiliateURL: l.ReferralURL(), IP: "10.1.2.3", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0"})
	if err != nil {
		b.t.Fatal(err)
	}
	key = "customer-of-" + name
	if _, err := b.sale(key, name+"-first", c.ClickID); err != nil {
		b.t.Fatal(err)
	}
	return p.ID, key
}

// sale records a sale of 100.00 USD by the customer.
func (b *brand) sale(key, txn, clickID string) (sales.Result, error) {
	return sales.Record(b.ctx, b.d.DB, b.log, b.now, sales.Input{ProgramID: b.r.ProgramID, TransactionID: txn, AmountCents: 10000,
		Currency: "USD", CustomerKey: key, ClickID: clickID, OccurredAt: b.now(), Source: sales.SourceAPI})
}

// statuses are the partner's commissions' statuses and reasons, by id.
func (b *brand) statuses(partnerID int64) map[int64]string {
	b.t.Helper()
	var rows []struct {
		ID     int64   `db:"id"`
		Status string  `db:"status"`
		Reason *string `db:"rejected_reason"`
	}
	if err := b.d.Select(&rows, `SELECT id, status, rejected_reason FROM commissions WHERE partner_id = $1`, partnerID); err != nil {
		b.t.Fatal(err)
	}
	out := map[int64]string{}
	for _, r := range rows {
		out[r.ID] = r.Status
		if r.Reason != nil {
			out[r.ID] += " (" + *r.Reason + ")"
		}
	}
	return out
}

// rejections counts the audit log's rejections of the partner's commissions, by commission.
func (b *brand) rejections(partnerID int64) map[int64]int {
	b.t.Helper()
	var rows []struct {
		ID int64 `db:"id"`
		N  int   `db:"n"`
	}
	if err := b.d.Select(&rows, `SELECT c.id, count(a.id) AS n FROM commissions c
		LEFT JOIN audit_log a ON a.target = 'commission:' || c.id AND a.action = 'commission.reject'
		WHERE c.partner_id = $1 GROUP BY c.id`, partnerID); err != nil {
		b.t.Fatal(err)
	}
	out := map[int64]int{}
	for _, r := range rows {
		out[r.ID] = r.N
	}
	return out
}

// A sale that read the partner before their ban committed leaves a pending commission (and automatic
// approval may approve it): a payout run leaves it out, and SweepBanned rejects it, in the audit log,
// once.
func TestSweepBannedRejectsWhatARacingSaleLeft(t *testing.T) {
	t.Parallel()
	b := newBrand(t)
	ann, key := b.customer("ann")
	if _, err := enrollment.Ban(b.ctx, b.d.DB, b.req, b.r.ProgramID, ann, nil); err != nil {
		t.Fatal(err)
	}
	// What the race leaves: two commissions made after the ban's rejections, as if the partner were approved.
	var late []int64
	for i := range 2 {
		s, err := b.sale(key, fmt.Sprintf("late-%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		late = append(late, s.Commission.ID)
	}
	if _, err := b.d.Exec(`UPDATE commissions SET status = 'pending', rejected_reason = NULL, rejected_at = NULL WHERE id = $1`, late[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := b.d.Exec(`UPDATE commissions SET status = 'approved', approved_at = $2, rejected_reason = NULL, rejected_at = NULL WHERE id = $1`,
		late[1], b.now()); err != nil {
		t.Fatal(err)
	}
	// The seeded partner's commission, approved: the payout run pays it, not the banned partner's.
	seeded, err := b.sale("customer-of-seeded", "seeded", firstClick(t, b, b.r.AffiliateURL))
	if err != nil {
		t.Fatal(err)
	}
	lr := ledger.Request{AccountID: b.req.AccountID, Email: b.req.Email, Now: b.now()}
	if _, err := ledger.Approve(b.ctx, b.d.DB, lr, seeded.Commission.ID, true); err != nil {
		t.Fatal(err)
	}
	run, err := ledger.CreatePayouts(b.ctx, b.d.DB, lr, b.r.ProgramID, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(run) != 1 || run[0].PartnerID != b.r.PartnerID {
		t.Fatalf("payouts %+v, want the seeded partner's only", run)
	}

	n, err := ledger.SweepBanned(b.ctx, b.d.DB, b.now())
	if err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2", n, err)
	}
	for id, s := range b.statuses(ann) {
		if s != "rejected (partner banned)" {
			t.Errorf("commission %d: %s", id, s)
		}
	}
	for id, n := range b.rejections(ann) {
		if n != 1 {
			t.Errorf("commission %d rejected %d times in the audit log", id, n)
		}
	}
	var actor string
	if err := b.d.Get(&actor, `SELECT actor FROM audit_log WHERE target = $1 AND action = 'commission.reject'`,
		fmt.Sprintf("commission:%d", late[1])); err != nil || actor != ledger.SweepActor {
		t.Errorf("swept rejection by %q (%v)", actor, err)
	}
	if n, err := ledger.SweepBanned(b.ctx, b.d.DB, b.now()); err != nil || n != 0 {
		t.Errorf("a second sweep rejected %d (%v)", n, err)
	}
	if s := b.statuses(b.r.PartnerID)[seeded.Commission.ID]; s != ledger.StatusInPayout {
		t.Errorf("the seeded partner's commission is %s", s)
	}
}

// firstClick is a click on affiliateURL, for a customer's first sale.
func firstClick(t *testing.T, b *brand, affiliateURL string) string {
	t.Helper()
	rec := clicks.NewRecorder(b.d.DB, b.log, 1, 8, nil)
	defer rec.Close()
	c, err := rec.Record(b.ctx, clicks.Input{AffiliateURL: affiliateURL, IP: "10.1.2.4", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ClickID
}

// Sales recorded while the partner is banned: whichever side of the ban each falls on, once the sweep
// has run every commission of theirs is rejected, and in the audit log once.
func TestBanRacingSales(t *testing.T) {
	t.Parallel()
	b := newBrand(t)
	ann, key := b.customer("ann")
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each+1)
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range each {
				if _, err := b.sale(key, fmt.Sprintf("race-%d-%d", w, i), ""); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() {
		<-start
		if _, err := enrollment.Ban(b.ctx, b.d.DB, b.req, b.r.ProgramID, ann, nil); err != nil {
			errs <- err
		}
	})
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if _, err := ledger.SweepBanned(b.ctx, b.d.DB, b.now()); err != nil {
		t.Fatal(err)
	}
	got := b.statuses(ann)
	if len(got) != writers*each+1 {
		t.Fatalf("%d commissions, want %d", len(got), writers*each+1)
	}
	for id, s := range got {
		if s != "rejected (partner banned)" {
			t.Errorf("commission %d: %s", id, s)
		}
	}
	for id, n := range b.rejections(ann) {
		if n > 1 {
			t.Errorf("commission %d rejected %d times in the audit log", id, n)
		}
	}
}

// Two batches naming the same people in opposite orders, at once: one is made, the other refused as a
// conflict (never a deadlock's error), and nothing is half made.
func TestInviteBatchesInOppositeOrders(t *testing.T) {
	t.Parallel()
	b := newBrand(t)
	v := &enrollment.Invitations{DB: b.d.DB, BaseURL: "https://reftrack.test"}
	for round := range 5 {
		var forward, backward []enrollment.Invitee
		for i := range 20 {
			forward = append(forward, enrollment.Invitee{Email: fmt.Sprintf("r%d-p%02d@example.com", round, i)})
		}
		for i := len(forward) - 1; i >= 0; i-- {
			backward = append(backward, forward[i])
		}
		var wg sync.WaitGroup
		results := make([]error, 2)
		start := make(chan struct{})
		for i, list := range [][]enrollment.Invitee{forward, backward} {
			wg.Go(func() {
				<-start
				_, results[i] = v.Invite(b.ctx, b.req, b.r.ProgramID, list, true)
			})
		}
		close(start)
		wg.Wait()
		var conflict *enrollment.ConflictError
		made := 0
		for _, err := range results {
			switch {
			case err == nil:
				made++
			case errors.As(err, &conflict) && strings.HasSuffix(conflict.Message, " already has an open invitation: resend it"):
			default:
				t.Errorf("round %d: %v", round, err)
			}
		}
		if made != 1 {
			t.Errorf("round %d: %d batches made, want 1 (%v)", round, made, results)
		}
		var n int
		if err := b.d.Get(&n, `SELECT count(*) FROM partner_invitations WHERE email LIKE $1`, fmt.Sprintf("r%d-%%", round)); err != nil || n != 20 {
			t.Errorf("round %d: %d invitations (%v), want 20", round, n, err)
		}
	}
}

// The refusals the routes answer, checked before anything is written, in the route's words.
func TestCheckInvitees(t *testing.T) {
	t.Parallel()
	ok := enrollment.Invitee{Email: "ada@example.com"}
	many := func(n int) []enrollment.Invitee {
		out := make([]enrollment.Invitee, n)
		for i := range out {
			out[i] = enrollment.Invitee{Email: fmt.Sprintf("p%d@example.com", i)}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		list  []enrollment.Invitee
		batch bool
		want  string
	}{
		{"one", []enrollment.Invitee{ok}, false, ""},
		{"fifty", many(50), true, ""},
		{"none", nil, true, "invitations must hold 1 to 50 invitations"},
		{"fifty-one", many(51), true, "invitations must hold 1 to 50 invitations"},
		{"email", []enrollment.Invitee{{Email: "ada"}}, false, "email must be an email address"},
		{"email in a batch", append(many(2), enrollment.Invitee{Email: "ada"}), true, "invitations[2].email must be an email address"},
		{"name 200", []enrollment.Invitee{{Email: "a@example.com", Name: strings.Repeat("é", 200)}}, false, ""},
		{"name 201", []enrollment.Invitee{{Email: "a@example.com", Name: strings.Repeat("é", 201)}}, false, "name must be 1 to 200 characters"},
		{"name in a batch", []enrollment.Invitee{ok, {Email: "b@example.com", Name: strings.Repeat("n", 201)}}, true,
			"invitations[1].name must be 1 to 200 characters"},
		{"message 2000", []enrollment.Invitee{{Email: "a@example.com", Message: strings.Repeat("é", 2000)}}, false, ""},
		{"message 2001", []enrollment.Invitee{{Email: "a@example.com", Message: strings.Repeat("é", 2001)}}, false,
			"message must be at most 2000 characters"},
		{"twice", []enrollment.Invitee{ok, {Email: "b@example.com"}, {Email: "ADA@example.com"}}, true,
			"The same email is invited twice: ADA@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := enrollment.CheckInvitees(tc.list, tc.batch)
			var invalid *enrollment.InvalidError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.As(err, &invalid) || invalid.Message != tc.want):
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestValidEmail(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"ada@example.com": true, "ada.lovelace+partners@mail.example.co.uk": true, "ADA@Example.COM": true,
		"": false, "ada": false, "ada@": false, "@example.com": false, "ada@localhost": false, " ada@example.com": false,
		"ada@example.com ": false, "Ada <ada@example.com>": false, "<ada@example.com>": false, `"ada lovelace"@example.com`: false,
		"ada@example.com, bob@example.com": false, "ada@@example.com": false,
		strings.Repeat("a", 64) + "@example.com": true, strings.Repeat("a", 65) + "@example.com": false,
		"a@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + "." + strings.Repeat("e", 60): true,
		"a@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 63) + "." + strings.Repeat("e", 61): false,
		"a@" + strings.Repeat("b", 64) + ".com": false, "ü@example.com": false, "a@exämple.com": false, "a@ex_ample.com": false,
		"a@-example.com": false, "a@example-.com": false, "a@example..com": false, "a@example.com.": false, "a@[127.0.0.1]": false,
		"a.b@example.com": true, ".a@example.com": false, "a..b@example.com": false, "a!#$%&'*+-/=?^_`{|}~@example.com": true,
	} {
		if got := enrollment.ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCheckReason(t *testing.T) {
	t.Parallel()
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		reason *string
		ok     bool
	}{
		{nil, true}, {ptr("r"), true}, {ptr(strings.Repeat("é", 500)), true},
		{ptr(""), false}, {ptr(" \t\n"), false}, {ptr("\u00a0"), false}, {ptr(strings.Repeat("é", 501)), false},
	} {
		err := enrollment.CheckReason(tc.reason)
		var invalid *enrollment.InvalidError
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &invalid) || invalid.Message != "reason must be 1 to 500 characters")) {
			t.Errorf("CheckReason(%v) = %v", tc.reason, err)
		}
	}
}

// A payout of a banned partner that fails returns its commissions to approved: the next sweep rejects
// them (they were never paid), and no payout run takes them meanwhile.
func TestFailedPayoutOfABannedPartner(t *testing.T) {
	t.Parallel()
	b := newBrand(t)
	ann, key := b.customer("ann")
	s, err := b.sale(key, "second", "")
	if err != nil {
		t.Fatal(err)
	}
	lr := ledger.Request{AccountID: b.req.AccountID, Email: b.req.Email, Now: b.now()}
	ids := []int64{}
	for id := range b.statuses(ann) {
		ids = append(ids, id)
	}
	if _, err := ledger.ApproveMany(b.ctx, b.d.DB, lr, b.r.ProgramID, ids, true); err != nil {
		t.Fatal(err)
	}
	run, err := ledger.CreatePayouts(b.ctx, b.d.DB, lr, b.r.ProgramID, "")
	if err != nil || len(run) != 1 {
		t.Fatalf("payouts %+v (%v)", run, err)
	}
	if _, err := enrollment.Ban(b.ctx, b.d.DB, b.req, b.r.ProgramID, ann, nil); err != nil {
		t.Fatal(err)
	}
	for id, st := range b.statuses(ann) {
		if st != ledger.StatusInPayout {
			t.Fatalf("commission %d after the ban: %s, want it kept in its payout", id, st)
		}
	}
	if _, err := ledger.MarkFailed(b.ctx, b.d.DB, lr, run[0].ID, "Recipient account closed"); err != nil {
		t.Fatal(err)
	}
	if st := b.statuses(ann)[s.Commission.ID]; st != ledger.StatusApproved {
		t.Fatalf("after the payout failed: %s", st)
	}
	if again, err := ledger.CreatePayouts(b.ctx, b.d.DB, lr, b.r.ProgramID, ""); err != nil || len(again) != 0 {
		t.Fatalf("a run after the failure paid the banned partner: %+v (%v)", again, err)
	}
	if n, err := ledger.SweepBanned(b.ctx, b.d.DB, b.now()); err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2", n, err)
	}
	for id, st := range b.statuses(ann) {
		if st != "rejected (partner banned)" {
			t.Errorf("commission %d: %s", id, st)
		}
	}
}
