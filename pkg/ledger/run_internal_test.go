package ledger

import (
	"reflect"
	"testing"
)

// The payout run's rule, table-tested: what is paid and what is carried over, and why.
func TestDecideRun(t *testing.T) {
	t.Parallel()
	g := func(partner int64, currency string, gross, owed int64, commissions int) *group {
		x := &group{partnerID: partner, currency: currency, gross: gross, owed: owed}
		for i := range commissions {
			x.commissions = append(x.commissions, int64(i+1))
		}
		if owed > 0 {
			x.clawbacks = []int64{1}
		}
		return x
	}
	for _, tc := range []struct {
		name    string
		minimum int64
		groups  []*group
		due     []string // "partner currency"
		carried []CarriedOver
	}{
		{"no minimum: every positive total is paid", 0,
			[]*group{g(2, "USD", 500, 0, 1), g(1, "EUR", 1, 0, 1)}, []string{"1 EUR", "2 USD"}, []CarriedOver{}},
		{"at the minimum paid, under it carried", 1000,
			[]*group{g(1, "USD", 1000, 0, 2), g(2, "EUR", 1470, 0, 1), g(3, "EUR", 999, 0, 1)}, []string{"1 USD", "2 EUR"},
			[]CarriedOver{{PartnerID: 3, Currency: "EUR", AmountCents: 999, Reason: CarriedBelowMinimum}}},
		{"clawbacks count against the minimum", 1000,
			[]*group{g(1, "USD", 1200, 300, 1)}, nil,
			[]CarriedOver{{PartnerID: 1, Currency: "USD", AmountCents: 900, Reason: CarriedBelowMinimum}}},
		{"clawbacks that take it all", 0,
			[]*group{g(1, "USD", 300, 300, 1), g(2, "USD", 100, 400, 1)}, nil,
			[]CarriedOver{{PartnerID: 1, Currency: "USD", AmountCents: 0, Reason: CarriedOwed},
				{PartnerID: 2, Currency: "USD", AmountCents: -300, Reason: CarriedOwed}}},
		{"owed with nothing approved: neither", 0, []*group{g(1, "USD", 0, 500, 0)}, nil, []CarriedOver{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := map[[2]string]*group{}
			for i, x := range tc.groups {
				groups[[2]string{string(rune('a' + i)), x.currency}] = x
			}
			due, carried := decideRun(groups, tc.minimum)
			var got []string
			for _, d := range due {
				got = append(got, string(rune('0'+d.partnerID))+" "+d.currency)
			}
			if !reflect.DeepEqual(got, tc.due) {
				t.Errorf("due = %v, want %v", got, tc.due)
			}
			if !reflect.DeepEqual(carried, tc.carried) {
				t.Errorf("carried = %+v, want %+v", carried, tc.carried)
			}
		})
	}
}
