package wire

import (
	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
)

// The answers for the resources webhooks tell of (leads, sales, commissions, payouts, partners, links),
// shared by the brand's routes (package manage), the partner portal's (package portal) and the webhooks'
// data (package webhookdata): one function per shape, so that they cannot differ.

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
		CreatedAt: p.CreatedAt, PaidAt: p.PaidAt, IsTest: p.IsTest}
}

// Payouts are payouts as the routes answer them.
func Payouts(ps []ledger.Payout) []gen.Payout {
	out := make([]gen.Payout, len(ps))
	for i, p := range ps {
		out[i] = Payout(p)
	}
	return out
}

// PayoutRun is a payout run's answer: its payouts and what it carried over.
func PayoutRun(r ledger.Run) gen.PayoutBatchEnvelope {
	carried := make([]gen.PayoutCarriedOver, len(r.CarriedOver))
	for i, c := range r.CarriedOver {
		carried[i] = gen.PayoutCarriedOver{PartnerId: c.PartnerID, Currency: c.Currency, AmountCents: c.AmountCents,
			Reason: gen.PayoutCarriedOverReason(c.Reason)}
	}
	return gen.PayoutBatchEnvelope{Data: Payouts(r.Payouts), CarriedOver: carried}
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
		ReferralUrl: l.ReferralURL(), CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, IsTest: l.IsTest}
}

// Links are referral links as the routes answer them.
func Links(list []programs.Link) []gen.Link {
	out := make([]gen.Link, len(list))
	for i, l := range list {
		out[i] = Link(l)
	}
	return out
}

// Partner is a partner in one program as the routes answer it.
func Partner(p programs.Partner) gen.Partner {
	return gen.Partner{Id: p.ID, Name: p.Name, Email: p.Email, ProgramId: p.ProgramID, PartnerProgramId: p.PartnerProgramID,
		Synthetic: p.Synthetic, CreatedAt: p.CreatedAt, Status: gen.PartnerStatus(p.Status), StatusReason: p.StatusReason,
		Stats: gen.PartnerStats{Clicks: p.Stats.Clicks, Leads: p.Stats.Leads, Sales: p.Stats.Sales}, IsTest: p.IsTest}
}

// Lead is a lead as the routes answer it.
func Lead(l leads.Lead) gen.Lead {
	return gen.Lead{Id: l.ID, EventType: gen.LeadEventTypeLead, ProgramId: l.ProgramID, Timestamp: l.Timestamp, ClickId: l.ClickID,
		SessionId: l.SessionID, PageUrl: l.PageURL, CustomerKey: l.CustomerKey, Converted: l.Converted, IsTest: l.IsTest,
		CreatedAt: l.CreatedAt}
}

// Sale is a sale as the routes answer it: its transaction_id under both names, transaction_id and the
// events list's processor_event_id.
func Sale(s sales.Sale) gen.Sale {
	return gen.Sale{Id: s.ID, EventType: gen.SaleEventTypeConversion, ProgramId: s.ProgramID, PartnerId: s.PartnerID,
		Timestamp: s.Timestamp, ClickId: s.ClickID, TransactionId: s.TransactionID, ProcessorEventId: s.TransactionID,
		AmountCents: s.AmountCents, Currency: s.Currency, RefundedAmountCents: s.RefundedAmountCents, SaleType: s.SaleType,
		PaymentStatus: s.PaymentStatus, IsRecurring: s.IsRecurring, IsTest: s.IsTest, CreatedAt: s.CreatedAt}
}
