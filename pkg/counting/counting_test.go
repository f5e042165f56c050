package counting

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCountingRules(t *testing.T) {
	t.Parallel()
	sale := func(f func(*SaleFacts)) Measures {
		s := SaleFacts{AmountCents: 4900, CommissionCents: 980}
		f(&s)
		return Sale(s)
	}
	for _, tt := range []struct {
		name      string
		got, want Measures
	}{
		{"a click counts once", Click(false, false), Measures{Clicks: 1}},
		{"a bot's click counts apart", Click(false, true), Measures{BotClicks: 1}},
		{"a test click counts nowhere", Click(true, false), Measures{}},
		{"a test bot counts nowhere", Click(true, true), Measures{}},
		{"a settled lead counts", LeadMeasures(Lead(false, false)), Measures{Leads: 1}},
		{"a provisional lead is listed only", LeadMeasures(Lead(false, true)), Measures{ProvisionalLeads: 1}},
		{"a test lead counts nowhere", LeadMeasures(Lead(true, false)), Measures{}},
		{"a provisional test lead counts nowhere", LeadMeasures(Lead(true, true)), Measures{}},
		{"settling a provisional lead moves it to counted",
			func() Measures {
				m := LeadMeasures(LeadProvisional).Negate()
				m.add(LeadMeasures(LeadCounted))
				return m
			}(), Measures{Leads: 1, ProvisionalLeads: -1}},
		{"a first sale converts its customer", sale(func(s *SaleFacts) { s.FirstSale = true }),
			Measures{Sales: 1, Customers: 1, RevenueCents: 4900, CommissionCents: 980}},
		{"a later sale", sale(func(*SaleFacts) {}), Measures{Sales: 1, RevenueCents: 4900, CommissionCents: 980}},
		{"a sale paying nothing", sale(func(s *SaleFacts) { s.CommissionCents = 0 }), Measures{Sales: 1, RevenueCents: 4900}},
		{"a rejected commission counts nothing", sale(func(s *SaleFacts) { s.CommissionRejected = true }),
			Measures{Sales: 1, RevenueCents: 4900}},
		{"a test sale counts nowhere", sale(func(s *SaleFacts) { s.Test = true; s.FirstSale = true }), Measures{}},
		{"a refund takes back revenue and commission", Refund(false, 2450, 490), Measures{RevenueCents: -2450, CommissionCents: -490}},
		{"a test refund takes back nothing", Refund(true, 2450, 490), Measures{}},
		{"a rejection takes back what counted", Rejected(false, 490), Measures{CommissionCents: -490}},
		{"a test rejection takes back nothing", Rejected(true, 490), Measures{}},
	} {
		if d := cmp.Diff(tt.want, tt.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, d)
		}
	}
}

func TestHourOf(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 4, 13, 47, 12, 999, time.FixedZone("x", -3*3600)) // 16:47 UTC
	if got, want := HourOf(at), time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC); got != want {
		t.Errorf("HourOf = %v, want %v (as a map key too)", got, want)
	}
}
