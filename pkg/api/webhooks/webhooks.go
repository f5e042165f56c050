// Package webhooks is the HTTP area of inbound payment-processor webhooks: a delivery is verified with
// the program's signing secret and its event processed once.
package webhooks

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
)

// Webhooks implements the webhook operations of the strict server interface.
type Webhooks struct {
	Stripe  *payments.Stripe
	Metrics *metrics.Metrics
}

// StripeWebhook verifies a Stripe delivery with the program's webhook secret and processes its event once.
func (h *Webhooks) StripeWebhook(ctx context.Context, req gen.StripeWebhookRequestObject) (gen.StripeWebhookResponseObject, error) {
	ack, err := h.stripe(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	return gen.StripeWebhook200JSONResponse{Body: ack}, nil
}

// StripeWebhookAlias is StripeWebhook at the path the original product's CLI registers with Stripe.
func (h *Webhooks) StripeWebhookAlias(ctx context.Context, req gen.StripeWebhookAliasRequestObject) (gen.StripeWebhookAliasResponseObject, error) {
	ack, err := h.stripe(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	return gen.StripeWebhookAlias200JSONResponse{Body: ack}, nil
}

// stripe verifies and processes one delivery to the program's Stripe endpoint, at either path.
func (h *Webhooks) stripe(ctx context.Context, programID int64) (gen.WebhookAck, error) {
	m := request.From(ctx)
	out, err := h.Stripe.Deliver(ctx, programID, m.RawBody, m.Header.Get("Stripe-Signature"))
	if err != nil {
		return gen.WebhookAck{}, err
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
	return ack, nil
}
