package api

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/events"
)

// ListTrackingEvents lists the program's merged events for a member with tracking:list.
func (s *Server) ListTrackingEvents(ctx context.Context, req gen.ListTrackingEventsRequestObject) (gen.ListTrackingEventsResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList); err != nil {
		return nil, err
	}
	p := req.Params
	page, size := 1, 10
	if p.Page != nil {
		page = *p.Page
	}
	if p.PageSize != nil {
		size = *p.PageSize
	}
	f := events.Filter{ProgramID: req.ProgramId, From: p.DateFrom, To: p.DateTo, Test: p.Test != nil && *p.Test}
	if p.EventType != nil {
		f.Type = string(*p.EventType)
	}
	res, err := events.List(ctx, s.deps.DB, f, page, size)
	if err != nil {
		return nil, err
	}
	out := gen.TrackingEventsResponse{Data: make([]gen.TrackingEvent, len(res.Events))}
	for i, e := range res.Events {
		out.Data[i] = gen.TrackingEvent{
			Id: e.ID, EventType: gen.TrackingEventEventType(e.Type), Timestamp: e.Timestamp.UTC(), ClickId: e.ClickID,
			SessionId: e.SessionID, PageUrl: e.PageURL, ReferrerUrl: e.ReferrerURL, GeoCountry: e.GeoCountry,
			GeoRegion: e.GeoRegion, GeoCity: e.GeoCity, DeviceType: e.DeviceType, DeviceOs: e.DeviceOS,
			BrowserName: e.BrowserName, CustomerKey: e.CustomerKey, Converted: e.Converted, AmountCents: e.AmountCents,
			Currency: e.Currency, SaleType: e.SaleType, PaymentStatus: e.PaymentStatus, ProcessorEventId: e.ProcessorEventID,
			IsRecurring: e.IsRecurring, CreatedAt: e.CreatedAt.UTC(),
		}
	}
	pg := &out.Meta.Pagination
	pg.Page, pg.PageSize, pg.Total = page, size, int(res.Total)
	pg.PageCount = int((res.Total + int64(size) - 1) / int64(size))
	return gen.ListTrackingEvents200JSONResponse{Body: out}, nil
}
