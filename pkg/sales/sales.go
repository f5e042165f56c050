// Package sales records sales with their commissions and takes refunds. A sale and its commission are
// written in one transaction after every check has passed, so a refused sale records nothing; the
// transaction_id (stored as processor_event_id) is an idempotency key within the sale's program: two
// programs may use the same id, and neither sees the other's sale.
package sales

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/programs"
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
	ProgramID            int64
	TransactionID        string
	AmountCents          int64
	Currency             string
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

// Commission is a sale's commission.
type Commission struct {
	ID                  int64  `db:"id"`
	AmountCents         int64  `db:"amount_cents"`
	ReversedAmountCents int64  `db:"reversed_amount_cents"`
	Currency            string `db:"currency"`
	Status              string `db:"status"`
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
}

// Record checks and records a sale and its commission.
func Record(ctx context.Context, dbx *sqlx.DB, log *slog.Logger, in Input) (Result, error) {
	if err := attribution.CheckKey(in.CustomerKey); err != nil {
		return Result{}, err
	}
	if err := duplicate(ctx, dbx, in.ProgramID, in.TransactionID); err != nil {
		return Result{}, err
	}
	if in.OccurredAt.IsZero() {
		return Result{}, ErrOccurredAtRequired
	}
	if in.SaleType == "" {
		in.SaleType = "payment"
	}
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	program, err := programs.Get(ctx, tx, in.ProgramID)
	if errors.Is(err, programs.ErrNotFound) {
		return Result{}, ErrProgramNotFound
	}
	if err != nil {
		return Result{}, err
	}
	cust, err := customer(ctx, tx, in)
	if err != nil {
		return Result{}, err
	}
	if cust.PartnerProgramID == nil {
		return Result{}, ErrNoPartnerProgram
	}
	if cust.PartnerID == nil {
		return Result{}, ErrNoPartner
	}
	res := Result{Attribution: Attribution{ClickID: cust.ClickID, PartnerID: cust.PartnerID, ProgramID: in.ProgramID}}
	if res.Window = attribution.CheckWindow(cust, program.AttributionWindowDays, in.OccurredAt); res.Window.Expired {
		return res, nil // rolled back: nothing recorded, the same transaction_id may come again
	}
	amount, pays, err := commissionFor(ctx, tx, program, cust, in)
	if err != nil {
		return Result{}, &CommissionError{Err: err}
	}

	test := in.Test || cust.IsTest
	err = tx.GetContext(ctx, &res.SaleID, `INSERT INTO sales (program_id, customer_id, partner_id, click_ref, click_id,
		processor_event_id, amount_cents, currency, sale_type, is_recurring, provider, provider_payment_id, livemode,
		event_name, subscription_id, subscription_interval, source, sale_date, is_test)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
		ON CONFLICT (program_id, processor_event_id) DO NOTHING RETURNING id`,
		in.ProgramID, cust.ID, *cust.PartnerID, cust.ClickRef, cust.ClickID, in.TransactionID, in.AmountCents, in.Currency,
		in.SaleType, in.IsRecurring, nullable(in.Provider), nullable(in.ProviderPaymentID), in.Livemode,
		nullable(in.EventName), nullable(in.SubscriptionID), nullable(in.SubscriptionInterval), in.Source, in.OccurredAt, test)
	if errors.Is(err, sql.ErrNoRows) {
		// A concurrent request recorded this transaction_id in the program first (ON CONFLICT waited for it to
		// commit).
		_ = tx.Rollback()
		if err := duplicate(ctx, dbx, in.ProgramID, in.TransactionID); err != nil {
			return Result{}, err
		}
		return Result{}, fmt.Errorf("transaction %q conflicted but is not recorded", in.TransactionID)
	}
	if err != nil {
		return Result{}, fmt.Errorf("record sale: %w", err)
	}
	if pays {
		var c Commission
		err := tx.GetContext(ctx, &c, `INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id,
			amount_cents, currency, is_test) VALUES ($1, $2, $3, $4, $5, $6, $7)
			RETURNING id, amount_cents, reversed_amount_cents, currency, status`,
			res.SaleID, in.ProgramID, *cust.PartnerID, *cust.PartnerProgramID, amount, in.Currency, test)
		if err != nil {
			return Result{}, &CommissionError{Err: err}
		}
		res.Commission = &c
	}
	if err := attribution.MarkConverted(ctx, tx, cust.ID, in.OccurredAt); err != nil {
		return Result{}, err
	}
	if err := leads.MarkConverted(ctx, tx, cust.ID); err != nil {
		return Result{}, err
	}
	if cust.ClickRef != nil {
		if err := clicks.MarkConverted(ctx, tx, *cust.ClickRef); err != nil {
			return Result{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return Result{}, err
	}
	// Dashboard counter: best effort, after the sale is safely recorded.
	if err := programs.CountSale(ctx, dbx, *cust.PartnerProgramID); err != nil {
		log.WarnContext(ctx, "sale counter not updated", "program_id", in.ProgramID, "sale_id", res.SaleID, "err", err)
	}
	return res, nil
}

// duplicate returns a DuplicateError when transactionID is recorded in the program. Another program's
// sales are never looked at.
func duplicate(ctx context.Context, q sqlx.QueryerContext, programID int64, transactionID string) error {
	d := DuplicateError{ProgramID: programID}
	err := q.QueryRowxContext(ctx, `SELECT id FROM sales WHERE program_id = $1 AND processor_event_id = $2`,
		programID, transactionID).Scan(&d.SaleID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return &d
}

// customer resolves the sale's customer in the key's program: by customer_key, else by the click (made
// into a customer when it has none yet). A click of another program is refused.
func customer(ctx context.Context, tx *sqlx.Tx, in Input) (attribution.Customer, error) {
	if in.CustomerKey != "" {
		c, err := attribution.CustomerByKey(ctx, tx, in.ProgramID, in.CustomerKey)
		if err == nil || !errors.Is(err, attribution.ErrCustomerNotFound) {
			return c, err
		}
	}
	if in.ClickID == "" {
		return attribution.Customer{}, ErrCustomerNotFound
	}
	click, err := attribution.FindClick(ctx, tx, in.ClickID)
	if errors.Is(err, attribution.ErrClickNotFound) {
		return attribution.Customer{}, ErrCustomerNotFound
	}
	if err != nil {
		return attribution.Customer{}, err
	}
	if click.ProgramID != in.ProgramID {
		return attribution.Customer{}, ErrOtherProgram
	}
	if in.CustomerKey == "" {
		c, err := attribution.CustomerByClick(ctx, tx, in.ProgramID, click.ID)
		if err == nil || !errors.Is(err, attribution.ErrCustomerNotFound) {
			return c, err
		}
	}
	return attribution.CreateFromClick(ctx, tx, click, in.CustomerKey, "", in.Test || click.IsTest)
}

// commissionFor decides whether this sale pays and how much: percent and fixed pay on the customer's
// first recorded sale only; recurring types on every sale, for duration_months after the first when the
// program sets one.
func commissionFor(ctx context.Context, tx *sqlx.Tx, p programs.Program, cust attribution.Customer, in Input) (int64, bool, error) {
	var first *time.Time
	if err := tx.GetContext(ctx, &first, `SELECT min(sale_date) FROM sales WHERE customer_id = $1`, cust.ID); err != nil {
		return 0, false, err
	}
	if first != nil {
		if !commission.Recurring(p.CommissionType) {
			return 0, false, nil
		}
		if p.DurationMonths != nil && !in.OccurredAt.Before(first.AddDate(0, *p.DurationMonths, 0)) {
			return 0, false, nil
		}
	}
	amount, err := commission.Amount(p.CommissionType, p.CommissionRate, in.AmountCents, in.Currency)
	if err != nil {
		return 0, false, err
	}
	return amount, true, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Providers are the payment providers a sale may name.
var Providers = []string{"stripe", "paddle", "lemonsqueezy", "chargebee", "recurly", "braintree", "paypal", "adyen",
	"square", "shopify", "app_store", "google_play", "manual", "other"}

// MaxAmountCents bounds amount_cents and refund_amount_cents (decisions.md, "Bad input, abuse and
// faults"): 10^12 minor units, far from overflow in any arithmetic on them.
const MaxAmountCents int64 = 1_000_000_000_000

// MaxAge and MaxFuture bound a sale's occurred_at.
const (
	MaxAge    = 30 * 24 * time.Hour
	MaxFuture = 5 * time.Minute
)
