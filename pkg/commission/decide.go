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
	// Reward is what the terms pay, when it is not one of the interface's types: nil pays as Type, Rate and
	// DurationMonths say (RewardOf).
	Reward Reward
}

// A Reward is one way of paying for an event: what it pays for a sale in the sale's minor units, or why
// it pays nothing (a Why… constant). The interface's four commission types are one Reward (RewardOf). A new
// kind of reward is a new Reward in this package: Decide applies the rest of the rules to what it pays (a
// banned partner's commission made rejected, the hold, auto approval), the sale's writers store what
// Decide decided, and the ledger, the counts and the webhooks take the commission as they take any
// (TestDecideAHypotheticalReward shows one).
type Reward interface {
	Pay(s Sale) (cents int64, why string, err error)
}

// RewardOf is the reward the interface's commission types describe: one-time types pay the customer's
// first sale only; recurring types every sale, within DurationMonths of the first when set; the amount is
// Amount's.
func RewardOf(t Terms) (Reward, error) {
	if t.Reward != nil {
		return t.Reward, nil
	}
	if !Valid(t.Type) {
		return nil, fmt.Errorf("commission type %q is not known", t.Type)
	}
	return typeReward{typ: t.Type, rate: t.Rate, months: t.DurationMonths}, nil
}

// typeReward is the interface's commission types as a Reward.
type typeReward struct {
	typ, rate string
	months    *int
}

func (r typeReward) Pay(s Sale) (int64, string, error) {
	if first := s.FirstSaleAt; first != nil {
		if !Recurring(r.typ) {
			return 0, WhyFirstSaleOnly, nil
		}
		if r.months != nil && !s.OccurredAt.Before(first.AddDate(0, *r.months, 0)) {
			return 0, WhyDurationEnded, nil
		}
	}
	amount, err := Amount(r.typ, r.rate, s.AmountCents, s.Currency)
	return amount, "", err
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

// Decide decides a sale's commission: what the terms' reward pays (RewardOf: one-time types on the
// customer's first sale only, recurring types on every sale within DurationMonths of the first when set,
// the amount Amount's). A partner banned from the program earns nothing: the commission is made rejected
// (RejectedBanned), so the sale's answer still shows it. Otherwise it is pending in its hold, which ends
// HoldDays after the sale; with auto approval a hold already over at Now makes it approved at once (dated
// when the hold ended).
func Decide(in Input) (Outcome, error) {
	t := in.Terms
	reward, err := RewardOf(t)
	if err != nil {
		return Outcome{}, err
	}
	amount, why, err := reward.Pay(in.Sale)
	if err != nil {
		return Outcome{}, err
	}
	if why != "" {
		return Outcome{Why: why}, nil
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
