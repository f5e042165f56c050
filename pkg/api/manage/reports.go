package manage

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/reports"
)

// reportCurrency is the money's currency a report asks for: the program's default unless named.
func reportCurrency(c *gen.PerformanceCurrency, def string) string {
	if c == nil {
		return def
	}
	return string(*c)
}

// reportPeriod is the period a report asks for (30 days unless named).
func reportPeriod[P ~string](p *P) reports.Period {
	if p == nil {
		return reports.Month
	}
	return reports.Period(*p)
}

func wireTotals(t reports.Totals) gen.PerformanceTotals {
	return gen.PerformanceTotals{Clicks: t.Clicks, BotClicks: t.BotClicks, Leads: t.Leads, Sales: t.Sales, Customers: t.Customers,
		RevenueCents: t.RevenueCents, CommissionCents: t.CommissionCents, Partners: t.Partners, ConversionRate: t.ConversionRate,
		LeadRate: t.LeadRate, AverageOrderCents: t.AverageOrderCents}
}

// GetPerformance reports a program's period against the one before, and its days.
func (h *Management) GetPerformance(ctx context.Context, req gen.GetPerformanceRequestObject) (gen.GetPerformanceResponseObject, error) {
	_, prog, err := h.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList)
	if err != nil {
		return nil, err
	}
	p, err := reports.Program(ctx, h.ReadDB, req.ProgramId, reportPeriod(req.Params.Period), reportCurrency(req.Params.Currency, prog.DefaultCurrency), h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.Performance{Period: gen.PerformancePeriodName(p.Period), Currency: gen.PerformanceCurrency(p.Currency),
		Totals: wireTotals(p.Totals), Series: make([]gen.PerformanceDay, len(p.Series))}
	out.DateFrom.Time, out.DateTo.Time = p.From, p.To
	if p.Previous != nil {
		t := gen.PerformancePrevious(wireTotals(*p.Previous))
		out.Previous = &t
	}
	for i, d := range p.Series {
		out.Series[i] = gen.PerformanceDay{Clicks: d.Clicks, Leads: d.Leads, Sales: d.Sales, RevenueCents: d.RevenueCents,
			CommissionCents: d.CommissionCents}
		out.Series[i].Date.Time = d.Date
	}
	return gen.GetPerformance200JSONResponse{Body: gen.PerformanceEnvelope{Data: out}}, nil
}

// GetPartnerPerformance reports a program's period per partner.
func (h *Management) GetPartnerPerformance(ctx context.Context, req gen.GetPartnerPerformanceRequestObject) (gen.GetPartnerPerformanceResponseObject, error) {
	_, prog, err := h.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList)
	if err != nil {
		return nil, err
	}
	q := req.Params
	sort, order, limit := gen.GetPartnerPerformanceParamsSortRevenueCents, gen.GetPartnerPerformanceParamsOrderDesc, 20
	if q.Sort != nil {
		sort = *q.Sort
	}
	if q.Order != nil {
		order = *q.Order
	}
	if q.Limit != nil {
		limit = *q.Limit
	}
	l, err := reports.Partners(ctx, h.ReadDB, req.ProgramId, reportPeriod(q.Period), reportCurrency(q.Currency, prog.DefaultCurrency),
		reports.Sort(sort), order == gen.GetPartnerPerformanceParamsOrderDesc, limit, h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.PartnerPerformanceList{Period: gen.PerformancePeriodName(l.Period), Currency: gen.PerformanceCurrency(l.Currency),
		Sort: gen.PartnerPerformanceListSort(l.Sort), Order: gen.PartnerPerformanceListOrder(order),
		Partners: make([]gen.PartnerPerformance, len(l.Partners))}
	out.DateFrom.Time, out.DateTo.Time = l.From, l.To
	for i, r := range l.Partners {
		out.Partners[i] = gen.PartnerPerformance{PartnerId: r.PartnerID, Name: r.Name, Email: r.Email, Clicks: r.Clicks,
			Leads: r.Leads, Sales: r.Sales, Customers: r.Customers, RevenueCents: r.RevenueCents, CommissionCents: r.CommissionCents,
			ConversionRate: r.ConversionRate, LeadRate: r.LeadRate, AverageOrderCents: r.AverageOrderCents}
	}
	return gen.GetPartnerPerformance200JSONResponse{Body: gen.PartnerPerformanceEnvelope{Data: out}}, nil
}
