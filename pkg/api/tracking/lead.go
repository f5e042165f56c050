package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/leads"
)

const (
	msgLeadTracked     = "Lead tracked successfully"
	msgLeadProvisional = "Lead recorded as provisional. This program requires server-side (Bearer) lead tracking to settle attribution."
)

// TrackLead records a lead: server mode with a valid program key, browser mode without one.
func (h *Tracking) TrackLead(ctx context.Context, req gen.TrackLeadRequestObject) (gen.TrackLeadResponseObject, error) {
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	// Mode first: a token that matches no program is refused whatever the body says.
	key, server, err := h.Auth.OptionalKey(ctx)
	if err != nil {
		return nil, err
	}
	clickID, customerKey, err := leadIdentifiers(body)
	if err != nil {
		return nil, err
	}
	ad, err := body.AdditionalData()
	if err != nil {
		return nil, err
	}
	if err := body.CheckStrings("email"); err != nil {
		return nil, err
	}
	if err := checkTestProgram(ad, key.ProgramID, server); err != nil {
		return nil, err
	}
	in := leads.Input{
		ServerMode:  server,
		ClickID:     clickID,
		CustomerKey: customerKey,
		Email:       body.OptStr("email"),
		Test:        ad.Test,
		Source:      leads.SourceBrowser,
	}
	switch {
	case server:
		in.ProgramID, in.Source = key.ProgramID, leads.SourceServer
	case ad.ProgramID != nil:
		in.ProgramID = *ad.ProgramID
	}
	if !server {
		in.Origin = request.From(ctx).Header.Get("Origin")
	}
	res, err := h.Leads.Record(ctx, in)
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
	if ad.Test {
		out.Data = wire.TestData(res.LeadID, res.ProgramID)
	}
	h.Metrics.Event(kind, ad.Test)
	return gen.TrackLead200JSONResponse{Body: out}, nil
}

// leadIdentifiers reads click_id and customer_key; at least one is required.
func leadIdentifiers(body jsonbody.Object) (clickID, customerKey string, err error) {
	clickID, cPresent, cOK := body.Str("click_id")
	customerKey, kPresent, kOK := body.Str("customer_key")
	switch {
	case cPresent && !cOK:
		return "", "", apierr.Invalid("click_id must be a string")
	case kPresent && !kOK:
		return "", "", apierr.Invalid("customer_key must be a string")
	case clickID == "" && customerKey == "":
		return "", "", apierr.Invalid("click_id or customer_key is required")
	}
	return clickID, customerKey, nil
}
