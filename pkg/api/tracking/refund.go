package tracking

import (
	"context"
	"fmt"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/sales"
)

// The refusals of a refund's members, in the order they are read (made once, like the sale's).
var (
	errRefundTransactionID = apierr.Invalid("transaction_id is required")
	errReason              = apierr.Invalid("reason must be refund or chargeback")
	errRefundReason        = apierr.Invalid("refund_reason must be a string of at most 2000 characters")
	errRefundAmount        = apierr.Invalid("refund_amount_cents must be a positive integer")
	errRefundAmountAtMost  = apierr.Invalid(fmt.Sprintf("refund_amount_cents must be at most %d", sales.MaxAmountCents))
)

var (
	isReason = jsonbody.OneOf(sales.ReasonRefund, sales.ReasonChargeback)
	upTo2000 = jsonbody.MaxBytes(2000)
)

// TrackRefund refunds a recorded sale of the key's program.
func (h *Tracking) TrackRefund(ctx context.Context, req gen.TrackRefundRequestObject) (gen.TrackRefundResponseObject, error) {
	key, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	in, err := refundInput(req.Body, key.ProgramID)
	if err != nil {
		return nil, err
	}
	res, err := h.Refunds.Refund(ctx, in)
	if err != nil {
		return nil, err
	}
	out := gen.RefundResponse{
		Success: true, Status: gen.RefundResponseStatus(res.Status), SaleId: res.SaleID, TransactionId: res.TransactionID,
		Reason: gen.RefundResponseReason(res.Reason), RefundedAmountCents: res.RefundedAmountCents,
		Message: refundMessage(res), Warnings: wire.Warnings(ctx),
	}
	if c := res.Commission; c != nil {
		out.CommissionId = &c.ID
		out.Commission = &gen.RefundCommission{Id: c.ID, AmountCents: c.AmountCents, ReversedAmountCents: c.ReversedAmountCents,
			Currency: c.Currency, Status: gen.RefundCommissionStatus(c.Status), ClawbackCents: c.ClawbackCents}
	}
	if res.Status != sales.RefundSkipped {
		h.Metrics.Event("refund", false)
	}
	return gen.TrackRefund200JSONResponse{Body: out}, nil
}

// refundInput reads the refund's body, in the order the interface lists its rules.
func refundInput(b *gen.RefundRequest, programID int64) (sales.RefundInput, error) {
	var r jsonbody.Reader
	in := sales.RefundInput{ProgramID: programID, Source: sales.SourceAPI, Reason: sales.ReasonRefund}
	r.Check(b.TransactionId.Sent(), errRefundTransactionID)
	in.TransactionID, _ = r.String(b.TransactionId, errRefundTransactionID, jsonbody.NotBlank)
	if reason, ok := r.String(b.Reason, errReason, isReason); ok {
		in.Reason = reason
	}
	in.RefundReason, _ = r.String(b.RefundReason, errRefundReason, upTo2000)
	amount, ok := r.Int(b.RefundAmountCents, errRefundAmount, jsonbody.Positive)
	r.Check(amount <= sales.MaxAmountCents, errRefundAmountAtMost)
	in.AmountCents = jsonbody.Ptr(amount, ok)
	return in, r.Err()
}

func refundMessage(r sales.RefundResult) string {
	switch r.Status {
	case sales.RefundSkipped:
		return "Sale already fully refunded; nothing changed."
	case sales.RefundNoCommission:
		return "Refund recorded; the sale paid no commission."
	case sales.RefundPartial:
		return "Partial refund recorded; the commission was reduced in proportion."
	}
	return "Refund recorded; the commission was reversed."
}
