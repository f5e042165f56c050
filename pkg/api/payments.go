package api

import (
	"context"
	"errors"
	"strconv"

	"github.com/stripe/stripe-go/v85/webhook"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
)

// StripeWebhook verifies a Stripe delivery with the program's webhook secret and processes its event once.
func (s *Server) StripeWebhook(ctx context.Context, req gen.StripeWebhookRequestObject) (gen.StripeWebhookResponseObject, error) {
	if _, err := programs.Get(ctx, s.deps.DB, req.ProgramId); errors.Is(err, programs.ErrNotFound) {
		return nil, apierr.NotFound("Program not found")
	} else if err != nil {
		return nil, err
	}
	out, err := s.stripe.Handle(ctx, req.ProgramId, RawBody(ctx), metaFrom(ctx).header.Get("Stripe-Signature"))
	var sig *payments.SignatureError
	var bad *payments.EventError
	switch {
	case errors.Is(err, payments.ErrNotConnected):
		return nil, apierr.BadRequest("Stripe is not connected for this program")
	case errors.As(err, &sig):
		return nil, apierr.BadRequest(signatureMessage(sig.Err))
	case errors.As(err, &bad):
		return nil, apierr.BadRequest("Invalid Stripe event: " + bad.Reason)
	case err != nil:
		return nil, err
	}
	s.metrics.Webhook(payments.ProviderStripe, out.Outcome)
	switch out.Outcome {
	case payments.OutcomeRecorded:
		s.metrics.Event("sale", out.Test)
	case payments.OutcomeReversed:
		s.metrics.Event("refund", out.Test)
	}
	ack := gen.WebhookAck{Received: true, SaleId: out.SaleID}
	outcome := gen.WebhookAckOutcome(out.Outcome)
	ack.Outcome = &outcome
	if out.Reason != "" {
		ack.Reason = &out.Reason
	}
	return gen.StripeWebhook200JSONResponse{Body: ack}, nil
}

func signatureMessage(err error) string {
	switch {
	case errors.Is(err, webhook.ErrNotSigned):
		return "Missing Stripe-Signature header"
	case errors.Is(err, webhook.ErrTooOld):
		return "Stripe-Signature timestamp is outside the tolerance (5 minutes)"
	case errors.Is(err, webhook.ErrNoValidSignature):
		return "Stripe-Signature does not match the payload"
	}
	return "Malformed Stripe-Signature header"
}

// GetPaymentProcessor shows the program's processor connection; the secret is never returned.
func (s *Server) GetPaymentProcessor(ctx context.Context, req gen.GetPaymentProcessorRequestObject) (gen.GetPaymentProcessorResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	c, err := payments.Get(ctx, s.deps.DB, req.ProgramId, payments.ProviderStripe)
	if errors.Is(err, payments.ErrNotConnected) {
		return gen.GetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: s.wireProcessor(req.ProgramId, nil)}}, nil
	}
	if err != nil {
		return nil, err
	}
	return gen.GetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: s.wireProcessor(req.ProgramId, &c)}}, nil
}

// SetPaymentProcessor stores the processor's webhook signing secret (owner or admin).
func (s *Server) SetPaymentProcessor(ctx context.Context, req gen.SetPaymentProcessorRequestObject) (gen.SetPaymentProcessorResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProcessorWrite); err != nil {
		return nil, err
	}
	c, err := payments.Connect(ctx, s.deps.DB, req.ProgramId, string(req.Body.Provider), req.Body.WebhookSecret)
	if err != nil {
		return nil, err
	}
	return gen.SetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: s.wireProcessor(req.ProgramId, &c)}}, nil
}

func (s *Server) wireProcessor(programID int64, c *payments.Connection) gen.PaymentProcessor {
	out := gen.PaymentProcessor{WebhookUrl: s.deps.Config.BaseURL + "/api/v1/webhooks/stripe/" + strconv.FormatInt(programID, 10)}
	if c != nil {
		p := gen.PaymentProcessorProvider(c.Provider)
		out.Provider, out.WebhookSecretSet, out.UpdatedAt = &p, true, &c.UpdatedAt
	}
	return out
}

// CliStripeConnect is retired: the connection is a program setting now.
func (s *Server) CliStripeConnect(context.Context, gen.CliStripeConnectRequestObject) (gen.CliStripeConnectResponseObject, error) {
	return nil, apierr.Gone("This endpoint is retired: connect the payment processor from the dashboard program settings (PUT /api/v1/programs/{programId}/payment-processor).")
}
