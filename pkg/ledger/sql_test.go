package ledger_test

import (
	"testing"

	"github.com/reftrack/reftrack/pkg/ledger"
)

// ledger_refund's outcomes, called directly (the refund route calls it through sales_refund): a
// reversal written only at the version it was decided on, a clawback checked and locked at that version
// and then recorded by ledger_clawback, and a refund that changes nothing answered whatever the version.
func TestLedgerRefundSQL(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.set(0, ledger.ApprovalAuto, 0)
	type row struct {
		ID       int64  `db:"id"`
		Amount   int64  `db:"amount_cents"`
		Reversed int64  `db:"reversed_amount_cents"`
		Currency string `db:"currency"`
		Status   string `db:"status"`
		Clawback int64  `db:"clawback_cents"`
	}
	version := func(id int64) string {
		var v string
		if err := w.d.Get(&v, `SELECT xmin::text FROM commissions WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return v
	}
	call := func(id int64, v string, reversed int64, status string, clawback int64) []row {
		t.Helper()
		var out []row
		if err := w.d.Select(&out, `SELECT * FROM ledger_refund(p_commission => $1, p_version => $2, p_reversed => $3,
			p_status => $4, p_clawback => $5, p_now => $6)`, id, v, reversed, status, clawback, w.clock()); err != nil {
			t.Fatal(err)
		}
		return out
	}
	stored := func(id int64) (int64, string) {
		var r row
		if err := w.d.Get(&r, `SELECT id, amount_cents, reversed_amount_cents, currency, status, 0::bigint AS clawback_cents
			FROM commissions WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return r.Reversed, r.Status
	}

	// A reversal at the version read: written, answered with its effective status.
	c := w.sale(w.brand.PartnerID, 5000, "USD", false).Commission // 1000, approved at once (hold 0, auto)
	stale := version(c.ID)
	if got := call(c.ID, stale, 250, ledger.StatusApproved, 0); len(got) != 1 ||
		got[0] != (row{ID: c.ID, Amount: 1000, Reversed: 250, Currency: "USD", Status: ledger.StatusApproved}) {
		t.Fatalf("reversal = %+v", got)
	}
	// At a version that is no longer the row's: nothing written, no row.
	if got := call(c.ID, stale, 500, ledger.StatusApproved, 0); len(got) != 0 {
		t.Fatalf("reversal at a stale version = %+v, want none", got)
	}
	if rev, st := stored(c.ID); rev != 250 || st != ledger.StatusApproved {
		t.Fatalf("after the stale call: reversed %d, %s", rev, st)
	}

	// In a payout: a clawback is answered (this one counted) and the commission left as it is; at a stale
	// version, no row.
	if _, err := ledger.CreatePayouts(w.ctx, w.d.DB, w.req(), w.brand.ProgramID, ""); err != nil {
		t.Fatal(err)
	}
	if got := call(c.ID, stale, 250, ledger.StatusInPayout, 100); len(got) != 0 {
		t.Fatalf("clawback at a stale version = %+v, want none", got)
	}
	current := version(c.ID)
	if got := call(c.ID, current, 250, ledger.StatusInPayout, 100); len(got) != 1 ||
		got[0] != (row{ID: c.ID, Amount: 1000, Reversed: 250, Currency: "USD", Status: ledger.StatusInPayout, Clawback: 100}) {
		t.Fatalf("clawback = %+v", got)
	}
	if version(c.ID) != current {
		t.Error("the clawback edited the commission")
	}
	// ledger_clawback records it against the partner, for a refund of the sale.
	var refundID int64
	if err := w.d.Get(&refundID, `INSERT INTO refunds (sale_id, program_id, reason, amount_cents, commission_reversed_cents, source)
		SELECT sale_id, program_id, 'refund', 500, 0, 'api' FROM commissions WHERE id = $1 RETURNING id`, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.d.Exec(`SELECT ledger_clawback(p_commission => $1, p_refund => $2, p_amount => 100)`, c.ID, refundID); err != nil {
		t.Fatal(err)
	}
	if n := w.count(`SELECT count(*) FROM commission_clawbacks WHERE commission_id = $1 AND refund_id = $2 AND amount_cents = 100
		AND partner_id = $3 AND currency = 'USD' AND payout_id IS NULL`, c.ID, refundID, w.brand.PartnerID); n != 1 {
		t.Errorf("%d clawbacks recorded, want 1", n)
	}

	// Nothing to write (in a payout with nothing left to claw back): answered whatever the version.
	if got := call(c.ID, stale, 250, ledger.StatusInPayout, 0); len(got) != 1 || got[0].Clawback != 100 || got[0].Status != ledger.StatusInPayout {
		t.Fatalf("no change = %+v", got)
	}
	w.conserved()
}
