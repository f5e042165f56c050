package commission

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Refund, the rule for a refund, without a database: what the commission loses in all is in
// proportion to what the sale has lost (all once refunded in full); before a payout it is reversed, after
// one it is a clawback, and a rejected commission stays as it is.
func TestRefund(t *testing.T) {
	t.Parallel()
	// A commission of 980 on a sale of 4900.
	c := func(status string, reversed, clawback int64) Held {
		return Held{ID: 1, Version: "v", AmountCents: 980, ReversedCents: reversed, ClawbackCents: clawback, Currency: "USD", Status: status}
	}
	for _, tc := range []struct {
		name     string
		held     Held
		refunded int64
		want     RefundEffect
	}{
		{"in hold, a quarter", c(StatusPending, 0, 0), 1225, RefundEffect{ReversedCents: 245, ReversedNowCents: 245, Status: StatusPending}},
		{"in hold, half after a quarter", c(StatusPending, 245, 0), 2450, RefundEffect{ReversedCents: 490, ReversedNowCents: 245, Status: StatusPending}},
		{"in hold, the rest", c(StatusPending, 490, 0), 4900, RefundEffect{ReversedCents: 980, ReversedNowCents: 490, Status: StatusReversed}},
		{"in hold, one cent rounds to nothing", c(StatusPending, 0, 0), 1, RefundEffect{Status: StatusPending}},
		{"in hold, half away from zero: 2.5 cents is 3", Held{AmountCents: 5, Status: StatusPending}, 2450, RefundEffect{ReversedCents: 3, ReversedNowCents: 3, Status: StatusPending}},
		{"approved stays approved", c(StatusApproved, 0, 0), 1225, RefundEffect{ReversedCents: 245, ReversedNowCents: 245, Status: StatusApproved}},
		{"approved, refunded in full", c(StatusApproved, 245, 0), 4900, RefundEffect{ReversedCents: 980, ReversedNowCents: 735, Status: StatusReversed}},
		{"in a payout: a clawback", c(StatusInPayout, 0, 0), 1225, RefundEffect{Status: StatusInPayout, ClawbackCents: 245}},
		{"paid: a clawback of what is not yet taken", c(StatusPaid, 245, 245), 4900, RefundEffect{ReversedCents: 245, Status: StatusPaid, ClawbackCents: 490}},
		{"paid, reduced before it: the clawback is the rest", c(StatusPaid, 245, 0), 2450, RefundEffect{ReversedCents: 245, Status: StatusPaid, ClawbackCents: 245}},
		{"paid, a cent: nothing yet", c(StatusPaid, 0, 0), 1, RefundEffect{Status: StatusPaid}},
		{"rejected: untouched", c(StatusRejected, 0, 0), 4900, RefundEffect{Status: StatusRejected}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Refund(tc.held, tc.refunded, 4900)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("effect (-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range [][2]int64{{-1, 4900}, {4901, 4900}, {0, 0}} {
		if _, err := Refund(c(StatusPending, 0, 0), bad[0], bad[1]); err == nil {
			t.Errorf("Refund of %d out of %d: no error", bad[0], bad[1])
		}
	}
}

// Several partial refunds of a paid commission add up to exactly the commission, whatever their sizes.
func TestRefundsAddUpToTheCommission(t *testing.T) {
	t.Parallel()
	for _, parts := range [][]int64{{1, 1, 4898}, {1633, 1633, 1634}, {7, 4893}, {4900}, {2449, 1, 2450}} {
		h := Held{AmountCents: 977, Status: StatusPaid}
		var refunded int64
		for _, p := range parts {
			refunded += p
			e, err := Refund(h, refunded, 4900)
			if err != nil {
				t.Fatal(err)
			}
			h.ClawbackCents += e.ClawbackCents
		}
		if h.ClawbackCents != 977 {
			t.Errorf("refunds %v clawed back %d of 977", parts, h.ClawbackCents)
		}
	}
}
