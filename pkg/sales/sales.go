// Package sales records sales with their commissions and takes refunds. A sale and its commission are
// written in one transaction after every check has passed, so a refused sale records nothing; the
// transaction_id (stored as processor_event_id) is an idempotency key within the sale's program: two
// programs may use the same id, and neither sees the other's sale.
package sales

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/attribution"
)

// Errors, one per documented refusal.
var (
	ErrCustomerNotFound = errors.New("customer not found")
	ErrOtherProgram     = errors.New("no affiliate attribution for this customer in this program")
	ErrNoPartnerProgram = errors.New("no partner-program relationship for this customer")
	ErrNoPartner        = errors.New("customer has no partner")
	ErrProgramNotFound  = errors.New("program not found")
	// ErrOccurredAtRequired is a caller's mistake: Input.OccurredAt must be set.
	ErrOccurredAtRequired = errors.New("sale input without occurred_at")
)

// DuplicateError means the transaction_id is already recorded in the sale's program.
type DuplicateError struct {
	SaleID    int64
	ProgramID int64
}

func (e *DuplicateError) Error() string {
	return fmt.Sprintf("transaction already recorded as sale %d", e.SaleID)
}

// CommissionError means the commission could not be computed or stored (nothing was recorded).
type CommissionError struct{ Err error }

func (e *CommissionError) Error() string { return "create commission: " + e.Err.Error() }
func (e *CommissionError) Unwrap() error { return e.Err }

// Sources of a sale.
const (
	SourceAPI     = "api"
	SourceWebhook = "webhook"
	SourceCLITest = "cli_test"
)

// Input is one reported sale, already validated for shape.
type Input struct {
	ProgramID     int64
	TransactionID string
	AmountCents   int64
	// Currency is an ISO 4217 code; "" is the program's default currency. One the program does not list
	// is refused (CurrencyError), in the words CurrencyAsSent gives when set (the code as the request
	// wrote it).
	Currency             string
	CurrencyAsSent       string
	CustomerKey          string
	ClickID              string
	OccurredAt           time.Time // required: the caller's clock when the sale names no time
	Provider             string
	ProviderPaymentID    string
	Livemode             *bool
	SaleType             string
	IsRecurring          bool
	EventName            string
	SubscriptionID       string
	SubscriptionInterval string
	Test                 bool
	Source               string
}

// CurrencyError refuses a sale in a currency its program does not list (422 unsupported_currency, with
// Supported, the program's list).
type CurrencyError struct {
	Currency  string // as sent, when the request said how
	Supported []string
}

func (e *CurrencyError) Error() string { return "currency " + e.Currency + " is not supported" }

// Commission is a sale's commission.
type Commission struct {
	ID                  int64  `db:"id"`
	AmountCents         int64  `db:"amount_cents"`
	ReversedAmountCents int64  `db:"reversed_amount_cents"`
	Currency            string `db:"currency"`
	Status              string `db:"status"` // effective (pkg/ledger)
	// ClawbackCents is what refunds after the commission entered a payout took back (pkg/ledger).
	ClawbackCents int64 `db:"clawback_cents"`
}

// Attribution says how a sale was attributed.
type Attribution struct {
	ClickID   *string
	PartnerID *int64
	ProgramID int64
}

// Result is a recorded sale, or (Window.Expired) a payment outside the attribution window, for which
// nothing was recorded.
type Result struct {
	SaleID      int64
	Commission  *Commission
	Attribution Attribution
	Window      attribution.WindowCheck
	Currency    string // the sale's: as sent, else the program's default
}

// Record checks and records one sale and its commission, without waiting to share a batch (payment
// webhooks, synthetic chains, tests); the sale route uses a Recorder. See record for how.
func Record(ctx context.Context, dbx *sqlx.DB, log *slog.Logger, now func() time.Time, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	record(ctx, dbx, log, now, []*job{j})
	return j.res, j.err
}

// Providers are the payment providers a sale may name.
var Providers = []string{"stripe", "paddle", "lemonsqueezy", "chargebee", "recurly", "braintree", "paypal", "adyen",
	"square", "shopify", "app_store", "google_play", "manual", "other"}

// MaxAmountCents bounds amount_cents and refund_amount_cents (docs/rules.md#bad-input-abuse-and-faults):
// 10^12 minor units, far from overflow in any arithmetic on them.
const MaxAmountCents int64 = 1_000_000_000_000

// MaxAge and MaxFuture bound a sale's occurred_at.
const (
	MaxAge    = 30 * 24 * time.Hour
	MaxFuture = 5 * time.Minute
)
