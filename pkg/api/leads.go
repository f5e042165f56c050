package api

import (
	"context"
	"errors"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/leads"
)

const (
	msgLeadTracked     = "Lead tracked successfully"
	msgLeadProvisional = "Lead recorded as provisional. This program requires server-side (Bearer) lead tracking to settle attribution."
)

// TrackLead records a lead: server mode with a valid program key, browser mode without one.
func (s *Server) TrackLead(ctx context.Context, req gen.TrackLeadRequestObject) (gen.TrackLeadResponseObject, error) {
	body, err := parseBody(req.Body)
	if err != nil {
		return nil, err
	}
	// Mode first: a token that matches no program is refused whatever the body says.
	key, server, err := s.optionalKey(ctx)
	if err != nil {
		return nil, err
	}
	clickID, customerKey, err := leadIdentifiers(body)
	if err != nil {
		return nil, err
	}
	ad := body.additionalData()
	if err := checkTestProgram(ad, key.ProgramID, server); err != nil {
		return nil, err
	}
	in := leads.Input{
		ServerMode:  server,
		ClickID:     clickID,
		CustomerKey: customerKey,
		Email:       body.optStr("email"),
		Test:        ad.test,
		Source:      leads.SourceBrowser,
	}
	switch {
	case server:
		in.ProgramID, in.Source = key.ProgramID, leads.SourceServer
	case ad.programID != nil:
		in.ProgramID = *ad.programID
	}
	if !server {
		in.Origin = metaFrom(ctx).header.Get("Origin")
	}
	res, err := leads.Track(ctx, s.deps.DB, s.deps.Logger, in)
	if err != nil {
		return nil, leadError(err, in.Origin)
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
		Warnings: wireWarnings(s.warnings(ctx)),
	}
	kind := "lead"
	if res.Provisional {
		out.Message = msgLeadProvisional
		p := gen.LeadResponseProvisional(true)
		out.Provisional = &p
		kind = "provisional_lead"
	}
	if ad.test {
		out.Data = &gen.TestModeData{EventId: res.LeadID, ProgramId: &res.ProgramID, TestMode: true}
	}
	s.metrics.Event(kind, ad.test)
	return gen.TrackLead200JSONResponse{Body: out}, nil
}

// leadIdentifiers reads click_id and customer_key; at least one is required.
func leadIdentifiers(body object) (clickID, customerKey string, err error) {
	clickID, cPresent, cOK := body.str("click_id")
	customerKey, kPresent, kOK := body.str("customer_key")
	switch {
	case cPresent && !cOK:
		return "", "", apierr.BadRequest("click_id must be a string")
	case kPresent && !kOK:
		return "", "", apierr.BadRequest("customer_key must be a string")
	case clickID == "" && customerKey == "":
		return "", "", apierr.BadRequest("click_id or customer_key is required")
	}
	return clickID, customerKey, nil
}

func leadError(err error, origin string) error {
	var st *leads.StatusError
	switch {
	case errors.As(err, &st):
		return apierr.BadRequest("Customer status cannot be updated to lead. Current status: " + st.Status)
	case errors.Is(err, leads.ErrIdentifierRequired):
		return apierr.BadRequest("click_id or customer_key is required")
	case errors.Is(err, leads.ErrCustomerNotFound):
		return apierr.BadRequest("Customer not found. Provide a valid click_id or customer_key.")
	case errors.Is(err, leads.ErrOtherProgram):
		return apierr.BadRequest("Customer does not belong to this program")
	case errors.Is(err, leads.ErrOriginNotAllowed):
		return originNotAllowed(origin)
	}
	return err
}
