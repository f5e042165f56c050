package sales

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/commission"
)

// Refund errors.
var ErrSaleNotFound = errors.New("sale not found for transaction_id")

// RefundTooLargeError refuses a partial refund above what is left unrefunded.
type RefundTooLargeError struct{ Remaining int64 }

func (e *RefundTooLargeError) Error() string {
	return fmt.Sprintf("refund larger than the %d left unrefunded", e.Remaining)
}

// Refund reasons.
const (
	ReasonRefund     = "refund"
	ReasonChargeback = "chargeback"
)

// Refund statuses answered.
const (
	RefundReversed     = "reversed"      // fully refunded, commission reversed
	RefundPartial      = "refunded"      // partially refunded
	RefundNoCommission = "no_commission" // the sale paid no commission
	RefundSkipped      = "skipped"       // already fully refunded: nothing changed
)

// RefundInput is one refund.
type RefundInput struct {
	ProgramID     int64
	TransactionID string
	Reason        string
	RefundReason  string
	// AmountCents refunds part of the sale; nil refunds all that is left.
	AmountCents *int64
	Source      string
	// ProcessorRefundID makes a processor's refund idempotent ("" for API calls): a refund already
	// recorded under it changes nothing (status skipped).
	ProcessorRefundID string
	// RefundedTotalCents is a processor's cumulative refunded amount: the refund is what it adds to what
	// is recorded (skipped when it adds nothing), so a repeated or reordered event cannot refund twice.
	// It overrides AmountCents.
	RefundedTotalCents *int64
}

// RefundResult is the state after a refund.
type RefundResult struct {
	Status              string
	SaleID              int64
	TransactionID       string
	Reason              string
	RefundedAmountCents int64
	Commission          *Commission
}

// Refund refunds (part of) a sale of the program and reverses its commission in proportion: the
// commission's reversed amount is round_half_away_from_zero(commission × refunded / sale amount), all of
// it once the sale is fully refunded.
func Refund(ctx context.Context, dbx *sqlx.DB, in RefundInput) (RefundResult, error) {
	if in.Reason == "" {
		in.Reason = ReasonRefund
	}
	tx, err := dbx.BeginTxx(ctx, nil)
	if err != nil {
		return RefundResult{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit

	var sale struct {
		ID       int64 `db:"id"`
		Amount   int64 `db:"amount_cents"`
		Refunded int64 `db:"refunded_amount_cents"`
	}
	err = tx.GetContext(ctx, &sale, `SELECT id, amount_cents, refunded_amount_cents FROM sales
		WHERE processor_event_id = $1 AND program_id = $2 FOR UPDATE`, in.TransactionID, in.ProgramID)
	if errors.Is(err, sql.ErrNoRows) {
		return RefundResult{}, ErrSaleNotFound
	}
	if err != nil {
		return RefundResult{}, err
	}
	res := RefundResult{SaleID: sale.ID, TransactionID: in.TransactionID, Reason: in.Reason, RefundedAmountCents: sale.Refunded}
	var c Commission
	err = tx.GetContext(ctx, &c, `SELECT id, amount_cents, reversed_amount_cents, currency, status FROM commissions
		WHERE sale_id = $1 FOR UPDATE`, sale.ID)
	switch {
	case err == nil:
		res.Commission = &c
	case !errors.Is(err, sql.ErrNoRows):
		return RefundResult{}, err
	}

	if in.ProcessorRefundID != "" {
		var seen bool
		if err := tx.GetContext(ctx, &seen, `SELECT EXISTS (SELECT 1 FROM refunds
			WHERE program_id = $1 AND processor_refund_id = $2)`, in.ProgramID, in.ProcessorRefundID); err != nil {
			return RefundResult{}, err
		}
		if seen {
			return skipped(ctx, tx, res)
		}
	}
	if in.RefundedTotalCents != nil {
		add := min(*in.RefundedTotalCents, sale.Amount) - sale.Refunded
		if add <= 0 {
			return skipped(ctx, tx, res)
		}
		in.AmountCents = &add
	}
	remaining := sale.Amount - sale.Refunded
	if remaining == 0 {
		return skipped(ctx, tx, res)
	}
	amount := remaining
	if in.AmountCents != nil {
		if *in.AmountCents > remaining {
			return RefundResult{}, &RefundTooLargeError{Remaining: remaining}
		}
		amount = *in.AmountCents
	}
	total := sale.Refunded + amount
	full := total == sale.Amount

	var reversedNow int64
	if res.Commission != nil {
		reversed := c.AmountCents
		if !full {
			if reversed, err = commission.Proportion(c.AmountCents, total, sale.Amount); err != nil {
				return RefundResult{}, err
			}
		}
		reversedNow = reversed - c.ReversedAmountCents
		status := "pending"
		switch {
		case reversed == c.AmountCents:
			status = "reversed"
		case reversed > 0:
			status = "partially_reversed"
		}
		err = tx.GetContext(ctx, res.Commission, `UPDATE commissions SET reversed_amount_cents = $2, status = $3, updated_at = now()
			WHERE id = $1 RETURNING id, amount_cents, reversed_amount_cents, currency, status`, c.ID, reversed, status)
		if err != nil {
			return RefundResult{}, fmt.Errorf("reverse commission: %w", err)
		}
	}
	var processorRefundID any
	if in.ProcessorRefundID != "" {
		processorRefundID = in.ProcessorRefundID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO refunds (sale_id, program_id, reason, refund_reason, amount_cents,
		commission_reversed_cents, processor_refund_id, source) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sale.ID, in.ProgramID, in.Reason, nullable(in.RefundReason), amount, reversedNow, processorRefundID, in.Source); err != nil {
		return RefundResult{}, fmt.Errorf("record refund: %w", err)
	}
	paymentStatus := "partially_refunded"
	if full {
		paymentStatus = "refunded"
		if in.Reason == ReasonChargeback {
			paymentStatus = "charged_back"
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sales SET refunded_amount_cents = $2, payment_status = $3 WHERE id = $1`,
		sale.ID, total, paymentStatus); err != nil {
		return RefundResult{}, fmt.Errorf("update sale: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return RefundResult{}, err
	}
	res.RefundedAmountCents = total
	switch {
	case res.Commission == nil:
		res.Status = RefundNoCommission
	case full:
		res.Status = RefundReversed
	default:
		res.Status = RefundPartial
	}
	return res, nil
}

// skipped is the answer when nothing changes: the sale's state as stored, its reason included (the reason
// of its latest refund, which may have come from the processor as a refund or a dispute), never the
// reason the request asked for.
func skipped(ctx context.Context, tx *sqlx.Tx, res RefundResult) (RefundResult, error) {
	res.Status = RefundSkipped
	var reason string
	err := tx.GetContext(ctx, &reason, `SELECT reason FROM refunds WHERE sale_id = $1 ORDER BY id DESC LIMIT 1`, res.SaleID)
	switch {
	case err == nil:
		res.Reason = reason
	case !errors.Is(err, sql.ErrNoRows):
		return RefundResult{}, err
	}
	return res, nil
}
