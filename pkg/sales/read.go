package sales

import (
	"context"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/programs"
)

// ErrNotFound means there is no sale of that id.
var ErrNotFound = errors.New("sale not found")

// Sale is a sale as the management API shows it (GET /api/v1/sales/{saleId}); its sale.created and
// sale.refunded webhooks carry the same. Timestamp is the sale's sale_date, named as the events list
// names it.
type Sale struct {
	ID        int64     `db:"id"`
	ProgramID int64     `db:"program_id"`
	PartnerID int64     `db:"partner_id"`
	Timestamp time.Time `db:"sale_date"`
	ClickID   *string   `db:"click_id"`
	// TransactionID is the transaction_id the sale was reported with (stored as processor_event_id).
	TransactionID       string    `db:"processor_event_id"`
	AmountCents         int64     `db:"amount_cents"`
	Currency            string    `db:"currency"`
	RefundedAmountCents int64     `db:"refunded_amount_cents"`
	SaleType            string    `db:"sale_type"`
	PaymentStatus       string    `db:"payment_status"`
	IsRecurring         bool      `db:"is_recurring"`
	IsTest              bool      `db:"is_test"`
	CreatedAt           time.Time `db:"created_at"`
}

const saleColumns = `s.id, s.program_id, s.partner_id, s.sale_date, s.click_id, s.processor_event_id, s.amount_cents,
	s.currency, s.refunded_amount_cents, s.sale_type, s.payment_status, s.is_recurring, s.is_test, s.created_at
	FROM sales s`

// Read reads the sales of ids, in one query, in no particular order; ids that name no sale are left out.
// The webhook worker reads a batch of events' sales with it.
func Read(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]Sale, error) {
	out := []Sale{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+saleColumns+` WHERE s.id = ANY ($1)`, pq.Array(ids))
	return out, err
}

// Get is one sale, for a member whose role may list its program's tracking events (tracking:list):
// ErrNotFound when there is none, else programs.Access's refusals.
func Get(ctx context.Context, db sqlx.QueryerContext, accountID, id int64) (Sale, error) {
	return programs.AccessOne(ctx, db, accountID, id, accounts.ActionTrackingList, ErrNotFound, Read,
		func(s Sale) int64 { return s.ProgramID })
}

// RefundRecord is one recorded refund of a sale, as its sale.refunded webhook shows it.
type RefundRecord struct {
	ID     int64  `db:"id"`
	SaleID int64  `db:"sale_id"`
	Reason string `db:"reason"` // ReasonRefund or ReasonChargeback
	// RefundReason is the free text the refund was sent with, if any.
	RefundReason            *string   `db:"refund_reason"`
	AmountCents             int64     `db:"amount_cents"`
	CommissionReversedCents int64     `db:"commission_reversed_cents"`
	CreatedAt               time.Time `db:"created_at"`
}

// ReadRefunds reads the refunds of ids, in one query, in no particular order; ids that name no refund are
// left out.
func ReadRefunds(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]RefundRecord, error) {
	out := []RefundRecord{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT r.id, r.sale_id, r.reason, r.refund_reason, r.amount_cents,
		r.commission_reversed_cents, r.created_at FROM refunds r WHERE r.id = ANY ($1)`, pq.Array(ids))
	return out, err
}
