package tracking

import (
	"context"
	"fmt"
	"strings"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/sales"
)

// TrackRefund refunds a recorded sale of the key's program.
func (h *Tracking) TrackRefund(ctx context.Context, req gen.TrackRefundRequestObject) (gen.TrackRefundResponseObject, error) {
	key, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	in, err := refundInput(body, key.ProgramID)
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
func refundInput(body jsonbody.Object, programID int64) (sales.RefundInput, error) {
	in := sales.RefundInput{ProgramID: programID, Source: sales.SourceAPI, Reason: sales.ReasonRefund}
	txn, _, ok := body.Str("transaction_id")
	if !ok || strings.TrimSpace(txn) == "" {
		return in, apierr.Invalid("transaction_id is required")
	}
	in.TransactionID = txn
	if v, present, ok := body.Str("reason"); present {
		if !ok || (v != sales.ReasonRefund && v != sales.ReasonChargeback) {
			return in, apierr.Invalid("reason must be refund or chargeback")
		}
		in.Reason = v
	}
	if v, present, ok := body.Str("refund_reason"); present {
		if !ok || len(v) > 2000 {
			return in, apierr.Invalid("refund_reason must be a string of at most 2000 characters")
		}
		in.RefundReason = v
	}
	if v, present, ok := body.SaturatedInt("refund_amount_cents"); present {
		if !ok || v <= 0 {
			return in, apierr.Invalid("refund_amount_cents must be a positive integer")
		}
		if v > sales.MaxAmountCents {
			return in, apierr.Invalid(fmt.Sprintf("refund_amount_cents must be at most %d", sales.MaxAmountCents))
		}
		in.AmountCents = &v
	}
	return in, nil
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
