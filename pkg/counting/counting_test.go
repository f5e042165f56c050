package counting

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCountingRules(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 4, 13, 47, 12, 0, time.FixedZone("x", -3*3600)) // 16:47 UTC
	hour := time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC)
	k := Delta{ProgramID: 7, PartnerID: 3, Hour: hour}
	with := func(f func(*Delta)) Delta { d := k; f(&d); return d }
	sale := func(f func(*SaleFacts)) Delta {
		s := SaleFacts{ProgramID: 7, PartnerID: 3, At: at, Currency: "EUR", AmountCents: 4900, CommissionCents: 980}
		f(&s)
		return Sale(s)
	}
	eur := func(f func(*Delta)) Delta { d := k; d.Currency = "EUR"; f(&d); return d }
	for _, tt := range []struct {
		name      string
		got, want Delta
	}{
		{"a click counts once", Click(7, 3, at, false, false), with(func(d *Delta) { d.Clicks = 1 })},
		{"a bot's click counts apart", Click(7, 3, at, false, true), with(func(d *Delta) { d.BotClicks = 1 })},
		{"a test click counts nowhere", Click(7, 3, at, true, false), k},
		{"a test bot counts nowhere", Click(7, 3, at, true, true), k},
		{"a settled lead counts", Lead(LeadChange{ProgramID: 7, PartnerID: 3, At: at}), with(func(d *Delta) { d.Leads = 1 })},
		{"a provisional lead is listed only", Lead(LeadChange{ProgramID: 7, PartnerID: 3, At: at, Provisional: true}),
			with(func(d *Delta) { d.ProvisionalLeads = 1 })},
		{"a provisional lead settling moves to counted", Lead(LeadChange{ProgramID: 7, PartnerID: 3, At: at, Settles: true}),
			with(func(d *Delta) { d.Leads, d.ProvisionalLeads = 1, -1 })},
		{"a test lead counts nowhere", Lead(LeadChange{ProgramID: 7, PartnerID: 3, At: at, Test: true}), k},
		{"a first sale converts its customer", sale(func(s *SaleFacts) { s.FirstSale = true }),
			eur(func(d *Delta) { d.Sales, d.Customers, d.RevenueCents, d.CommissionCents = 1, 1, 4900, 980 })},
		{"a later sale", sale(func(*SaleFacts) {}),
			eur(func(d *Delta) { d.Sales, d.RevenueCents, d.CommissionCents = 1, 4900, 980 })},
		{"a sale paying nothing", sale(func(s *SaleFacts) { s.CommissionCents = 0 }),
			eur(func(d *Delta) { d.Sales, d.RevenueCents = 1, 4900 })},
		{"a rejected commission counts nothing", sale(func(s *SaleFacts) { s.CommissionRejected = true }),
			eur(func(d *Delta) { d.Sales, d.RevenueCents = 1, 4900 })},
		{"a test sale counts nowhere", sale(func(s *SaleFacts) { s.Test = true; s.FirstSale = true }), eur(func(*Delta) {})},
		{"a refund takes back revenue and commission", Refund(7, 3, at, "EUR", false, 2450, 490),
			eur(func(d *Delta) { d.RevenueCents, d.CommissionCents = -2450, -490 })},
		{"a test refund takes back nothing", Refund(7, 3, at, "EUR", true, 2450, 490), eur(func(*Delta) {})},
		{"a rejection takes back what counted", Rejected(7, 3, at, "EUR", false, 490),
			eur(func(d *Delta) { d.CommissionCents = -490 })},
	} {
		if d := cmp.Diff(tt.want, tt.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	h := time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC)
	got := Merge(
		Delta{ProgramID: 2, Hour: h, PartnerID: 1, Clicks: 1},
		Delta{ProgramID: 1, Hour: h, PartnerID: 1, Currency: "USD", Sales: 1, RevenueCents: 100},
		Delta{ProgramID: 2, Hour: h, PartnerID: 1, Clicks: 1, BotClicks: 1},
		Delta{ProgramID: 1, Hour: h, PartnerID: 1, Currency: "USD", RevenueCents: -100},
		Delta{ProgramID: 1, Hour: h, PartnerID: 1, Leads: 1, ProvisionalLeads: -1},
		Delta{ProgramID: 1, Hour: h, PartnerID: 1, ProvisionalLeads: 1},
		Delta{ProgramID: 3, Hour: h}, // adds nothing
	)
	want := []Delta{
		{ProgramID: 1, Hour: h, PartnerID: 1, Leads: 1},
		{ProgramID: 1, Hour: h, PartnerID: 1, Currency: "USD", Sales: 1},
		{ProgramID: 2, Hour: h, PartnerID: 1, Clicks: 2, BotClicks: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Merge (-want +got):\n%s", d)
	}
}
