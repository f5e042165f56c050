package commission

import "fmt"

// Held is a commission as a refund finds it: its effective status, and its row version, so that the
// refund is written only if nothing changed it meanwhile (an approval, a payout).
type Held struct {
	ID            int64
	Version       string
	AmountCents   int64
	ReversedCents int64 // reversed so far (before any payout)
	ClawbackCents int64 // clawed back so far (after one)
	Currency      string
	Status        string
}

// RefundEffect is what a refund does to its sale's commission.
type RefundEffect struct {
	ReversedCents    int64  // the commission's reversed total after the refund
	ReversedNowCents int64  // of it, by this refund
	Status           string // the commission's status after the refund
	ClawbackCents    int64  // a clawback this refund records (0: none)
}

// Refund is the effect on c of a refund that brings its sale's refunded total to refundedCents of
// saleCents. What the commission loses in all is round_half_away_from_zero(amount × refunded / sale), all
// of it once the sale is fully refunded, so that the parts of several refunds add up exactly. Before the
// commission is in a payout the loss reverses it: its status stays (pending or approved) until it is
// reversed in full. In a payout or paid it is never edited: the loss not yet taken is a clawback. A commission back from a failed payout may carry clawbacks taken
// while it was in it: those count as lost already, so the reversal is the rest. A rejected commission pays
// nothing and stays as it is.
func Refund(c Held, refundedCents, saleCents int64) (RefundEffect, error) {
	if saleCents <= 0 || refundedCents < 0 || refundedCents > saleCents {
		return RefundEffect{}, fmt.Errorf("refund of %d out of a sale of %d", refundedCents, saleCents)
	}
	lost := c.AmountCents
	if refundedCents < saleCents {
		var err error
		if lost, err = Proportion(c.AmountCents, refundedCents, saleCents); err != nil {
			return RefundEffect{}, err
		}
	}
	e := RefundEffect{ReversedCents: c.ReversedCents, Status: c.Status}
	switch c.Status {
	case StatusRejected:
		return e, nil
	case StatusInPayout, StatusPaid:
		e.ClawbackCents = max(lost-c.ReversedCents-c.ClawbackCents, 0)
		return e, nil
	}
	// What clawbacks took while the commission was in a payout that then failed is lost already: only the
	// rest is reversed now.
	e.ReversedCents = max(lost-c.ClawbackCents, c.ReversedCents)
	e.ReversedNowCents = e.ReversedCents - c.ReversedCents
	if e.ReversedCents == c.AmountCents {
		e.Status = StatusReversed
	}
	return e, nil
}
