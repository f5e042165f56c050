// Package webhooks is the HTTP area of inbound payment-processor webhooks: a delivery is verified with
// the program's signing secret and its event processed once.
package webhooks

import (
	"context"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Webhooks implements the webhook operations of the strict server interface.
type Webhooks struct {
	DB      *sqlx.DB
	Stripe  *payments.Stripe
	Metrics *metrics.Metrics
}

// StripeWebhook verifies a Stripe delivery with the program's webhook secret and processes its event once.
func (h *Webhooks) StripeWebhook(ctx context.Context, req gen.StripeWebhookRequestObject) (gen.StripeWebhookResponseObject, error) {
	p, err := programs.Get(ctx, h.DB, req.ProgramId)
	if err != nil {
		return nil, err
	}
	m := request.From(ctx)
	handle := h.Stripe.Handle
	if p.OwnerSuspended {
		// Verified and logged, answered 200 so that the processor keeps the endpoint, not applied.
		handle = h.Stripe.Withhold
	}
	out, err := handle(ctx, req.ProgramId, m.RawBody, m.Header.Get("Stripe-Signature"))
	if err != nil {
		return nil, err
	}
	h.Metrics.Webhook(payments.ProviderStripe, out.Outcome)
	switch out.Outcome {
	case payments.OutcomeRecorded:
		h.Metrics.Event("sale", out.Test)
	case payments.OutcomeReversed:
		h.Metrics.Event("refund", out.Test)
	}
	ack := gen.WebhookAck{Received: true, SaleId: out.SaleID}
	outcome := gen.WebhookAckOutcome(out.Outcome)
	ack.Outcome = &outcome
	if out.Reason != "" {
		ack.Reason = &out.Reason
	}
	return gen.StripeWebhook200JSONResponse{Body: ack}, nil
}
