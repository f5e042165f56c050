package manage

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/sales"
)

// GetLead shows one lead, as its lead.created webhook does, to a member with tracking:list.
func (h *Management) GetLead(ctx context.Context, req gen.GetLeadRequestObject) (gen.GetLeadResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	l, err := leads.Get(ctx, h.DB, accountID, req.LeadId)
	if err != nil {
		return nil, err
	}
	return gen.GetLead200JSONResponse{Body: gen.LeadEnvelope{Data: wire.Lead(l)}}, nil
}

// GetSale shows one sale, as its sale.created webhook does, to a member with tracking:list.
func (h *Management) GetSale(ctx context.Context, req gen.GetSaleRequestObject) (gen.GetSaleResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	s, err := sales.Get(ctx, h.DB, accountID, req.SaleId)
	if err != nil {
		return nil, err
	}
	return gen.GetSale200JSONResponse{Body: gen.SaleEnvelope{Data: wire.Sale(s)}}, nil
}
