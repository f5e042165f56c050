package ledger_test

import (
	"sync"
	"testing"

	"github.com/reftrack/reftrack/pkg/ledger"
)

// Payout runs at once never put a commission in two payouts, and every payout holds exactly the payable
// amounts of its commissions.
func TestConcurrentPayoutRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	partners := []int64{w.brand.PartnerID, w.partner("p2"), w.partner("p3")}
	for round := range 8 {
		for i, p := range partners {
			w.sale(p, int64(1000+100*round+i), []string{"USD", "EUR"}[(round+i)%2], false)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 3)
		for range 3 {
			wg.Go(func() {
				if _, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		w.conserved()
	}
	if n := w.count(`SELECT count(*) FROM commissions WHERE program_id = $1 AND status <> 'in_payout'`, w.brand.ProgramID); n != 0 {
		t.Errorf("%d commissions left out of every payout", n)
	}
	if n := w.count(`SELECT count(*) FROM payouts o WHERE gross_cents <> (SELECT sum(amount_cents - reversed_amount_cents)
		FROM commissions c WHERE c.payout_id = o.id) OR commission_count <> (SELECT count(*) FROM commissions c WHERE c.payout_id = o.id)`); n != 0 {
		t.Errorf("%d payouts whose amounts are not their commissions'", n)
	}
}

// A refund racing a payout run ends either before it (the payout pays the reduced commission) or after it
// (a clawback), never both and never neither: what the commission lost in all is its share of the refund.
func TestRefundRacingPayout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	var before, after int
	for range 12 {
		s := w.sale(w.brand.PartnerID, 5000, "USD", false) // 1000
		var wg sync.WaitGroup
		var refundErr, payoutErr error
		wg.Go(func() { _, refundErr = w.tryRefund(s.TransactionID, 1250) })
		wg.Go(func() { _, payoutErr = ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "") })
		wg.Wait()
		if refundErr != nil || payoutErr != nil {
			t.Fatalf("refund: %v; payout: %v", refundErr, payoutErr)
		}
		c := w.commission(s.Commission.ID)
		switch {
		case c.Status != ledger.StatusInPayout:
			t.Fatalf("commission %d: %s, want in_payout", c.ID, c.Status)
		case c.ReversedAmountCents == 250 && c.ClawbackCents == 0:
			before++
		case c.ReversedAmountCents == 0 && c.ClawbackCents == 250:
			after++
		default:
			t.Fatalf("commission %d: reversed %d and clawed back %d, want 250 one way", c.ID, c.ReversedAmountCents, c.ClawbackCents)
		}
		w.conserved()
	}
	t.Logf("refund before the payout %d times, after it %d times", before, after)
}
