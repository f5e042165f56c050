package programs

import (
	"github.com/lib/pq"
	"github.com/reftrack/reftrack/pkg/commission"
)

// Terms are a program's terms as stored: what pkg/commission decides a commission with, and what every
// view of the program tells in words (Describe).
type Terms struct {
	CommissionType     string `db:"commission_type"`
	CommissionRate     string `db:"commission_rate"` // decimal text, never a float
	DurationMonths     *int   `db:"commission_duration_months"`
	HoldDays           int    `db:"hold_days"`
	CommissionApproval string `db:"commission_approval"`
	PayoutMinimumCents int64  `db:"payout_minimum_cents"`
	// Currencies are the program's: the payout minimum is told in each.
	Currencies pq.StringArray `db:"currencies"`
}

// TermsColumns selects Terms from the programs table known as alias in the query, named as Terms reads
// them.
func TermsColumns(alias string) string {
	a := alias + "."
	return a + "commission_type, " + a + "commission_rate::text AS commission_rate, " + a + "commission_duration_months, " +
		a + "hold_days, " + a + "commission_approval, " + a + "payout_minimum_cents, " + a + "currencies"
}

// Commission is what pkg/commission decides a commission with.
func (t Terms) Commission() commission.Terms {
	return commission.Terms{Type: t.CommissionType, Rate: t.CommissionRate, DurationMonths: t.DurationMonths,
		HoldDays: t.HoldDays, Approval: t.CommissionApproval}
}

// Describe is the terms in words: the one sentence the dashboard, the partner portal, the invitation mail
// and an open program's page show (commission.Describe).
func (t Terms) Describe() string {
	currencies := []string(t.Currencies)
	if len(currencies) == 0 {
		currencies = commission.DefaultCurrencies
	}
	return commission.Describe(t.Commission(), t.PayoutMinimumCents, currencies)
}

// Terms are the program's terms.
func (p Program) Terms() Terms {
	return Terms{CommissionType: p.CommissionType, CommissionRate: p.CommissionRate, DurationMonths: p.DurationMonths,
		HoldDays: p.HoldDays, CommissionApproval: p.CommissionApproval, PayoutMinimumCents: p.PayoutMinimumCents,
		Currencies: p.Currencies}
}
