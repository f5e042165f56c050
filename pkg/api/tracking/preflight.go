package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/route"
)

type preflightHeaders struct {
	origin, methods, headers *string
	maxAge                   *int
}

// preflight answers a CORS preflight of a browser route, as the route's policy says, when its origin is
// allowed by some program (no Access-Control headers otherwise).
func (h *Tracking) preflight(ctx context.Context) preflightHeaders {
	policy := route.FromContext(ctx)
	origin := request.From(ctx).Header.Get("Origin")
	if policy.CORS == nil || origin == "" || !h.Origins.Known(ctx, origin) {
		return preflightHeaders{}
	}
	c := policy.CORS
	return preflightHeaders{origin: &origin, methods: wire.Ptr(c.AllowMethods), headers: wire.Ptr(c.AllowHeaders), maxAge: wire.Ptr(c.MaxAge)}
}

// TrackClickPreflight answers the click route's CORS preflight.
func (h *Tracking) TrackClickPreflight(ctx context.Context, _ gen.TrackClickPreflightRequestObject) (gen.TrackClickPreflightResponseObject, error) {
	p := h.preflight(ctx)
	return gen.TrackClickPreflight204Response{Headers: gen.TrackClickPreflight204ResponseHeaders{
		AccessControlAllowOrigin: p.origin, AccessControlAllowMethods: p.methods,
		AccessControlAllowHeaders: p.headers, AccessControlMaxAge: p.maxAge,
	}}, nil
}

// TrackLeadPreflight answers the lead route's CORS preflight.
func (h *Tracking) TrackLeadPreflight(ctx context.Context, _ gen.TrackLeadPreflightRequestObject) (gen.TrackLeadPreflightResponseObject, error) {
	p := h.preflight(ctx)
	return gen.TrackLeadPreflight204Response{Headers: gen.TrackLeadPreflight204ResponseHeaders{
		AccessControlAllowOrigin: p.origin, AccessControlAllowMethods: p.methods,
		AccessControlAllowHeaders: p.headers, AccessControlMaxAge: p.maxAge,
	}}, nil
}
