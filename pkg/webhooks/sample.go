package webhooks

import (
	"time"

	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
)

// Sample is the resource of a test event of type t (POST …/test): a made-up resource of the type, with
// is_test true and ids 0, so that a receiver can tell it from a real one and never books it. It is made of
// the owners' own types and shaped by the same Shape as real events, so a sample cannot drift from what
// real events carry. An unknown type gives a Resource of no resource.
func Sample(t string, programID int64, now time.Time) Resource {
	at := now.UTC().Truncate(time.Second)
	clickID, customerKey, transactionID := "test_click", "test_customer", "txn_test"
	r := Resource{Type: t, IsTest: true}
	commission := func(status string) *ledger.Commission {
		return &ledger.Commission{ProgramID: programID, TransactionID: transactionID, AmountCents: 1500, PayableCents: 1500,
			Currency: "USD", Status: status, AvailableOn: &at, IsTest: true, CreatedAt: at}
	}
	sale := &sales.Sale{ProgramID: programID, Timestamp: at, ClickID: &clickID, TransactionID: transactionID, AmountCents: 10000,
		Currency: "USD", SaleType: "payment", PaymentStatus: "paid", IsTest: true, CreatedAt: at}
	payout := func(status string) *ledger.Payout {
		p := &ledger.Payout{ProgramID: programID, PartnerName: "Test Partner", PartnerEmail: "partner@example.com",
			Currency: "USD", AmountCents: 1500, CommissionCount: 1, Status: status, CreatedAt: at, IsTest: true}
		switch status {
		case ledger.PayoutPaid:
			reference := "test-reference"
			p.ExternalReference, p.PaidAt = &reference, &at
		case ledger.PayoutFailed:
			reason := "test failure"
			p.FailureReason = &reason
		}
		return p
	}
	switch t {
	case LeadCreated:
		r.Lead = &leads.Lead{ProgramID: programID, Timestamp: at, ClickID: &clickID, CustomerKey: &customerKey, IsTest: true,
			CreatedAt: at}
	case SaleCreated:
		r.Sale = sale
	case SaleRefunded:
		sale.RefundedAmountCents = sale.AmountCents
		r.Sale = sale
		r.Refund = &sales.RefundRecord{Reason: sales.ReasonRefund, AmountCents: sale.AmountCents, CommissionReversedCents: 1500,
			CreatedAt: at}
	case CommissionCreated:
		r.Commission = commission(ledger.StatusPending)
	case CommissionUpdated:
		c := commission(ledger.StatusApproved)
		c.ApprovedAt = &at
		r.Commission, r.PreviousStatus = c, ledger.StatusPending
	case PayoutCreated:
		r.Payout = payout(ledger.PayoutProcessing)
	case PayoutPaid:
		r.Payout = payout(ledger.PayoutPaid)
	case PayoutFailed:
		r.Payout = payout(ledger.PayoutFailed)
	case PartnerCreated, PartnerUpdated:
		r.Partner = &programs.Partner{Name: "Test Partner", Email: "partner@example.com", ProgramID: programID,
			Status: programs.StatusApproved, CreatedAt: at, IsTest: true}
	case LinkUpdated:
		r.Link = &programs.Link{ShortLink: "test", ProgramID: &programID, Domain: ptr("example.com"), CreatedAt: at,
			UpdatedAt: at, IsTest: true}
	}
	return r
}

func ptr[T any](v T) *T { return &v }
