package commission

import (
	"fmt"
	"time"
)

// Commission statuses: one axis. A partial refund before a payout grows the reversed amount and keeps the
// status; reversed is a commission refunded in full before any payout.
const (
	StatusPending  = "pending"   // in its hold, or awaiting a member's approval
	StatusApproved = "approved"  // payable
	StatusInPayout = "in_payout" // in a payout not yet paid
	StatusPaid     = "paid"
	StatusRejected = "rejected" // pays nothing, ever
	StatusReversed = "reversed" // refunded in full before a payout
)

// Statuses lists the commission statuses, in their order of life.
var Statuses = []string{StatusPending, StatusApproved, StatusInPayout, StatusPaid, StatusRejected, StatusReversed}

// Approval modes of a program.
const (
	ApprovalAuto   = "auto"
	ApprovalManual = "manual"
)

// Why a sale pays nothing although attributed (Outcome.Why).
const (
	WhyFirstSaleOnly = "first_sale_only" // one-time terms, and the customer has bought before
	WhyDurationEnded = "duration_ended"  // recurring terms whose duration ended before this sale
)

// RejectedBanned is the reason of a commission made for a partner banned from the program.
const RejectedBanned = "partner banned"

// Terms are what a program pays and how it holds and approves what it pays.
type Terms struct {
	Type string // Percent, Fixed, RecurringPercent, RecurringFixed
	Rate string // decimal text: a percentage, or major units of the sale's currency
	// DurationMonths bounds the recurring types: sales within that many months of the customer's first sale
	// pay; nil pays every sale.
	DurationMonths *int
	HoldDays       int
	Approval       string // ApprovalAuto or ApprovalManual
}

// Sale is the event a commission is decided for.
type Sale struct {
	AmountCents int64
	Currency    string
	OccurredAt  time.Time
	// FirstSaleAt is the customer's first recorded sale before this one; nil when this is the first.
	FirstSaleAt *time.Time
}

// Input is everything a commission's outcome depends on: one value, read in the sale's one state read.
type Input struct {
	Terms         Terms
	Sale          Sale
	PartnerBanned bool      // the partner is banned from the program
	Now           time.Time // the server's clock when the sale is recorded
}

// Outcome is a commission decided: whether the sale pays and, when it does, the commission's amount, the
// status it is made in, when its hold ends, and the terms that paid it.
type Outcome struct {
	Pays bool
	// Why says why an attributed sale pays nothing (WhyFirstSaleOnly, WhyDurationEnded); "" when it pays.
	Why         string
	AmountCents int64
	Currency    string
	Status      string    // StatusPending, StatusApproved or StatusRejected
	AvailableOn time.Time // the end of its hold: the sale's time plus the hold
	// ApprovedAt is set when the commission is made approved (auto approval, hold already over): the
	// instant its hold ended.
	ApprovedAt     *time.Time
	RejectedReason string // set when made rejected
	Terms          Terms  // the terms that paid it
}

// Decide decides a sale's commission. One-time types pay on the customer's first sale only; recurring
// types on every sale, within DurationMonths of the first when set. The amount is Amount's. A partner
// banned from the program earns nothing: the commission is made rejected (RejectedBanned), so the sale's
// answer still shows it. Otherwise it is pending in its hold, which ends HoldDays after the sale; with
// auto approval a hold already over at Now makes it approved at once (dated when the hold ended).
func Decide(in Input) (Outcome, error) {
	t := in.Terms
	if !Valid(t.Type) {
		return Outcome{}, fmt.Errorf("commission type %q is not known", t.Type)
	}
	if first := in.Sale.FirstSaleAt; first != nil {
		if !Recurring(t.Type) {
			return Outcome{Why: WhyFirstSaleOnly}, nil
		}
		if t.DurationMonths != nil && !in.Sale.OccurredAt.Before(first.AddDate(0, *t.DurationMonths, 0)) {
			return Outcome{Why: WhyDurationEnded}, nil
		}
	}
	amount, err := Amount(t.Type, t.Rate, in.Sale.AmountCents, in.Sale.Currency)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Pays: true, AmountCents: amount, Currency: in.Sale.Currency, Status: StatusPending,
		AvailableOn: HoldEnds(in.Sale.OccurredAt, t.HoldDays), Terms: t}
	switch {
	case in.PartnerBanned:
		o.Status, o.RejectedReason = StatusRejected, RejectedBanned
	case t.Approval == ApprovalAuto && !o.AvailableOn.After(in.Now):
		at := o.AvailableOn
		o.Status, o.ApprovedAt = StatusApproved, &at
	}
	return o, nil
}

// HoldEnds is when a commission of an event at occurred, held holdDays, becomes approvable: whole UTC days
// later, at the same time of day.
func HoldEnds(occurred time.Time, holdDays int) time.Time {
	return occurred.UTC().AddDate(0, 0, holdDays)
}
