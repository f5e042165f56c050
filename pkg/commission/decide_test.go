package commission

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	sold := time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)
	first := time.Date(2025, 12, 1, 9, 0, 0, 0, time.UTC)
	months := func(n int) *int { return &n }
	at := func(t time.Time) *time.Time { return &t }
	auto := func(typ, rate string, hold int) Terms {
		return Terms{Type: typ, Rate: rate, HoldDays: hold, Approval: ApprovalAuto}
	}
	tests := []struct {
		name string
		in   Input
		want Outcome
	}{
		{"first sale, percent, in hold",
			Input{Terms: auto(Percent, "20", 30), Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold}, Now: sold},
			Outcome{Pays: true, AmountCents: 980, Currency: "USD", Status: StatusPending,
				AvailableOn: sold.AddDate(0, 0, 30), Terms: auto(Percent, "20", 30)}},
		{"one-time terms pay the first sale only",
			Input{Terms: auto(Percent, "20", 30), Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold, FirstSaleAt: &first}, Now: sold},
			Outcome{Why: WhyFirstSaleOnly}},
		{"fixed in the sale's currency",
			Input{Terms: auto(Fixed, "25", 0), Sale: Sale{AmountCents: 100, Currency: "VND", OccurredAt: sold}, Now: sold},
			Outcome{Pays: true, AmountCents: 25, Currency: "VND", Status: StatusApproved, AvailableOn: sold,
				ApprovedAt: at(sold), Terms: auto(Fixed, "25", 0)}},
		{"recurring, lifetime, a later sale",
			Input{Terms: auto(RecurringPercent, "10", 30), Sale: Sale{AmountCents: 1000, Currency: "EUR", OccurredAt: sold, FirstSaleAt: &first}, Now: sold},
			Outcome{Pays: true, AmountCents: 100, Currency: "EUR", Status: StatusPending, AvailableOn: sold.AddDate(0, 0, 30),
				Terms: auto(RecurringPercent, "10", 30)}},
		{"recurring within its duration",
			Input{Terms: Terms{Type: RecurringFixed, Rate: "5", DurationMonths: months(4), HoldDays: 30, Approval: ApprovalManual},
				Sale: Sale{AmountCents: 1000, Currency: "USD", OccurredAt: first.AddDate(0, 4, 0).Add(-time.Second), FirstSaleAt: &first}, Now: sold},
			Outcome{Pays: true, AmountCents: 500, Currency: "USD", Status: StatusPending,
				AvailableOn: first.AddDate(0, 4, 30).Add(-time.Second),
				Terms:       Terms{Type: RecurringFixed, Rate: "5", DurationMonths: months(4), HoldDays: 30, Approval: ApprovalManual}}},
		{"recurring at the end of its duration pays nothing",
			Input{Terms: Terms{Type: RecurringFixed, Rate: "5", DurationMonths: months(4), HoldDays: 30, Approval: ApprovalAuto},
				Sale: Sale{AmountCents: 1000, Currency: "USD", OccurredAt: first.AddDate(0, 4, 0), FirstSaleAt: &first}, Now: sold},
			Outcome{Why: WhyDurationEnded}},
		{"a banned partner's commission is made rejected",
			Input{Terms: auto(Percent, "20", 0), Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold},
				PartnerBanned: true, Now: sold},
			Outcome{Pays: true, AmountCents: 980, Currency: "USD", Status: StatusRejected, AvailableOn: sold,
				RejectedReason: RejectedBanned, Terms: auto(Percent, "20", 0)}},
		{"auto approval: a hold already over approves at once, dated when it ended",
			Input{Terms: auto(Percent, "20", 30), Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold},
				Now: sold.AddDate(0, 0, 31)},
			Outcome{Pays: true, AmountCents: 980, Currency: "USD", Status: StatusApproved, AvailableOn: sold.AddDate(0, 0, 30),
				ApprovedAt: at(sold.AddDate(0, 0, 30)), Terms: auto(Percent, "20", 30)}},
		{"auto approval: the hold's last instant approves",
			Input{Terms: auto(Percent, "20", 30), Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold},
				Now: sold.AddDate(0, 0, 30)},
			Outcome{Pays: true, AmountCents: 980, Currency: "USD", Status: StatusApproved, AvailableOn: sold.AddDate(0, 0, 30),
				ApprovedAt: at(sold.AddDate(0, 0, 30)), Terms: auto(Percent, "20", 30)}},
		{"manual approval never approves by itself",
			Input{Terms: Terms{Type: Percent, Rate: "20", HoldDays: 0, Approval: ApprovalManual},
				Sale: Sale{AmountCents: 4900, Currency: "USD", OccurredAt: sold}, Now: sold.AddDate(1, 0, 0)},
			Outcome{Pays: true, AmountCents: 980, Currency: "USD", Status: StatusPending, AvailableOn: sold,
				Terms: Terms{Type: Percent, Rate: "20", HoldDays: 0, Approval: ApprovalManual}}},
		{"the hold counts whole UTC days from the sale's instant",
			Input{Terms: auto(Percent, "20", 1),
				Sale: Sale{AmountCents: 100, Currency: "USD", OccurredAt: time.Date(2026, 3, 28, 23, 30, 0, 0, time.FixedZone("x", 2*3600))},
				Now:  sold},
			Outcome{Pays: true, AmountCents: 20, Currency: "USD", Status: StatusPending,
				AvailableOn: time.Date(2026, 3, 29, 21, 30, 0, 0, time.UTC), Terms: auto(Percent, "20", 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Decide(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Decide (-want +got):\n%s", d)
			}
		})
	}
	for _, bad := range []Terms{{Type: "tiered", Rate: "5"}, {Type: Percent, Rate: "0"}, {Type: Percent, Rate: "x"}} {
		if _, err := Decide(Input{Terms: bad, Sale: Sale{AmountCents: 100, Currency: "USD", OccurredAt: sold}}); err == nil {
			t.Errorf("Decide with terms %+v: no error", bad)
		}
	}
}

func TestCheckHold(t *testing.T) {
	t.Parallel()
	ends := time.Date(2026, 4, 9, 15, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		now     time.Time
		release bool
		want    string // "" when approvable
	}{
		{"after the hold", ends.Add(time.Second), false, ""},
		{"at the hold's end", ends, false, ""},
		{"in the hold", ends.Add(-time.Second), false,
			"Commission 42 is in its hold until 2026-04-09T15:04:05Z; approve it then, or release it early"},
		{"in the hold, released", ends.Add(-time.Hour), true, ""},
	} {
		err := CheckHold(42, ends, tt.now, tt.release)
		got := ""
		if err != nil {
			got = err.Error()
			var h *HoldError
			if !errors.As(err, &h) || h.ID != 42 || !h.Until.Equal(ends) {
				t.Errorf("%s: error %#v is not the HoldError of commission 42 until %s", tt.name, err, ends)
			}
		}
		if got != tt.want {
			t.Errorf("%s: CheckHold = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	months := func(n int) *int { return &n }
	all := []string{"USD", "EUR", "VND"}
	for _, tt := range []struct {
		terms   Terms
		minimum int64
		want    string
	}{
		{Terms{Type: Percent, Rate: "20.0000", HoldDays: 30, Approval: ApprovalAuto}, 0,
			"Pays 20% of a customer's first sale. Commissions are held 30 days, then approved automatically. Payouts of any amount."},
		{Terms{Type: RecurringPercent, Rate: "12.5000", DurationMonths: months(12), HoldDays: 1, Approval: ApprovalManual}, 5000,
			"Pays 12.5% of every sale of a customer for 12 months after their first. Commissions are held 1 day, then approved by the brand. Payouts from 50.00 USD, 50.00 EUR or 5000 VND."},
		{Terms{Type: RecurringFixed, Rate: "25", DurationMonths: months(1), HoldDays: 0, Approval: ApprovalAuto}, 1,
			"Pays 25 in the sale's currency for every sale of a customer for 1 month after their first. Commissions are not held and are approved automatically. Payouts from 0.01 USD, 0.01 EUR or 1 VND."},
		{Terms{Type: RecurringPercent, Rate: "30", HoldDays: 14, Approval: ApprovalAuto}, 0,
			"Pays 30% of every sale of a customer. Commissions are held 14 days, then approved automatically. Payouts of any amount."},
		{Terms{Type: Fixed, Rate: "9.9900", HoldDays: 2, Approval: ApprovalManual}, 0,
			"Pays 9.99 in the sale's currency for a customer's first sale. Commissions are held 2 days, then approved by the brand. Payouts of any amount."},
	} {
		if got := Describe(tt.terms, tt.minimum, all); got != tt.want {
			t.Errorf("Describe(%+v, %d):\n got %q\nwant %q", tt.terms, tt.minimum, got, tt.want)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cents    int64
		currency string
		want     string
	}{
		{1250, "USD", "12.50"}, {5, "EUR", "0.05"}, {0, "USD", "0.00"}, {-1250, "USD", "-12.50"},
		{125000, "VND", "125000"}, {-7, "VND", "-7"},
	} {
		if got := FormatAmount(tt.cents, tt.currency); got != tt.want {
			t.Errorf("FormatAmount(%d, %s) = %q, want %q", tt.cents, tt.currency, got, tt.want)
		}
	}
}
