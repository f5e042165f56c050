package commission

import (
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// tiered is a hypothetical kind of reward, written as the next issues would add one (a per-lead reward,
// a reward with conditions): a type in this package that says what a sale pays. Here 10 % of a sale up
// to 100.00 (in minor units, whatever the currency's) and 20 % of the rest, on the customer's first sale
// only. Nothing else changes: Decide applies the ban, the hold and auto approval to it as to any reward.
type tiered struct{ FirstOnly bool }

func (r tiered) Pay(s Sale) (int64, string, error) {
	if r.FirstOnly && s.FirstSaleAt != nil {
		return 0, WhyFirstSaleOnly, nil
	}
	const tier = 10000
	low, high := min(s.AmountCents, tier), max(s.AmountCents-tier, 0)
	v := new(big.Rat).Add(big.NewRat(low*10, 100), big.NewRat(high*20, 100))
	cents, err := RoundHalfAwayFromZero(v)
	return cents, "", err
}

// Adding a reward kind is a change in this package only: the table drives Decide with the hypothetical
// tiered reward through every rule Decide owns.
func TestDecideAHypotheticalReward(t *testing.T) {
	t.Parallel()
	sold := time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)
	first := time.Date(2025, 12, 1, 9, 0, 0, 0, time.UTC)
	terms := func(approval string, hold int) Terms {
		return Terms{Reward: tiered{FirstOnly: true}, HoldDays: hold, Approval: approval}
	}
	at := func(t time.Time) *time.Time { return &t }
	for _, tc := range []struct {
		name string
		in   Input
		want Outcome
	}{
		{"below the tier: 10 %",
			Input{Terms: terms(ApprovalManual, 30), Sale: Sale{AmountCents: 4905, Currency: "USD", OccurredAt: sold}, Now: sold},
			Outcome{Pays: true, AmountCents: 491, Currency: "USD", Status: StatusPending, AvailableOn: sold.AddDate(0, 0, 30)}},
		{"above the tier: 10 % of the first 100.00, 20 % of the rest",
			Input{Terms: terms(ApprovalManual, 30), Sale: Sale{AmountCents: 25000, Currency: "EUR", OccurredAt: sold}, Now: sold},
			Outcome{Pays: true, AmountCents: 4000, Currency: "EUR", Status: StatusPending, AvailableOn: sold.AddDate(0, 0, 30)}},
		{"its own reason to pay nothing",
			Input{Terms: terms(ApprovalAuto, 30), Sale: Sale{AmountCents: 25000, Currency: "EUR", OccurredAt: sold, FirstSaleAt: &first}, Now: sold},
			Outcome{Why: WhyFirstSaleOnly}},
		{"a banned partner's: made rejected, as any reward's",
			Input{Terms: terms(ApprovalAuto, 0), Sale: Sale{AmountCents: 25000, Currency: "USD", OccurredAt: sold}, PartnerBanned: true, Now: sold},
			Outcome{Pays: true, AmountCents: 4000, Currency: "USD", Status: StatusRejected, AvailableOn: sold, RejectedReason: RejectedBanned}},
		{"auto approval once the hold is over, as any reward's",
			Input{Terms: terms(ApprovalAuto, 30), Sale: Sale{AmountCents: 100, Currency: "VND", OccurredAt: sold}, Now: sold.AddDate(0, 0, 30)},
			Outcome{Pays: true, AmountCents: 10, Currency: "VND", Status: StatusApproved, AvailableOn: sold.AddDate(0, 0, 30),
				ApprovedAt: at(sold.AddDate(0, 0, 30))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decide(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.Pays && got.Terms.Reward != tc.in.Terms.Reward {
				t.Errorf("the outcome's terms carry reward %v, want the one that paid", got.Terms.Reward)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Outcome{}, "Terms")); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}
