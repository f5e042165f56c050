package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/leads"
)

const (
	msgLeadTracked     = "Lead tracked successfully"
	msgLeadProvisional = "Lead recorded as provisional. This program requires server-side (Bearer) lead tracking to settle attribution."
)

var errEmailNotString = notString("email")

// TrackLead records a lead: server mode with a valid program key, browser mode without one (leads.Mode).
func (h *Tracking) TrackLead(ctx context.Context, req gen.TrackLeadRequestObject) (gen.TrackLeadResponseObject, error) {
	q, err := h.leadRequest(ctx, req.Body)
	if err != nil {
		return nil, err
	}
	res, err := h.Leads.Take(ctx, q)
	if err != nil {
		return nil, err
	}
	out := gen.LeadResponse{
		Success:     true,
		Message:     msgLeadTracked,
		LeadId:      res.LeadID,
		CustomerKey: res.CustomerKey,
		Attribution: gen.Attribution{
			Status:    gen.AttributionStatus(res.Attribution.Status),
			ClickId:   res.Attribution.ClickID,
			PartnerId: res.Attribution.PartnerID,
			ProgramId: res.Attribution.ProgramID,
		},
		Warnings: wire.Warnings(ctx),
	}
	kind := "lead"
	if res.Provisional {
		out.Message = msgLeadProvisional
		out.Provisional = wire.Ptr(gen.LeadResponseProvisional(true))
		kind = "provisional_lead"
	}
	if q.Test {
		out.Data = wire.TestData(res.LeadID, res.ProgramID)
	}
	h.Metrics.Event(kind, q.Test)
	return gen.TrackLead200JSONResponse{Body: out}, nil
}

// leadRequest reads the lead's credential and body, in the order their refusals are answered.
func (h *Tracking) leadRequest(ctx context.Context, b *gen.LeadRequest) (leads.Request, error) {
	if err := request.ObjectBody(ctx); err != nil {
		return leads.Request{}, err
	}
	// The credential first: a token that matches no program is refused whatever the body says.
	key, hasKey, err := h.Auth.OptionalKey(ctx)
	if err != nil {
		return leads.Request{}, err
	}
	var r jsonbody.Reader
	clickID, _ := r.String(b.ClickId, errClickIDNotString)
	customerKey, _ := r.String(b.CustomerKey, errCustomerKeyNotString)
	r.Check(clickID != "" || customerKey != "", leads.ErrIdentifierRequired)
	test, named := additionalData(&r, b.AdditionalData)
	email, _ := r.String(b.Email, errEmailNotString)
	if err := r.Err(); err != nil {
		return leads.Request{}, err
	}
	return leads.Request{Claim: apikeys.ClaimOf(key, hasKey, named), ClickID: clickID, CustomerKey: customerKey,
		Email: email, Test: test, Origin: request.From(ctx).Header.Get("Origin")}, nil
}
