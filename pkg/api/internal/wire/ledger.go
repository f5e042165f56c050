package wire

import (
	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
)

// The ledger's and the links' answers, shared by the brand's routes (package manage) and the partner
// portal's (package portal).

// ListMeta is a list's meta: the next page's cursor (none at the end).
func ListMeta(next string) gen.ListMeta {
	if next == "" {
		return gen.ListMeta{}
	}
	return gen.ListMeta{NextCursor: &next}
}

// Commission is a ledger commission as the routes answer it.
func Commission(c ledger.Commission) gen.Commission {
	return gen.Commission{Id: c.ID, ProgramId: c.ProgramID, PartnerId: c.PartnerID, SaleId: c.SaleID, TransactionId: c.TransactionID,
		AmountCents: c.AmountCents, ReversedAmountCents: c.ReversedAmountCents, PayableCents: c.PayableCents, Currency: c.Currency,
		Status: gen.CommissionStatus(c.Status), AvailableOn: c.AvailableOn, ApprovedAt: c.ApprovedAt, RejectedReason: c.RejectedReason,
		PayoutId: c.PayoutID, PaidAt: c.PaidAt, ClawbackCents: c.ClawbackCents, IsTest: c.IsTest, CreatedAt: c.CreatedAt}
}

// Commissions are ledger commissions as the routes answer them.
func Commissions(cs []ledger.Commission) []gen.Commission {
	out := make([]gen.Commission, len(cs))
	for i, c := range cs {
		out[i] = Commission(c)
	}
	return out
}

// Payout is a payout as the routes answer it.
func Payout(p ledger.Payout) gen.Payout {
	return gen.Payout{Id: p.ID, ProgramId: p.ProgramID, PartnerId: p.PartnerID, PartnerName: p.PartnerName, PartnerEmail: p.PartnerEmail,
		Currency: p.Currency, AmountCents: p.AmountCents, CommissionCount: p.CommissionCount, ClawbackCents: p.ClawbackCents,
		Status: gen.PayoutStatus(p.Status), ExternalReference: p.ExternalReference, FailureReason: p.FailureReason,
		CreatedAt: p.CreatedAt, PaidAt: p.PaidAt}
}

// Payouts are payouts as the routes answer them.
func Payouts(ps []ledger.Payout) []gen.Payout {
	out := make([]gen.Payout, len(ps))
	for i, p := range ps {
		out[i] = Payout(p)
	}
	return out
}

// Balances are ledger balances as the routes answer them.
func Balances(bs []ledger.Balance) []gen.Balance {
	out := make([]gen.Balance, len(bs))
	for i, b := range bs {
		out[i] = gen.Balance{PartnerId: b.PartnerID, PartnerName: b.PartnerName, Currency: b.Currency,
			PendingCents: b.PendingCents, ApprovedCents: b.ApprovedCents, InPayoutCents: b.InPayoutCents, PaidCents: b.PaidCents,
			ClawbackOwedCents: b.ClawbackOwedCents}
	}
	return out
}

// Link is a referral link as the routes answer it.
func Link(l programs.Link) gen.Link {
	return gen.Link{Id: l.ID, ShortLink: l.ShortLink, PartnerId: l.PartnerID, ProgramId: l.ProgramID, Enabled: l.Enabled,
		ReferralUrl: l.ReferralURL(), CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// Links are referral links as the routes answer them.
func Links(list []programs.Link) []gen.Link {
	out := make([]gen.Link, len(list))
	for i, l := range list {
		out[i] = Link(l)
	}
	return out
}
