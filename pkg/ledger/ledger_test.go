package ledger_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/ledger"
)

const day = 24 * time.Hour

// A commission is held for the program's hold_days from its sale, then (approval auto) approved from that
// instant in every read, before and after the background pass writes it down, dated available_on.
func TestHoldAndAutoApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sold := w.clock()
	s := w.sale(w.brand.PartnerID, 5000, "USD", false)
	if s.Commission.Status != ledger.StatusPending || s.Commission.AmountCents != 1000 {
		t.Fatalf("the sale's commission: %+v, want 1000 pending", s.Commission)
	}
	c := w.commission(s.Commission.ID)
	if want := sold.Add(30 * day); c.AvailableOn == nil || !c.AvailableOn.Equal(want) || c.ApprovedAt != nil {
		t.Fatalf("available_on %v approved_at %v, want %v and none", c.AvailableOn, c.ApprovedAt, want)
	}
	w.later(30*day - time.Second)
	if c := w.commission(s.Commission.ID); c.Status != ledger.StatusPending {
		t.Fatalf("a second before available_on: %s", c.Status)
	}
	w.later(time.Second)
	c = w.commission(s.Commission.ID)
	if c.Status != ledger.StatusApproved || c.ApprovedAt == nil || !c.ApprovedAt.Equal(*c.AvailableOn) {
		t.Fatalf("at available_on: %s approved %v, want approved at %v", c.Status, c.ApprovedAt, c.AvailableOn)
	}
	if b := w.balances(); b[key(w.brand.PartnerID, "USD")].ApprovedCents != 1000 {
		t.Fatalf("balance before the pass: %+v", b)
	}
	n, err := ledger.AutoApprove(w.ctx, w.d.DB, w.clock())
	if err != nil || n != 1 {
		t.Fatalf("AutoApprove: %d, %v; want 1", n, err)
	}
	var stored string
	if err := w.d.Get(&stored, `SELECT status FROM commissions WHERE id = $1`, c.ID); err != nil || stored != ledger.StatusApproved {
		t.Fatalf("stored status %q, %v", stored, err)
	}
	if again := w.commission(c.ID); again.ApprovedAt == nil || !again.ApprovedAt.Equal(*c.ApprovedAt) {
		t.Errorf("approved_at moved when written down: %v, was %v", again.ApprovedAt, c.ApprovedAt)
	}
	if n, _ := ledger.AutoApprove(w.ctx, w.d.DB, w.clock()); n != 0 {
		t.Errorf("a second pass approved %d", n)
	}
	w.conserved()
}

// With approval manual a commission waits for a member, who may approve it once its hold has ended, or
// earlier by releasing the hold.
func TestManualApproval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(10, ledger.ApprovalManual, 0)
	early, late := w.sale(w.brand.PartnerID, 5000, "USD", false), w.sale(w.brand.PartnerID, 2500, "USD", false)
	w.later(11 * day)
	if c := w.commission(late.Commission.ID); c.Status != ledger.StatusPending {
		t.Fatalf("manual, past available_on: %s", c.Status)
	}
	if n, _ := ledger.AutoApprove(w.ctx, w.d.DB, w.clock()); n != 0 {
		t.Fatalf("the pass approved %d commissions of a manual program", n)
	}
	c, err := ledger.Approve(w.ctx, w.d.DB, w.req(), early.Commission.ID, false)
	if err != nil || c.Status != ledger.StatusApproved || c.ApprovedAt == nil || !c.ApprovedAt.Equal(w.clock()) {
		t.Fatalf("approve: %+v, %v", c, err)
	}
	again, err := ledger.Approve(w.ctx, w.d.DB, w.req(), early.Commission.ID, false)
	if err != nil || !again.ApprovedAt.Equal(*c.ApprovedAt) {
		t.Fatalf("approving again: %+v, %v; want unchanged", again, err)
	}
	if n := w.audits(ledger.ActionApprove); n != 1 {
		t.Errorf("%d approvals audited, want 1", n)
	}
	// In its hold: refused, unless the approval releases the hold; the payout run then pays it at once.
	w.set(365, ledger.ApprovalManual, 0)
	fresh := w.sale(w.brand.PartnerID, 1000, "USD", false)
	held := w.commission(fresh.Commission.ID)
	var conflict *ledger.ConflictError
	want := fmt.Sprintf("Commission %d is in its hold until %s; approve it then, or release it early", held.ID,
		held.AvailableOn.UTC().Format(time.RFC3339))
	if _, err := ledger.Approve(w.ctx, w.d.DB, w.req(), fresh.Commission.ID, false); !errors.As(err, &conflict) || conflict.Message != want {
		t.Fatalf("approve in hold: %v; want the conflict %q", err, want)
	}
	if c := w.commission(fresh.Commission.ID); c.Status != ledger.StatusPending {
		t.Fatalf("a refused approval changed the commission: %s", c.Status)
	}
	if c, err := ledger.Approve(w.ctx, w.d.DB, w.req(), fresh.Commission.ID, true); err != nil || c.Status != ledger.StatusApproved {
		t.Fatalf("approve in hold, releasing it: %+v, %v", c, err)
	}
	if n := w.auditsWith(ledger.ActionApprove, "release_hold"); n != 1 {
		t.Errorf("%d released holds audited, want 1", n)
	}
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 || ps[0].CommissionCount != 2 {
		t.Fatalf("payouts: %+v, %v; want one paying the commission approved after its hold and the released one", ps, err)
	}
	w.conserved()
}

// A commission approved by itself after its hold (auto) and one a member approved in its hold without the
// release cannot happen; but a commission approved and then found in its hold (its hold lengthened by no
// rule) would not be paid: payout runs take approved commissions whose hold has ended or was released.
func TestPayoutRunsRespectTheHold(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(30, ledger.ApprovalManual, 0)
	s := w.sale(w.brand.PartnerID, 1000, "USD", false)
	// Written approved directly, as no route can: the payout run must still wait for the hold.
	if _, err := w.d.Exec(`UPDATE commissions SET status = 'approved', approved_at = now() WHERE id = $1`, s.Commission.ID); err != nil {
		t.Fatal(err)
	}
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil || len(ps) != 0 {
		t.Fatalf("payouts in the hold: %+v, %v; want none", ps, err)
	}
	w.later(31 * day)
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil || len(ps) != 1 {
		t.Fatalf("payouts after the hold: %+v, %v; want one", ps, err)
	}
	w.conserved()
}

// Rejection needs a reason, pays nothing ever, and is refused once the commission is in a payout.
func TestReject(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	a, b := w.sale(w.brand.PartnerID, 5000, "USD", false), w.sale(w.brand.PartnerID, 3000, "USD", false)
	for _, reason := range []string{"", "  ", string(make([]rune, 501))} {
		var inv *ledger.InvalidError
		if _, err := ledger.Reject(w.ctx, w.d.DB, w.req(), a.Commission.ID, reason); !errors.As(err, &inv) {
			t.Errorf("reason %q: %v, want an InvalidError", reason, err)
		}
	}
	c, err := ledger.Reject(w.ctx, w.d.DB, w.req(), a.Commission.ID, "self-referral")
	if err != nil || c.Status != ledger.StatusRejected || c.PayableCents != 0 || c.RejectedReason == nil || *c.RejectedReason != "self-referral" {
		t.Fatalf("reject: %+v, %v", c, err)
	}
	var conflict *ledger.ConflictError
	if _, err := ledger.Approve(w.ctx, w.d.DB, w.req(), a.Commission.ID, false); !errors.As(err, &conflict) {
		t.Errorf("approving a rejected commission: %v", err)
	}
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 || ps[0].AmountCents != 600 || ps[0].CommissionCount != 1 {
		t.Fatalf("payouts: %+v, %v; want one of 600 (the rejected one left out)", ps, err)
	}
	if _, err := ledger.Reject(w.ctx, w.d.DB, w.req(), b.Commission.ID, "late"); !errors.As(err, &conflict) {
		t.Errorf("rejecting a commission in a payout: %v", err)
	}
	// A refund of the rejected commission's sale leaves it as it is.
	r := w.refund(a.TransactionID, 0)
	if r.Commission == nil || r.Commission.Status != ledger.StatusRejected || r.Commission.ReversedAmountCents != 0 {
		t.Errorf("refund of a rejected commission's sale: %+v", r.Commission)
	}
	if n := w.audits(ledger.ActionReject); n != 1 {
		t.Errorf("%d rejections audited, want 1", n)
	}
	w.conserved()
}

// Bulk approval is all or nothing, the hold's release included.
func TestApproveMany(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(30, ledger.ApprovalManual, 0)
	var ids []int64
	for range 3 {
		ids = append(ids, w.sale(w.brand.PartnerID, 1000, "USD", false).Commission.ID)
	}
	if _, err := ledger.Reject(w.ctx, w.d.DB, w.req(), ids[2], "fraud"); err != nil {
		t.Fatal(err)
	}
	var conflict *ledger.ConflictError
	if _, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ids, true); !errors.As(err, &conflict) {
		t.Fatalf("bulk approval with a rejected commission: %v", err)
	}
	if c := w.commission(ids[0]); c.Status != ledger.StatusPending {
		t.Fatalf("a refused bulk approval approved %d: %s", ids[0], c.Status)
	}
	if _, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, []int64{ids[0], 999999}, true); !errors.Is(err, ledger.ErrCommissionNotFound) {
		t.Fatalf("bulk approval of an unknown id: %v", err)
	}
	var inv *ledger.InvalidError
	if _, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, nil, false); !errors.As(err, &inv) {
		t.Errorf("no ids: %v", err)
	}
	if _, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, make([]int64, 501), false); !errors.As(err, &inv) {
		t.Errorf("501 ids: %v", err)
	}
	// In their hold: refused without the release, all of them.
	if _, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ids[:2], false); !errors.As(err, &conflict) ||
		!strings.Contains(conflict.Message, "is in its hold until") {
		t.Fatalf("bulk approval in the hold: %v", err)
	}
	if c := w.commission(ids[0]); c.Status != ledger.StatusPending {
		t.Fatalf("a refused bulk approval approved %d: %s", ids[0], c.Status)
	}
	cs, err := ledger.ApproveMany(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ids[:2], true)
	if err != nil || len(cs) != 2 || cs[0].Status != ledger.StatusApproved || cs[1].Status != ledger.StatusApproved {
		t.Fatalf("bulk approval: %+v, %v", cs, err)
	}
	w.conserved()
}

// Payouts: one per partner and currency at or above the minimum (the rest carries over), test
// commissions never paid; paid is idempotent by reference; failed returns the commissions to approved.
func TestPayouts(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 500)
	ann, bob := w.brand.PartnerID, w.partner("bob")
	w.sale(ann, 5000, "USD", false)  // 1000
	w.sale(ann, 2500, "USD", false)  // 500
	w.sale(ann, 10000, "EUR", false) // 2000
	w.sale(bob, 2000, "USD", false)  // 400: under the minimum
	w.sale(ann, 9000, "USD", true)   // a test commission: never paid
	w.conserved()
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "USD")
	if err != nil || len(ps) != 1 || ps[0].PartnerID != ann || ps[0].AmountCents != 1500 || ps[0].CommissionCount != 2 ||
		ps[0].Status != ledger.PayoutProcessing {
		t.Fatalf("USD payouts: %+v, %v", ps, err)
	}
	b := w.balances()
	if got := b[key(ann, "USD")]; got.InPayoutCents != 1500 || got.ApprovedCents != 0 {
		t.Errorf("ann USD: %+v", got)
	}
	if got := b[key(bob, "USD")]; got.ApprovedCents != 400 {
		t.Errorf("bob USD, carried over: %+v", got)
	}
	w.conserved()
	// Nothing more to pay in USD: a second run makes none.
	if again, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "USD"); err != nil || len(again) != 0 {
		t.Fatalf("second run: %+v, %v", again, err)
	}
	paid, err := ledger.MarkPaid(w.ctx, w.d.DB, w.req(), ps[0].ID, "pp-batch-1")
	if err != nil || paid.Status != ledger.PayoutPaid || paid.PaidAt == nil {
		t.Fatalf("paid: %+v, %v", paid, err)
	}
	if again, err := ledger.MarkPaid(w.ctx, w.d.DB, w.req(), ps[0].ID, "pp-batch-1"); err != nil || !again.PaidAt.Equal(*paid.PaidAt) {
		t.Fatalf("paid again, same reference: %+v, %v", again, err)
	}
	var conflict *ledger.ConflictError
	if _, err := ledger.MarkPaid(w.ctx, w.d.DB, w.req(), ps[0].ID, "other"); !errors.As(err, &conflict) {
		t.Errorf("paid again, another reference: %v", err)
	}
	if _, err := ledger.MarkFailed(w.ctx, w.d.DB, w.req(), ps[0].ID, "bounced"); !errors.As(err, &conflict) {
		t.Errorf("failed after paid: %v", err)
	}
	if got := w.balances()[key(ann, "USD")]; got.PaidCents != 1500 || got.InPayoutCents != 0 {
		t.Errorf("ann USD paid: %+v", got)
	}
	// EUR: created, then failed: back to approved.
	eur, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(eur) != 1 || eur[0].Currency != "EUR" || eur[0].AmountCents != 2000 {
		t.Fatalf("all-currency run: %+v, %v", eur, err)
	}
	failed, err := ledger.MarkFailed(w.ctx, w.d.DB, w.req(), eur[0].ID, "account closed")
	if err != nil || failed.Status != ledger.PayoutFailed || failed.FailureReason == nil {
		t.Fatalf("failed: %+v, %v", failed, err)
	}
	if got := w.balances()[key(ann, "EUR")]; got.ApprovedCents != 2000 || got.InPayoutCents != 0 {
		t.Errorf("ann EUR after failure: %+v", got)
	}
	if _, err := ledger.MarkPaid(w.ctx, w.d.DB, w.req(), eur[0].ID, "x"); !errors.As(err, &conflict) {
		t.Errorf("paid after failed: %v", err)
	}
	for action, want := range map[string]int{ledger.ActionPayoutCreate: 2, ledger.ActionPayoutPaid: 1, ledger.ActionPayoutFailed: 1} {
		if n := w.audits(action); n != want {
			t.Errorf("%d %s audited, want %d", n, action, want)
		}
	}
	w.conserved()
}

// A refund before the payout reduces the commission (the payout pays what is left); after it, the
// commission is never edited: a clawback, owed until the next payout nets it, and owed again when that
// payout fails.
func TestRefundsAndClawbacks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	ann := w.brand.PartnerID
	a := w.sale(ann, 5000, "USD", false) // 1000
	r := w.refund(a.TransactionID, 1250)
	if r.Commission.Status != ledger.StatusApproved || r.Commission.ReversedAmountCents != 250 {
		t.Fatalf("refund of an approved commission: %+v", r.Commission)
	}
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 || ps[0].AmountCents != 750 {
		t.Fatalf("payout: %+v, %v; want 750", ps, err)
	}
	if _, err := ledger.MarkPaid(w.ctx, w.d.DB, w.req(), ps[0].ID, "ref-1"); err != nil {
		t.Fatal(err)
	}
	var before string
	if err := w.d.Get(&before, `SELECT row_to_json(c)::text FROM commissions c WHERE id = $1`, a.Commission.ID); err != nil {
		t.Fatal(err)
	}
	r = w.refund(a.TransactionID, 1250) // half refunded now: 500 lost in all, 250 taken before
	if r.Commission.Status != ledger.StatusPaid || r.Commission.ClawbackCents != 250 || r.Commission.ReversedAmountCents != 250 {
		t.Fatalf("refund after paid: %+v", r.Commission)
	}
	var after string
	if err := w.d.Get(&after, `SELECT row_to_json(c)::text FROM commissions c WHERE id = $1`, a.Commission.ID); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the paid commission was edited:\n%s\n%s", before, after)
	}
	if got := w.balances()[key(ann, "USD")]; got.ClawbackOwedCents != 250 || got.PaidCents != 750 {
		t.Errorf("after the clawback: %+v", got)
	}
	w.conserved()
	// The next payout nets the clawback: 1000 - 250.
	w.sale(ann, 5000, "USD", false)
	ps, err = ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 || ps[0].AmountCents != 750 || ps[0].ClawbackCents != 250 {
		t.Fatalf("netting payout: %+v, %v", ps, err)
	}
	if got := w.balances()[key(ann, "USD")]; got.ClawbackOwedCents != 0 || got.InPayoutCents != 1000 {
		t.Errorf("after netting: %+v", got)
	}
	w.conserved()
	if _, err := ledger.MarkFailed(w.ctx, w.d.DB, w.req(), ps[0].ID, "bounced"); err != nil {
		t.Fatal(err)
	}
	if got := w.balances()[key(ann, "USD")]; got.ClawbackOwedCents != 250 || got.ApprovedCents != 1000 {
		t.Errorf("after the netting payout failed: %+v", got)
	}
	w.conserved()
	// A clawback larger than what is approved carries over: no payout.
	w.refund(a.TransactionID, 0) // the rest: 500 more clawed back
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil || len(ps) != 1 || ps[0].AmountCents != 250 {
		t.Fatalf("payout after the full refund: %+v, %v; want 1000 - 750 = 250", ps, err)
	}
	w.conserved()
}

// An Idempotency-Key answers its first answer again and changes nothing; another request with it is
// refused; after 24 hours the key is free.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	w.sale(w.brand.PartnerID, 5000, "USD", false)
	k, err := idempotency.New(w.accountID, "run-1", []byte("createPayouts"), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	r := w.req()
	r.Key = k
	first, err := ledger.CreatePayouts(w.ctx, w.d.DB, r, w.brand.ProgramID, "")
	if err != nil || len(first) != 1 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	w.sale(w.brand.PartnerID, 2500, "USD", false) // would make a second payout if run again
	again, err := ledger.CreatePayouts(w.ctx, w.d.DB, r, w.brand.ProgramID, "")
	if err != nil || len(again) != 1 || again[0].ID != first[0].ID || again[0].AmountCents != first[0].AmountCents {
		t.Fatalf("again: %+v, %v; want the first answer", again, err)
	}
	if n := w.count(`SELECT count(*) FROM payouts`); n != 1 {
		t.Fatalf("%d payouts after the repeat, want 1", n)
	}
	other, _ := idempotency.New(w.accountID, "run-1", []byte("createPayouts"), []byte(`{"currency":"USD"}`))
	r.Key = other
	if _, err := ledger.CreatePayouts(w.ctx, w.d.DB, r, w.brand.ProgramID, "USD"); !errors.Is(err, idempotency.ErrKeyReused) {
		t.Fatalf("the key with another request: %v", err)
	}
	w.later(idempotency.Window + time.Second)
	r = w.req()
	r.Key = k
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, r, w.brand.ProgramID, ""); err != nil || len(ps) != 1 || ps[0].ID == first[0].ID {
		t.Fatalf("a day later: %+v, %v; want a new run", ps, err)
	}
	if n, err := idempotency.Expire(w.ctx, w.d.DB, w.clock().Add(idempotency.Window+time.Second)); err != nil || n != 1 {
		t.Errorf("Expire: %d, %v", n, err)
	}
}

func key(partnerID int64, currency string) string {
	return itoa(partnerID) + "/" + currency
}

// A commission back from a failed payout with clawbacks its refunds recorded meanwhile cannot be
// rejected: it would pay nothing while its partner still owed them.
func TestRejectAfterFailedPayoutWithClawbacks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	s := w.sale(w.brand.PartnerID, 4000, "USD", false) // 800
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 {
		t.Fatalf("payout: %+v, %v", ps, err)
	}
	if r := w.refund(s.TransactionID, 2000); r.Commission.ClawbackCents != 400 {
		t.Fatalf("refund in the payout: %+v", r.Commission)
	}
	if _, err := ledger.MarkFailed(w.ctx, w.d.DB, w.req(), ps[0].ID, "bounced"); err != nil {
		t.Fatal(err)
	}
	var conflict *ledger.ConflictError
	if _, err := ledger.Reject(w.ctx, w.d.DB, w.req(), s.Commission.ID, "fraud"); !errors.As(err, &conflict) {
		t.Fatalf("reject: %v, want a conflict", err)
	}
	if c := w.commission(s.Commission.ID); c.Status != ledger.StatusApproved {
		t.Errorf("after the refused rejection: %s", c.Status)
	}
	// The partner is paid what is left: 800 approved less 400 owed.
	if ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil || len(ps) != 1 || ps[0].AmountCents != 400 {
		t.Fatalf("next payout: %+v, %v", ps, err)
	}
	w.conserved()
}
