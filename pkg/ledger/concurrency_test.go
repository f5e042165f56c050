package ledger_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

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

// A payout run and a payout's failure never overlap: a run reads the approved commissions and the owed
// clawbacks in two statements, and a failure committing between them would give the run the failed
// payout's clawbacks without its commissions. Each waits for the other to end, here while the other is
// held open in a transaction of the test's.
func TestPayoutRunAndFailureWaitForEachOther(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	first := w.sale(w.brand.PartnerID, 5000, "USD", false) // 1000
	if _, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil {
		t.Fatal(err)
	}
	w.refund(first.TransactionID, 2500)            // a clawback of 500, owed
	w.sale(w.brand.PartnerID, 10000, "USD", false) // 2000
	ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
	if err != nil || len(ps) != 1 || ps[0].AmountCents != 1500 || ps[0].ClawbackCents != 500 {
		t.Fatalf("payouts %+v, %v; want one of 1500 netting 500", ps, err)
	}
	netting := ps[0].ID

	// A run in progress (its lock, exclusive): the failure waits, then returns the commission and the clawback.
	hold := w.holdPayoutRunLock("pg_advisory_xact_lock")
	failed := make(chan error, 1)
	go func() { _, err := ledger.MarkFailed(w.ctx, w.d.DB, w.req(), netting, "bank refused"); failed <- err }()
	w.awaitAdvisoryWaiter(func() bool { return len(failed) > 0 })
	if n := w.count(`SELECT count(*) FROM payouts WHERE id = $1 AND status = 'processing'`, netting); n != 1 {
		t.Fatalf("the payout failed while a run held the lock")
	}
	hold.release()
	if err := <-failed; err != nil {
		t.Fatal(err)
	}

	// A failure in progress (the lock shared): the run waits, then pays the commission netting the clawback again.
	hold = w.holdPayoutRunLock("pg_advisory_xact_lock_shared")
	ran := make(chan []ledger.Payout, 1)
	go func() {
		ps, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, "")
		if err != nil {
			t.Error(err)
		}
		ran <- ps
	}()
	w.awaitAdvisoryWaiter(func() bool { return len(ran) > 0 })
	if n := w.count(`SELECT count(*) FROM payouts WHERE program_id = $1`, w.brand.ProgramID); n != 2 {
		t.Fatalf("%d payouts while a failure held the lock, want 2", n)
	}
	hold.release()
	if ps := <-ran; len(ps) != 1 || ps[0].AmountCents != 1500 || ps[0].ClawbackCents != 500 || ps[0].CommissionCount != 1 {
		t.Fatalf("after the failure, payouts %+v; want one of 1500 netting 500", ps)
	}
	w.conserved()
}

// heldLock is a transaction of the test's holding the program's payout-run lock.
type heldLock struct {
	t  *testing.T
	tx *sqlx.Tx
}

// holdPayoutRunLock takes the program's payout-run lock with fn (exclusive or shared), as ledger does.
func (w *world) holdPayoutRunLock(fn string) heldLock {
	w.t.Helper()
	tx, err := w.d.BeginTxx(w.ctx, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT `+fn+`(hashtextextended('reftrack.payouts', $1))`, w.brand.ProgramID); err != nil {
		w.t.Fatal(err)
	}
	return heldLock{t: w.t, tx: tx}
}

func (h heldLock) release() {
	h.t.Helper()
	if err := h.tx.Commit(); err != nil {
		h.t.Fatal(err)
	}
}

// awaitAdvisoryWaiter returns once a session of the world's database waits for an advisory lock; it
// fails the test if finished reports that the operation expected to wait ended without waiting.
func (w *world) awaitAdvisoryWaiter(finished func() bool) {
	w.t.Helper()
	for {
		if finished() {
			w.t.Fatal("the operation ended without waiting for the lock")
		}
		var waiting bool
		if err := w.d.Get(&waiting, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database())`); err != nil {
			w.t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case <-w.ctx.Done():
			w.t.Fatal(w.ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
