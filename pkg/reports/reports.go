// Package reports answers how a program's partners perform over a period: clicks, leads, sales, revenue
// and commission, in totals against the period before, per day and per partner. It reads the per-day
// counts the events' writers add (pkg/counting's rules; performance_daily and its siblings), never the events themselves, so
// a period costs its days (and partners), not its events.
package reports

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Period is how far back a report looks: the last 7, 30 or 90 UTC days, today included, or everything.
type Period string

// The periods.
const (
	Week    Period = "7d"
	Month   Period = "30d"
	Quarter Period = "90d"
	All     Period = "all"
)

// days is the period's length; 0 for All.
func (p Period) days() (int, error) {
	switch p {
	case Week:
		return 7, nil
	case Month:
		return 30, nil
	case Quarter:
		return 90, nil
	case All:
		return 0, nil
	}
	return 0, fmt.Errorf("reports: no period %q", string(p))
}

// Totals are a period's figures. Money is in one currency; the counts are of every currency's events.
type Totals struct {
	Clicks, Leads, Sales          int64 // Leads: settled ones (a provisional lead counts nowhere)
	Customers                     int64 // whose first sale falls in the period
	RevenueCents, CommissionCents int64
	BotClicks                     int64   // the bots' clicks, not counted in Clicks
	Partners                      int64   // with a click, lead or sale in the period
	ConversionRate                float64 // customers per click, to four decimals
	LeadRate                      float64 // leads per click, to four decimals
	AverageOrderCents             int64   // revenue over the sales in the currency, rounded
}

// Day is one UTC day's figures.
type Day struct {
	Date                          time.Time
	Clicks, Leads, Sales          int64
	RevenueCents, CommissionCents int64
}

// Performance is a program's period: its totals, the previous period's (nil for All) and its days.
type Performance struct {
	Period   Period
	From, To time.Time // UTC days, both included
	Currency string
	Totals   Totals
	Previous *Totals
	Series   []Day
}

// span is the period's first and last UTC day at now; for All, from the program's first counted day.
func span(ctx context.Context, db sqlx.QueryerContext, programID int64, p Period, now time.Time) (from, to time.Time, err error) {
	n, err := p.days()
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	to = now.UTC().Truncate(24 * time.Hour)
	if n > 0 {
		return to.AddDate(0, 0, 1-n), to, nil
	}
	var first *time.Time
	// Each table answers min() from its index: two index probes.
	if err := sqlx.GetContext(ctx, db, &first, `SELECT least(
		(SELECT min(day) FROM performance_program_daily WHERE program_id = $1),
		(SELECT (min(hour) AT TIME ZONE 'UTC')::date FROM performance_deltas WHERE program_id = $1))`, programID); err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("reports: first day: %w", err)
	}
	from = to
	if first != nil && first.Before(to) {
		from = first.UTC()
	}
	return from, to, nil
}

// partnerRange is a query of the per-partner rows that add up to the UTC days from..to (both included) of
// the program $1: the months the span covers whole from performance_monthly, the days at its edges from
// performance_daily, so that a year of a hundred partners is some thousand rows, not 73 000. wholeFirst
// says from's month has nothing before from (All starts at the first counted day), so it is read whole.
// Its arguments are appended to args.
func partnerRange(args *[]any, from, to time.Time, wholeFirst bool) string {
	monthOf := func(t time.Time) time.Time { return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC) }
	m1 := monthOf(from)
	if m1.Before(from) && !wholeFirst {
		m1 = m1.AddDate(0, 1, 0)
	}
	m2 := monthOf(to.AddDate(0, 0, 1)) // the first month not whole
	arg := func(v any) string {
		*args = append(*args, v)
		return fmt.Sprintf("$%d::date", len(*args))
	}
	const cols = `partner_id, currency, clicks, bot_clicks, leads, sales, customers, revenue_cents, commission_cents`
	if !m1.Before(m2) {
		return `SELECT ` + cols + ` FROM performance_live WHERE program_id = $1 AND day BETWEEN ` + arg(from) + ` AND ` + arg(to)
	}
	return `SELECT ` + cols + ` FROM performance_monthly_live WHERE program_id = $1 AND month >= ` + arg(m1) + ` AND month < ` + arg(m2) + `
		UNION ALL
		SELECT ` + cols + ` FROM performance_live WHERE program_id = $1
			AND (day BETWEEN ` + arg(from) + ` AND ` + arg(m1.AddDate(0, 0, -1)) + ` OR day BETWEEN ` + arg(m2) + ` AND ` + arg(to) + `)`
}

// dayRow is one day's sums as the query gives them.
type dayRow struct {
	Day             time.Time `db:"day"`
	Clicks          int64     `db:"clicks"`
	BotClicks       int64     `db:"bot_clicks"`
	Leads           int64     `db:"leads"`
	Sales           int64     `db:"sales"`
	Customers       int64     `db:"customers"`
	RevenueCents    int64     `db:"revenue_cents"`
	CommissionCents int64     `db:"commission_cents"`
	CurrencySales   int64     `db:"currency_sales"`
}

// Program reports programID's period p at now, money in currency.
func Program(ctx context.Context, db sqlx.QueryerContext, programID int64, p Period, currency string, now time.Time) (Performance, error) {
	from, to, err := span(ctx, db, programID, p, now)
	if err != nil {
		return Performance{}, err
	}
	out := Performance{Period: p, From: from, To: to, Currency: currency}
	// The previous period is as many days just before; All has none.
	prevFrom := from
	if p != All {
		prevFrom = from.AddDate(0, 0, -int(to.Sub(from).Hours()/24)-1)
	}
	var rows []dayRow
	if err := sqlx.SelectContext(ctx, db, &rows, `SELECT day, sum(clicks)::bigint AS clicks, sum(bot_clicks)::bigint AS bot_clicks, sum(leads)::bigint AS leads,
			sum(sales)::bigint AS sales, sum(customers)::bigint AS customers,
			COALESCE(sum(revenue_cents) FILTER (WHERE currency = $4), 0)::bigint AS revenue_cents,
			COALESCE(sum(commission_cents) FILTER (WHERE currency = $4), 0)::bigint AS commission_cents,
			COALESCE(sum(sales) FILTER (WHERE currency = $4), 0)::bigint AS currency_sales
		FROM performance_program_live WHERE program_id = $1 AND day BETWEEN $2 AND $3 GROUP BY day ORDER BY day`,
		programID, prevFrom, to, currency); err != nil {
		return Performance{}, fmt.Errorf("reports: days: %w", err)
	}
	var partners struct {
		Current  int64 `db:"current"`
		Previous int64 `db:"previous"`
	}
	args := []any{programID}
	curQ := partnerRange(&args, from, to, p == All)
	prevQ := "SELECT 0::bigint AS partner_id, 0::bigint AS clicks, 0::bigint AS leads, 0::bigint AS sales WHERE false"
	if p != All {
		prevQ = partnerRange(&args, prevFrom, from.AddDate(0, 0, -1), false)
	}
	active := func(q string) string {
		return `(SELECT count(*) FROM (SELECT 1 FROM (` + q + `) r WHERE partner_id <> 0 GROUP BY partner_id HAVING sum(clicks + leads + sales) > 0) a)`
	}
	if err := sqlx.GetContext(ctx, db, &partners, `SELECT `+active(curQ)+` AS current, `+active(prevQ)+` AS previous`, args...); err != nil {
		return Performance{}, fmt.Errorf("reports: partners: %w", err)
	}

	var cur, prev dayRow
	byDay := make(map[time.Time]dayRow, len(rows))
	for _, r := range rows {
		r.Day = r.Day.UTC()
		if r.Day.Before(from) {
			add(&prev, r)
			continue
		}
		add(&cur, r)
		byDay[r.Day] = r
	}
	out.Totals = totals(cur, partners.Current)
	if p != All {
		t := totals(prev, partners.Previous)
		out.Previous = &t
	}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		r := byDay[d]
		out.Series = append(out.Series, Day{Date: d, Clicks: r.Clicks, Leads: r.Leads, Sales: r.Sales,
			RevenueCents: r.RevenueCents, CommissionCents: r.CommissionCents})
	}
	return out, nil
}

func add(sum *dayRow, r dayRow) {
	sum.Clicks += r.Clicks
	sum.BotClicks += r.BotClicks
	sum.Leads += r.Leads
	sum.Sales += r.Sales
	sum.Customers += r.Customers
	sum.RevenueCents += r.RevenueCents
	sum.CommissionCents += r.CommissionCents
	sum.CurrencySales += r.CurrencySales
}

func totals(r dayRow, partners int64) Totals {
	return Totals{Clicks: r.Clicks, BotClicks: r.BotClicks, Leads: r.Leads, Sales: r.Sales, Customers: r.Customers,
		RevenueCents: r.RevenueCents, CommissionCents: r.CommissionCents, Partners: partners,
		ConversionRate: Rate(r.Customers, r.Clicks), LeadRate: Rate(r.Leads, r.Clicks),
		AverageOrderCents: roundDiv(r.RevenueCents, r.CurrencySales)}
}

// Rate is n per click to four decimals, rounded half up as PostgreSQL's round(numeric, 4) does (the
// partners' list sorts by it there); 0 without clicks. The conversion rate is customers per click, the
// lead rate leads per click.
func Rate(n, clicks int64) float64 {
	return float64(roundDiv(n*10000, clicks)) / 10000
}

// roundDiv is a/b rounded half away from zero (PostgreSQL's round of a numeric); 0 when b is 0.
func roundDiv(a, b int64) int64 {
	if b == 0 {
		return 0
	}
	if (a < 0) != (b < 0) {
		return -roundDiv(-a, b)
	}
	if a < 0 {
		a, b = -a, -b
	}
	return (2*a + b) / (2 * b)
}

// Sort is the total a partners' list is sorted by.
type Sort string

// sortColumns are the partners' list's sort keys, as its query names them.
var sortColumns = map[Sort]string{
	"clicks": "clicks", "leads": "leads", "sales": "sales", "customers": "customers", "revenue_cents": "revenue_cents",
	"commission_cents": "commission_cents", "conversion_rate": "conversion_rate", "lead_rate": "lead_rate",
	"average_order_cents": "average_order_cents",
}

// PartnerRow is one partner's totals over a period.
type PartnerRow struct {
	PartnerID         int64   `db:"partner_id"`
	Name              string  `db:"name"`
	Email             string  `db:"email"`
	Clicks            int64   `db:"clicks"`
	Leads             int64   `db:"leads"`
	Sales             int64   `db:"sales"`
	Customers         int64   `db:"customers"`
	RevenueCents      int64   `db:"revenue_cents"`
	CommissionCents   int64   `db:"commission_cents"`
	ConversionRate    float64 `db:"conversion_rate"` // customers per click
	LeadRate          float64 `db:"lead_rate"`       // leads per click
	AverageOrderCents int64   `db:"average_order_cents"`
}

// PartnerList is a period's partners, in the order asked.
type PartnerList struct {
	Period     Period
	From, To   time.Time
	Currency   string
	Sort       Sort
	Descending bool
	Partners   []PartnerRow
}

// ErrSort is a sort key that is not one of the totals.
var ErrSort = errors.New("reports: no such sort key")

// Partners lists programID's partners with a click, lead or sale in period p at now, sorted by sort
// (then by partner id, ascending), the first limit of them.
func Partners(ctx context.Context, db sqlx.QueryerContext, programID int64, p Period, currency string, sort Sort, descending bool, limit int, now time.Time) (PartnerList, error) {
	col, ok := sortColumns[sort]
	if !ok {
		return PartnerList{}, ErrSort
	}
	from, to, err := span(ctx, db, programID, p, now)
	if err != nil {
		return PartnerList{}, err
	}
	dir := "ASC"
	if descending {
		dir = "DESC"
	}
	out := PartnerList{Period: p, From: from, To: to, Currency: currency, Sort: sort, Descending: descending, Partners: []PartnerRow{}}
	// The order by is one of sortColumns, never the caller's text.
	args := []any{programID, currency, limit}
	rows := partnerRange(&args, from, to, p == All)
	q := `SELECT t.partner_id, pa.name, pa.email, t.clicks, t.leads, t.sales, t.customers, t.revenue_cents, t.commission_cents,
			CASE WHEN t.clicks > 0 THEN round(t.customers::numeric / t.clicks, 4) ELSE 0 END::float8 AS conversion_rate,
			CASE WHEN t.clicks > 0 THEN round(t.leads::numeric / t.clicks, 4) ELSE 0 END::float8 AS lead_rate,
			CASE WHEN t.currency_sales > 0 THEN round(t.revenue_cents::numeric / t.currency_sales) ELSE 0 END::bigint AS average_order_cents
		FROM (SELECT partner_id, sum(clicks)::bigint AS clicks, sum(leads)::bigint AS leads, sum(sales)::bigint AS sales,
				sum(customers)::bigint AS customers, COALESCE(sum(revenue_cents) FILTER (WHERE currency = $2), 0)::bigint AS revenue_cents,
				COALESCE(sum(commission_cents) FILTER (WHERE currency = $2), 0)::bigint AS commission_cents,
				COALESCE(sum(sales) FILTER (WHERE currency = $2), 0)::bigint AS currency_sales
			FROM (` + rows + `) r WHERE partner_id <> 0
			GROUP BY partner_id HAVING sum(clicks + leads + sales) > 0) t
		JOIN partners pa ON pa.id = t.partner_id
		ORDER BY ` + col + ` ` + dir + `, t.partner_id LIMIT $3`
	if err := sqlx.SelectContext(ctx, db, &out.Partners, q, args...); err != nil {
		return PartnerList{}, fmt.Errorf("reports: partners: %w", err)
	}
	return out, nil
}
