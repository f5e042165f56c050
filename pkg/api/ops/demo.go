package ops

import (
	"context"
	"errors"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/demoshop"
)

// errNoShop answers the demo routes outside development mode.
var errNoShop = apierr.New(apierr.KindNotFound, "Not Found")

// DemoSession answers the demo shop's view of this browser.
func (h *Operations) DemoSession(ctx context.Context, req gen.DemoSessionRequestObject) (gen.DemoSessionResponseObject, error) {
	if h.Demo == nil {
		return nil, errNoShop
	}
	s, err := h.Demo.Visitor(ctx, wire.Deref(req.Params.SvcClickId), wire.Deref(req.Params.DemoCustomer))
	if err != nil {
		return nil, err
	}
	var out gen.DemoSession200JSONResponse
	out.Body.ClickId, out.Body.Partner, out.Body.CustomerKey = s.ClickID, s.Partner, s.CustomerKey
	return out, nil
}

// DemoSignup reports the demo customer's sign-up, as a brand's backend does.
func (h *Operations) DemoSignup(ctx context.Context, req gen.DemoSignupRequestObject) (gen.DemoSignupResponseObject, error) {
	if h.Demo == nil {
		return nil, errNoShop
	}
	key, leadID, partnerID, err := h.Demo.SignUp(ctx, wire.Deref(req.Params.SvcClickId))
	if err != nil {
		return nil, visitorError(err)
	}
	var out gen.DemoSignup200JSONResponse
	out.Body.CustomerKey, out.Body.LeadId, out.Body.PartnerId = key, leadID, partnerID
	return out, nil
}

// DemoBuy reports the demo customer's purchase, as a brand's backend does.
func (h *Operations) DemoBuy(ctx context.Context, req gen.DemoBuyRequestObject) (gen.DemoBuyResponseObject, error) {
	if h.Demo == nil {
		return nil, errNoShop
	}
	saleID, amount, commission, err := h.Demo.Buy(ctx, wire.Deref(req.Params.DemoCustomer))
	if err != nil {
		return nil, visitorError(err)
	}
	var out gen.DemoBuy200JSONResponse
	out.Body.SaleId, out.Body.AmountCents, out.Body.CommissionCents = saleID, amount, commission
	return out, nil
}

// visitorError answers the shop's refusals 400 with their messages; anything else stays what it is.
func visitorError(err error) error {
	var refused *demoshop.RefusedError
	switch {
	case errors.Is(err, demoshop.ErrNoClick), errors.Is(err, demoshop.ErrNoSignUp):
		return apierr.Invalid(err.Error())
	case errors.As(err, &refused):
		return apierr.Invalid(refused.Message)
	}
	return err
}
