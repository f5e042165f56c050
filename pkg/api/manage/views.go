package manage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
)

// ListTrackingEvents lists the program's merged events for a member with tracking:list. The member's
// access is checked on the primary; the events are read from ReadDB (they may trail the primary by the
// replica's lag).
func (h *Management) ListTrackingEvents(ctx context.Context, req gen.ListTrackingEventsRequestObject) (gen.ListTrackingEventsResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList); err != nil {
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
	res, err := events.List(ctx, h.ReadDB, f, page, size)
	if err != nil {
		return nil, err
	}
	out := gen.TrackingEventsResponse{Data: make([]gen.TrackingEvent, len(res.Events))}
	for i, e := range res.Events {
		if out.Data[i], err = trackingEvent(e); err != nil {
			return nil, err
		}
	}
	pg := &out.Meta.Pagination
	pg.Page, pg.PageSize, pg.Total = page, size, int(res.Total)
	pg.PageCount = int((res.Total + int64(size) - 1) / int64(size))
	return gen.ListTrackingEvents200JSONResponse{Body: out}, nil
}

// trackingEvent is one event as its type lists it: every field of the type present, null when it has
// no value, and no field of another type.
func trackingEvent(e events.Event) (gen.TrackingEvent, error) {
	var out gen.TrackingEvent
	ts, created := e.Timestamp.UTC(), e.CreatedAt.UTC()
	switch e.Type {
	case events.Click:
		return out, out.FromClickEvent(gen.ClickEvent{
			Id: e.ID, EventType: gen.ClickEventEventTypeClick, Timestamp: ts, ClickId: wire.Deref(e.ClickID),
			SessionId: e.SessionID, PageUrl: e.PageURL, ReferrerUrl: e.ReferrerURL, GeoCountry: e.GeoCountry,
			GeoRegion: e.GeoRegion, GeoCity: e.GeoCity, DeviceType: e.DeviceType, DeviceOs: e.DeviceOS,
			BrowserName: e.BrowserName, Converted: wire.Deref(e.Converted), CreatedAt: created,
		})
	case events.Lead:
		return out, out.FromLeadEvent(gen.LeadEvent{
			Id: e.ID, EventType: gen.LeadEventEventTypeLead, Timestamp: ts, ClickId: e.ClickID, SessionId: e.SessionID,
			PageUrl: e.PageURL, CustomerKey: e.CustomerKey, Converted: wire.Deref(e.Converted), CreatedAt: created,
		})
	case events.Conversion:
		return out, out.FromConversionEvent(gen.ConversionEvent{
			Id: e.ID, EventType: gen.ConversionEventEventTypeConversion, Timestamp: ts, ClickId: e.ClickID,
			AmountCents: wire.Deref(e.AmountCents), Currency: wire.Deref(e.Currency), SaleType: wire.Deref(e.SaleType),
			PaymentStatus: wire.Deref(e.PaymentStatus), ProcessorEventId: wire.Deref(e.ProcessorEventID),
			IsRecurring: wire.Deref(e.IsRecurring), CreatedAt: created,
		})
	}
	return out, fmt.Errorf("events: unknown event type %q", e.Type)
}

// ListDailyEventCounts counts the program's events per UTC day for the dashboard's chart; like the list,
// access on the primary, counts from ReadDB.
func (h *Management) ListDailyEventCounts(ctx context.Context, req gen.ListDailyEventCountsRequestObject) (gen.ListDailyEventCountsResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList); err != nil {
		return nil, err
	}
	p := req.Params
	to := h.Now().UTC().Truncate(24 * time.Hour)
	if p.DateTo != nil {
		to = p.DateTo.Time
	}
	from := to.AddDate(0, 0, -29)
	if p.DateFrom != nil {
		from = p.DateFrom.Time
	}
	switch {
	case from.After(to):
		return nil, apierr.Invalid("dateFrom must not be after dateTo")
	case to.Sub(from) >= events.MaxDays*24*time.Hour:
		return nil, apierr.Invalid("The span from dateFrom to dateTo is limited to 366 days")
	}
	test := p.Test != nil && *p.Test
	days, err := events.Daily(ctx, h.ReadDB, req.ProgramId, test, from, to)
	if err != nil {
		return nil, err
	}
	out := gen.DailyEventCountsResponse{Data: make([]gen.DailyEventCount, len(days))}
	for i, d := range days {
		out.Data[i] = gen.DailyEventCount{Clicks: d.Clicks, Leads: d.Leads, Conversions: d.Conversions}
		out.Data[i].Date.Time = d.Date
	}
	out.Meta.DateFrom.Time, out.Meta.DateTo.Time, out.Meta.Test = from, to, test
	return gen.ListDailyEventCounts200JSONResponse{Body: out}, nil
}

// GetMe answers the account, its workspaces (role and allowed actions) and their programs.
func (h *Management) GetMe(ctx context.Context, _ gen.GetMeRequestObject) (gen.GetMeResponseObject, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := accounts.Workspaces(ctx, h.DB, a.ID)
	if err != nil {
		return nil, err
	}
	var out gen.MeEnvelope
	out.Data.Account.Id, out.Data.Account.Email = a.ID, a.Email
	out.Data.Workspaces = make([]struct {
		Actions      []string       `json:"actions"`
		AdvertiserId int64          `json:"advertiser_id"`
		Name         string         `json:"name"`
		Role         gen.MemberRole `json:"role"`
	}, len(ws))
	for i, w := range ws {
		d := &out.Data.Workspaces[i]
		d.AdvertiserId, d.Name, d.Role, d.Actions = w.ID, w.Name, gen.MemberRole(w.Role), accounts.Actions(w.Role)
	}
	progs, err := programs.OfAccount(ctx, h.DB, a.ID)
	if err != nil {
		return nil, err
	}
	out.Data.Programs = make([]struct {
		AdvertiserId int64  `json:"advertiser_id"`
		Domain       string `json:"domain"`
		Id           int64  `json:"id"`
		Name         string `json:"name"`
		Status       string `json:"status"`
	}, len(progs))
	for i, p := range progs {
		d := &out.Data.Programs[i]
		d.Id, d.Name, d.Domain, d.Status, d.AdvertiserId = p.ID, p.Name, p.Domain, p.Status, p.WorkspaceID
	}
	return gen.GetMe200JSONResponse{Body: out}, nil
}

// GetPaymentProcessor shows the program's processor connection; the secret is never returned.
func (h *Management) GetPaymentProcessor(ctx context.Context, req gen.GetPaymentProcessorRequestObject) (gen.GetPaymentProcessorResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	c, err := payments.Get(ctx, h.DB, req.ProgramId, payments.ProviderStripe)
	if errors.Is(err, payments.ErrNotConnected) {
		return gen.GetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: h.wireProcessor(req.ProgramId, nil)}}, nil
	}
	if err != nil {
		return nil, err
	}
	return gen.GetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: h.wireProcessor(req.ProgramId, &c)}}, nil
}

// SetPaymentProcessor stores the processor's webhook signing secret (owner or admin).
func (h *Management) SetPaymentProcessor(ctx context.Context, req gen.SetPaymentProcessorRequestObject) (gen.SetPaymentProcessorResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProcessorWrite); err != nil {
		return nil, err
	}
	c, err := payments.Connect(ctx, h.DB, req.ProgramId, string(req.Body.Provider), req.Body.WebhookSecret)
	if err != nil {
		return nil, err
	}
	return gen.SetPaymentProcessor200JSONResponse{Body: gen.PaymentProcessorEnvelope{Data: h.wireProcessor(req.ProgramId, &c)}}, nil
}

func (h *Management) wireProcessor(programID int64, c *payments.Connection) gen.PaymentProcessor {
	out := gen.PaymentProcessor{WebhookUrl: h.BaseURL + "/api/v1/webhooks/stripe/" + strconv.FormatInt(programID, 10)}
	if c != nil {
		p := gen.PaymentProcessorProvider(c.Provider)
		out.Provider, out.WebhookSecretSet, out.UpdatedAt = &p, true, &c.UpdatedAt
	}
	return out
}
