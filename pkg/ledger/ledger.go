// Package ledger owns what happens to a commission after its sale: the hold, approval or rejection,
// payouts, and the clawbacks a refund takes after payment. It owns the tables commissions,
// commission_clawbacks and payouts; the sale's and the refund's statements write commissions through
// its database functions (pkg/ledger/sql).
//
// Every cent of a commission is in one place at a time. A commission's payable amount (amount less
// reversed) is in exactly one bucket of its partner's balance in its currency, by status:
//
//	pending             → pending_cents (in its hold, or awaiting approval)
//	approved            → approved_cents (payable)
//	in_payout           → in_payout_cents
//	paid                → paid_cents
//	reversed, rejected  → nowhere (nothing payable, or nothing owed)
//
// so for every partner and currency the payable amounts of its non-rejected, non-test commissions add up
// to pending + approved + in_payout + paid, whatever runs at once. A refund before a commission is in a
// payout reduces it; after, the commission is never edited: the refund records a clawback that the
// partner owes until a payout nets it.
//
// With a program's approval `auto`, a commission is approved once its available_on has passed: every read
// here asks ledger_status (pkg/ledger/sql), which says so from that instant, and a background pass
// (AutoApprove) writes it down later. Times are the caller's clock (Now), never the database's.
package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/pagecursor"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Commission statuses: pkg/commission's, one axis.
const (
	StatusPending  = commission.StatusPending
	StatusApproved = commission.StatusApproved
	StatusInPayout = commission.StatusInPayout
	StatusPaid     = commission.StatusPaid
	StatusRejected = commission.StatusRejected
	StatusReversed = commission.StatusReversed
)

// Statuses lists the commission statuses, in their order of life.
var Statuses = commission.Statuses

// Payout statuses.
const (
	PayoutProcessing = "processing"
	PayoutPaid       = "paid"
	PayoutFailed     = "failed"
)

// PayoutStatuses lists the payout statuses.
var PayoutStatuses = []string{PayoutProcessing, PayoutPaid, PayoutFailed}

// Program approval modes (the setting and its range are pkg/programs').
const (
	ApprovalAuto   = programs.ApprovalAuto
	ApprovalManual = programs.ApprovalManual
)

// Limits of the routes' inputs.
const (
	MaxReason        = 500 // a rejection's or a failure's reason, in characters
	MaxReference     = 255 // a payout's external reference, in characters
	MaxBulkApprove   = 500 // commissions one bulk approval takes
	DefaultPageSize  = pagecursor.DefaultSize
	MaxPageSize      = pagecursor.MaxSize
	MaxPayoutMinimum = programs.MaxPayoutMinimum
	MaxHoldDays      = programs.MaxHoldDays
	DefaultHoldDays  = programs.DefaultHoldDays
)

// Errors of this package. A *ConflictError says why an action cannot be taken in the state found.
var (
	ErrCommissionNotFound = errors.New("commission not found")
	ErrPayoutNotFound     = errors.New("payout not found")
	ErrProgramNotFound    = errors.New("program not found")
)

// ConflictError refuses an action the commission's or payout's state does not allow (409 conflict).
type ConflictError struct{ Message string }

func (e *ConflictError) Error() string { return e.Message }

func conflict(format string, args ...any) error {
	return &ConflictError{Message: fmt.Sprintf(format, args...)}
}

// Commission is a commission as the routes show it. Status is the effective one (ledger_status).
type Commission struct {
	ID                  int64      `db:"id" json:"id"`
	ProgramID           int64      `db:"program_id" json:"program_id"`
	PartnerID           int64      `db:"partner_id" json:"partner_id"`
	SaleID              int64      `db:"sale_id" json:"sale_id"`
	TransactionID       string     `db:"transaction_id" json:"transaction_id"`
	AmountCents         int64      `db:"amount_cents" json:"amount_cents"`
	ReversedAmountCents int64      `db:"reversed_amount_cents" json:"reversed_amount_cents"`
	PayableCents        int64      `db:"payable_cents" json:"payable_cents"`
	Currency            string     `db:"currency" json:"currency"`
	Status              string     `db:"status" json:"status"`
	AvailableOn         *time.Time `db:"available_on" json:"available_on"`
	ApprovedAt          *time.Time `db:"approved_at" json:"approved_at"`
	RejectedReason      *string    `db:"rejected_reason" json:"rejected_reason"`
	PayoutID            *int64     `db:"payout_id" json:"payout_id"`
	PaidAt              *time.Time `db:"paid_at" json:"paid_at"`
	ClawbackCents       int64      `db:"clawback_cents" json:"clawback_cents"`
	IsTest              bool       `db:"is_test" json:"is_test"`
	CreatedAt           time.Time  `db:"created_at" json:"created_at"`
}

// Balance is one partner's money in one currency, by bucket.
type Balance struct {
	PartnerID         int64  `db:"partner_id" json:"partner_id"`
	PartnerName       string `db:"partner_name" json:"partner_name"`
	Currency          string `db:"currency" json:"currency"`
	PendingCents      int64  `db:"pending_cents" json:"pending_cents"`
	ApprovedCents     int64  `db:"approved_cents" json:"approved_cents"`
	InPayoutCents     int64  `db:"in_payout_cents" json:"in_payout_cents"`
	PaidCents         int64  `db:"paid_cents" json:"paid_cents"`
	ClawbackOwedCents int64  `db:"clawback_owed_cents" json:"clawback_owed_cents"`
}

// Payout is a payout as the routes show it.
type Payout struct {
	ID                int64      `db:"id" json:"id"`
	ProgramID         int64      `db:"program_id" json:"program_id"`
	PartnerID         int64      `db:"partner_id" json:"partner_id"`
	PartnerName       string     `db:"partner_name" json:"partner_name"`
	PartnerEmail      string     `db:"partner_email" json:"partner_email"`
	Currency          string     `db:"currency" json:"currency"`
	AmountCents       int64      `db:"amount_cents" json:"amount_cents"`
	CommissionCount   int        `db:"commission_count" json:"commission_count"`
	ClawbackCents     int64      `db:"clawback_cents" json:"clawback_cents"`
	Status            string     `db:"status" json:"status"`
	ExternalReference *string    `db:"external_reference" json:"external_reference"`
	FailureReason     *string    `db:"failure_reason" json:"failure_reason"`
	CreatedAt         time.Time  `db:"created_at" json:"created_at"`
	PaidAt            *time.Time `db:"paid_at" json:"paid_at"`
	// IsTest is false for every payout (test-mode commissions are never paid): only a webhook's sample
	// (webhooks.Sample) sets it, so that a receiver can tell the sample from a real payout.
	IsTest bool `db:"-" json:"is_test"`
}
