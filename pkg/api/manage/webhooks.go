package manage

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// The outbound webhooks' routes (docs/rules.md#webhooks): endpoints, the delivery log, resend, recover and
// test events. pkg/webhooks checks access (owner or admin), the URL rule and ranges, and writes the audit
// log.

// webhookRequest is who acts, and when.
func (h *Management) webhookRequest(ctx context.Context) (webhooks.Request, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return webhooks.Request{}, err
	}
	return webhooks.Request{AccountID: a.ID, Email: a.Email, Now: h.Now()}, nil
}

func eventTypes(in *[]gen.WebhookEventType) *[]string {
	if in == nil {
		return nil
	}
	out := make([]string, len(*in))
	for i, t := range *in {
		out[i] = string(t)
	}
	return &out
}

func wireEndpoint(e webhooks.Endpoint) gen.WebhookEndpoint {
	out := gen.WebhookEndpoint{Id: e.ID, ProgramId: e.ProgramID, Url: e.URL, Description: e.Description, Enabled: e.Enabled,
		DisabledReason: e.DisabledReason, SecretRotatingUntil: e.RotatingUntil, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
	if e.EventTypes != nil {
		types := make([]gen.WebhookEventType, len(e.EventTypes))
		for i, t := range e.EventTypes {
			types[i] = gen.WebhookEventType(t)
		}
		out.Events = &types
	}
	return out
}

func wireEndpointWithSecret(e webhooks.Endpoint, secret string) gen.WebhookEndpointWithSecret {
	w := wireEndpoint(e)
	return gen.WebhookEndpointWithSecret{Id: w.Id, ProgramId: w.ProgramId, Url: w.Url, Events: w.Events,
		Description: w.Description, Enabled: w.Enabled, DisabledReason: w.DisabledReason,
		SecretRotatingUntil: w.SecretRotatingUntil, CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, Secret: secret}
}

func wireDelivery(d webhooks.Delivery) gen.WebhookDelivery {
	attempts := make([]gen.WebhookAttempt, len(d.Attempts))
	for i, a := range d.Attempts {
		attempts[i] = gen.WebhookAttempt{AttemptedAt: a.AttemptedAt, Succeeded: a.Succeeded, ResponseStatus: a.ResponseStatus,
			DurationMs: a.DurationMS, ResponseBody: a.ResponseBody, Error: a.Error}
	}
	return gen.WebhookDelivery{Id: d.ID, WebhookId: d.WebhookID, EndpointId: d.EndpointID,
		EventType: gen.WebhookEventType(d.EventType), OccurredAt: d.OccurredAt, IsTest: d.IsTest,
		Status: gen.WebhookDeliveryStatus(d.Status), NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt, Attempts: attempts}
}

// ListWebhookEndpoints lists a program's endpoints.
func (h *Management) ListWebhookEndpoints(ctx context.Context, req gen.ListWebhookEndpointsRequestObject) (gen.ListWebhookEndpointsResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	list, err := h.Webhooks.List(ctx, accountID, req.ProgramId)
	if err != nil {
		return nil, err
	}
	out := make([]gen.WebhookEndpoint, len(list))
	for i, e := range list {
		out[i] = wireEndpoint(e)
	}
	return gen.ListWebhookEndpoints200JSONResponse{Body: gen.WebhookEndpointListEnvelope{Data: out}}, nil
}

// CreateWebhookEndpoint adds an endpoint and answers its secret, once.
func (h *Management) CreateWebhookEndpoint(ctx context.Context, req gen.CreateWebhookEndpointRequestObject) (gen.CreateWebhookEndpointResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	in := webhooks.EndpointInput{URL: &req.Body.Url, EventTypes: eventTypes(req.Body.Events), Description: req.Body.Description}
	e, secret, err := h.Webhooks.Create(ctx, r, req.ProgramId, in)
	if err != nil {
		return nil, err
	}
	return gen.CreateWebhookEndpoint201JSONResponse{Body: gen.WebhookEndpointSecretEnvelope{Data: wireEndpointWithSecret(e, secret)}}, nil
}

// GetWebhookEndpoint shows one endpoint.
func (h *Management) GetWebhookEndpoint(ctx context.Context, req gen.GetWebhookEndpointRequestObject) (gen.GetWebhookEndpointResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	e, err := h.Webhooks.Get(ctx, accountID, req.EndpointId)
	if err != nil {
		return nil, err
	}
	return gen.GetWebhookEndpoint200JSONResponse{Body: gen.WebhookEndpointEnvelope{Data: wireEndpoint(e)}}, nil
}

// UpdateWebhookEndpoint changes an endpoint.
func (h *Management) UpdateWebhookEndpoint(ctx context.Context, req gen.UpdateWebhookEndpointRequestObject) (gen.UpdateWebhookEndpointResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	in := webhooks.EndpointInput{URL: b.Url, EventTypes: eventTypes(b.Events), Description: b.Description, Enabled: b.Enabled}
	e, err := h.Webhooks.Update(ctx, r, req.EndpointId, in)
	if err != nil {
		return nil, err
	}
	return gen.UpdateWebhookEndpoint200JSONResponse{Body: gen.WebhookEndpointEnvelope{Data: wireEndpoint(e)}}, nil
}

// DeleteWebhookEndpoint removes an endpoint.
func (h *Management) DeleteWebhookEndpoint(ctx context.Context, req gen.DeleteWebhookEndpointRequestObject) (gen.DeleteWebhookEndpointResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.Webhooks.Delete(ctx, r, req.EndpointId); err != nil {
		return nil, err
	}
	return gen.DeleteWebhookEndpoint204Response{}, nil
}

// RotateWebhookSecret gives an endpoint a new secret, answered once.
func (h *Management) RotateWebhookSecret(ctx context.Context, req gen.RotateWebhookSecretRequestObject) (gen.RotateWebhookSecretResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	e, secret, err := h.Webhooks.RotateSecret(ctx, r, req.EndpointId)
	if err != nil {
		return nil, err
	}
	return gen.RotateWebhookSecret200JSONResponse{Body: gen.WebhookEndpointSecretEnvelope{Data: wireEndpointWithSecret(e, secret)}}, nil
}

// ListWebhookDeliveries is a page of an endpoint's delivery log.
func (h *Management) ListWebhookDeliveries(ctx context.Context, req gen.ListWebhookDeliveriesRequestObject) (gen.ListWebhookDeliveriesResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	p := req.Params
	f := webhooks.DeliveryFilter{Cursor: wire.Deref(p.Cursor), Limit: wire.Deref(p.Limit)}
	if p.Status != nil {
		f.Status = string(*p.Status)
	}
	if p.EventType != nil {
		f.EventType = string(*p.EventType)
	}
	page, err := h.Webhooks.Deliveries(ctx, accountID, req.EndpointId, f)
	if err != nil {
		return nil, err
	}
	out := make([]gen.WebhookDelivery, len(page.Deliveries))
	for i, d := range page.Deliveries {
		out[i] = wireDelivery(d)
	}
	return gen.ListWebhookDeliveries200JSONResponse{Body: gen.WebhookDeliveryListEnvelope{Data: out, Meta: wire.ListMeta(page.NextCursor)}}, nil
}

// ResendWebhookDelivery queues a delivery again.
func (h *Management) ResendWebhookDelivery(ctx context.Context, req gen.ResendWebhookDeliveryRequestObject) (gen.ResendWebhookDeliveryResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	d, err := h.Webhooks.Resend(ctx, r, req.DeliveryId)
	if err != nil {
		return nil, err
	}
	return gen.ResendWebhookDelivery202JSONResponse{Body: gen.WebhookDeliveryEnvelope{Data: wireDelivery(d)}}, nil
}

// RecoverWebhookDeliveries queues again what an endpoint missed since a time.
func (h *Management) RecoverWebhookDeliveries(ctx context.Context, req gen.RecoverWebhookDeliveriesRequestObject) (gen.RecoverWebhookDeliveriesResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	n, err := h.Webhooks.Recover(ctx, r, req.EndpointId, req.Body.Since)
	if err != nil {
		return nil, err
	}
	out := gen.WebhookRecoverEnvelope{}
	out.Data.Queued = n
	return gen.RecoverWebhookDeliveries202JSONResponse{Body: out}, nil
}

// TestWebhookEndpoint queues a sample event to one endpoint.
func (h *Management) TestWebhookEndpoint(ctx context.Context, req gen.TestWebhookEndpointRequestObject) (gen.TestWebhookEndpointResponseObject, error) {
	r, err := h.webhookRequest(ctx)
	if err != nil {
		return nil, err
	}
	d, err := h.Webhooks.SendTest(ctx, r, req.EndpointId, string(req.Body.EventType))
	if err != nil {
		return nil, err
	}
	return gen.TestWebhookEndpoint202JSONResponse{Body: gen.WebhookDeliveryEnvelope{Data: wireDelivery(d)}}, nil
}
