// Package events lists a program's merged click, lead and conversion events, newest first, with exact
// pagination: total counts the whole filtered set and every page is reachable.
//
// Totals and deep pages come from the program's daily and hourly counts (performance_program_daily and
// performance_hourly, kept exact by the events' writers: pkg/counting): the page's first hour is found by
// adding up days, then hours; one merged index scan starts at that hour's end and skips only the events of
// that hour before the page. Page 1 and page 100 000 cost about the same. The list lists what the counts
// call listed: counted clicks, settled and provisional leads, sales; never a bot's click.
package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/counting"
)

// Types of event.
const (
	Click      = "click"
	Lead       = "lead"
	Conversion = "conversion"
)

// Filter selects events. Zero values mean no bound.
type Filter struct {
	ProgramID int64
	Type      string // "" for all three
	From, To  *time.Time
	// Test selects test events instead of real ones (the dashboard's test-data view).
	Test bool
}

// Event is one normalized event; fields beyond the common ones depend on the type.
type Event struct {
	Type             string    `db:"event_type"`
	ID               int64     `db:"id"`
	Timestamp        time.Time `db:"ts"`
	ClickID          *string   `db:"click_id"`
	SessionID        *string   `db:"session_id"`
	PageURL          *string   `db:"page_url"`
	ReferrerURL      *string   `db:"referrer_url"`
	GeoCountry       *string   `db:"geo_country"`
	GeoRegion        *string   `db:"geo_region"`
	GeoCity          *string   `db:"geo_city"`
	DeviceType       *string   `db:"device_type"`
	DeviceOS         *string   `db:"device_os"`
	BrowserName      *string   `db:"browser_name"`
	CustomerKey      *string   `db:"customer_key"`
	Converted        *bool     `db:"converted"`
	AmountCents      *int64    `db:"amount_cents"`
	Currency         *string   `db:"currency"`
	SaleType         *string   `db:"sale_type"`
	PaymentStatus    *string   `db:"payment_status"`
	ProcessorEventID *string   `db:"processor_event_id"`
	IsRecurring      *bool     `db:"is_recurring"`
	CreatedAt        time.Time `db:"created_at"`
}

// Page is one page and the size of the whole filtered set.
type Page struct {
	Events []Event
	Total  int64
}

// source is how one table becomes events.
type source struct {
	typ, table, ts, columns string
	bots                    bool // the table has bot rows, never listed
	// listed is what the counts hold of this type's listed events (an expression of their columns).
	listed string
}

// where selects the source's rows listed in the real or the test view: a bot's click is never listed.
// Written as the partial indexes' predicates, so that they serve.
func (s source) where(test bool) string {
	w := "NOT is_test"
	if test {
		w = "is_test"
	}
	if s.bots {
		w += " AND NOT is_bot"
	}
	return w
}

var sources = []source{
	{typ: Conversion, table: "sales", ts: "sale_date", columns: `'conversion' AS event_type, 0 AS rank, id, sale_date AS ts, click_id,
		NULL::text AS session_id, NULL::text AS page_url, NULL::text AS referrer_url, NULL::text AS geo_country,
		NULL::text AS geo_region, NULL::text AS geo_city, NULL::text AS device_type, NULL::text AS device_os,
		NULL::text AS browser_name, NULL::text AS customer_key, NULL::boolean AS converted, amount_cents, currency,
		sale_type, payment_status, processor_event_id, is_recurring, created_at`, listed: "sales"},
	{typ: Lead, table: "leads", ts: "lead_timestamp", columns: `'lead' AS event_type, 1 AS rank, id, lead_timestamp AS ts, click_id,
		session_id, page_url, NULL::text AS referrer_url, NULL::text AS geo_country, NULL::text AS geo_region,
		NULL::text AS geo_city, NULL::text AS device_type, NULL::text AS device_os, NULL::text AS browser_name,
		customer_key, converted, NULL::bigint AS amount_cents, NULL::text AS currency, NULL::text AS sale_type,
		NULL::text AS payment_status, NULL::text AS processor_event_id, NULL::boolean AS is_recurring, created_at`,
		listed: "leads + provisional_leads"},
	{typ: Click, table: "clicks", ts: "click_timestamp", bots: true, columns: `'click' AS event_type, 2 AS rank, id, click_timestamp AS ts,
		click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city, device_type, device_os,
		browser_name, NULL::text AS customer_key, converted, NULL::bigint AS amount_cents, NULL::text AS currency,
		NULL::text AS sale_type, NULL::text AS payment_status, NULL::text AS processor_event_id,
		NULL::boolean AS is_recurring, created_at`, listed: "clicks"},
}

// listed is what the counts hold of the filtered types' listed events, summed.
func (f Filter) listed() string {
	var terms []string
	for _, s := range f.sources() {
		terms = append(terms, s.listed)
	}
	return "sum(" + strings.Join(terms, " + ") + ")"
}

func (f Filter) sources() []source {
	var out []source
	for _, s := range sources {
		if f.Type == "" || f.Type == s.typ {
			out = append(out, s)
		}
	}
	return out
}

// segment is a span of time, newest first, and how many filtered events it holds.
type segment struct {
	Start time.Time `db:"start"`
	Hours int       `db:"-"` // 24 for a day, 1 for an hour
	N     int64     `db:"n"`
}

// List returns page (1-based) of size events and the total.
//
// The filtered set is cut into segments, newest first: whole UTC days from the daily counts, the hours
// of the days the bounds cut from the hourly counts, and the hours the bounds cut counted exactly. Their
// sum is the total; walking them finds the hour the page starts in (a day is opened into its hours).
func List(ctx context.Context, db *sqlx.DB, f Filter, page, size int) (Page, error) {
	out := Page{Events: []Event{}}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return out, nil
	}
	if f.Test {
		return listTest(ctx, db, f, page, size)
	}
	segs, err := segments(ctx, db, f)
	if err != nil {
		return Page{}, err
	}
	for _, sg := range segs {
		out.Total += sg.N
	}
	offset := int64(page-1) * int64(size)
	if offset >= out.Total {
		return out, nil
	}
	var before int64
	for _, sg := range segs {
		if before+sg.N <= offset {
			before += sg.N
			continue
		}
		if sg.Hours > 1 { // open the day into its hours
			hrs, err := hourly(ctx, db, f, sg.Start, sg.Start.Add(24*time.Hour))
			if err != nil {
				return Page{}, err
			}
			for _, h := range hrs {
				if before+h.N > offset {
					sg = h
					break
				}
				before += h.N
			}
		}
		upper := sg.Start.Add(time.Hour)
		out.Events, err = scan(ctx, db, f, &upper, offset-before, size)
		return out, err
	}
	return out, nil
}

// listTest lists test events by counting and skipping rows: test data is small (a chain is three events
// and runs at most ten times an hour), so it keeps no counts of its own.
func listTest(ctx context.Context, db *sqlx.DB, f Filter, page, size int) (Page, error) {
	out := Page{Events: []Event{}}
	var err error
	if out.Total, err = count(ctx, db, f, nil, nil); err != nil {
		return Page{}, err
	}
	offset := int64(page-1) * int64(size)
	if offset >= out.Total {
		return out, nil
	}
	out.Events, err = scan(ctx, db, f, nil, offset, size)
	return out, err
}

// segments cuts the filtered set into days and hours, newest first (see List).
func segments(ctx context.Context, db *sqlx.DB, f Filter) ([]segment, error) {
	day := func(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }
	var firstDay, lastDay *time.Time // the days cut by the bounds
	if f.From != nil {
		d := day(*f.From)
		firstDay = &d
	}
	if f.To != nil {
		d := day(*f.To)
		lastDay = &d
	}
	// Whole days between the cut ones.
	a := args{}
	where := "program_id = " + a.add(f.ProgramID)
	if firstDay != nil {
		where += " AND day > " + a.add(firstDay.Format("2006-01-02")) + "::date"
	}
	if lastDay != nil {
		where += " AND day < " + a.add(lastDay.Format("2006-01-02")) + "::date"
	}
	var days []segment
	n := f.listed()
	if err := db.SelectContext(ctx, &days, `SELECT day::timestamp AT TIME ZONE 'UTC' AS start, `+n+`::bigint AS n
		FROM performance_program_live WHERE `+where+` GROUP BY day HAVING `+n+` <> 0 ORDER BY day DESC`, a...); err != nil {
		return nil, err
	}
	for i := range days {
		days[i].Hours = 24
	}
	var out []segment
	if lastDay != nil {
		hrs, err := hourly(ctx, db, f, *lastDay, lastDay.Add(24*time.Hour))
		if err != nil {
			return nil, err
		}
		out = append(out, hrs...)
	}
	if firstDay == nil || lastDay == nil || firstDay.Before(*lastDay) {
		out = append(out, days...)
		if firstDay != nil {
			hrs, err := hourly(ctx, db, f, *firstDay, firstDay.Add(24*time.Hour))
			if err != nil {
				return nil, err
			}
			out = append(out, hrs...)
		}
	}
	return out, nil
}

// hourly is the filtered set's hours in [lo, hi), newest first; the hours the bounds cut are counted
// exactly.
func hourly(ctx context.Context, db *sqlx.DB, f Filter, lo, hi time.Time) ([]segment, error) {
	a := args{}
	where := "program_id = " + a.add(f.ProgramID) + " AND hour >= " + a.add(lo) + " AND hour < " + a.add(hi)
	n := f.listed()
	var hrs []segment
	if err := db.SelectContext(ctx, &hrs, `SELECT hour AS start, `+n+`::bigint AS n FROM performance_hourly_live WHERE `+where+
		` GROUP BY hour HAVING `+n+` <> 0 ORDER BY hour DESC`, a...); err != nil {
		return nil, err
	}
	kept := hrs[:0]
	for _, h := range hrs {
		h.Hours = 1
		end := h.Start.Add(time.Hour)
		if f.From != nil && !end.After(*f.From) || f.To != nil && f.To.Before(h.Start) {
			continue // outside the bounds
		}
		if f.From != nil && f.From.After(h.Start) || f.To != nil && f.To.Before(end) {
			n, err := count(ctx, db, f, &h.Start, &end)
			if err != nil {
				return nil, err
			}
			h.N = n
		}
		if h.N > 0 {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// args numbers query parameters as they are added.
type args []any

func (a *args) add(v any) string {
	*a = append(*a, v)
	return fmt.Sprintf("$%d", len(*a))
}

// bounds is the SQL for From and To on column ts.
func (f Filter) bounds(a *args, ts string) string {
	var b strings.Builder
	if f.From != nil {
		b.WriteString(" AND " + ts + " >= " + a.add(*f.From))
	}
	if f.To != nil {
		b.WriteString(" AND " + ts + " <= " + a.add(*f.To))
	}
	return b.String()
}

// count counts the filtered events with lo <= ts < hi (nil: no bound) and within From and To.
func count(ctx context.Context, db *sqlx.DB, f Filter, lo, hi *time.Time) (int64, error) {
	var parts []string
	a := args{}
	program := a.add(f.ProgramID)
	span := ""
	if lo != nil {
		span += " AND {ts} >= " + a.add(*lo)
	}
	if hi != nil {
		span += " AND {ts} < " + a.add(*hi)
	}
	for _, s := range f.sources() {
		parts = append(parts, fmt.Sprintf(`(SELECT count(*) FROM %s WHERE program_id = %s AND %s%s%s)`,
			s.table, program, s.where(f.Test), strings.ReplaceAll(span, "{ts}", s.ts), f.bounds(&a, s.ts)))
	}
	var n int64
	err := db.GetContext(ctx, &n, `SELECT `+strings.Join(parts, " + "), a...)
	return n, err
}

// scan reads the merged events before upper (nil: no bound) and within From and To, newest first,
// skipping skip.
func scan(ctx context.Context, db *sqlx.DB, f Filter, upper *time.Time, skip int64, size int) ([]Event, error) {
	var parts []string
	a := args{}
	program, off, limit := a.add(f.ProgramID), a.add(skip), a.add(size)
	before := ""
	if upper != nil {
		before = " AND {ts} < " + a.add(*upper)
	}
	for _, s := range f.sources() {
		parts = append(parts, fmt.Sprintf(`(SELECT %s FROM %s WHERE program_id = %s AND %s%s%s ORDER BY %s DESC, id DESC LIMIT %s::bigint + %s::bigint)`,
			s.columns, s.table, program, s.where(f.Test), strings.ReplaceAll(before, "{ts}", s.ts), f.bounds(&a, s.ts), s.ts, off, limit))
	}
	q := `SELECT event_type, id, ts, click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city,
		device_type, device_os, browser_name, customer_key, converted, amount_cents, currency, sale_type, payment_status,
		processor_event_id, is_recurring, created_at FROM (` + strings.Join(parts, " UNION ALL ") + `) e
		ORDER BY ts DESC, rank, id DESC OFFSET ` + off + ` LIMIT ` + limit
	list := []Event{}
	err := db.SelectContext(ctx, &list, q, a...)
	return list, err
}

// Day is one UTC day's count of each type of event.
type Day struct {
	Date        time.Time
	Clicks      int64
	Leads       int64
	Conversions int64
}

// MaxDays bounds the span Daily answers for.
const MaxDays = 366

// Daily counts the program's events per UTC day from the day of from to the day of to (both included),
// oldest first, every day present, as the counts count them (pkg/counting: a provisional lead counts
// nowhere). Real events are read from the daily counts; test events, which those leave out, are counted
// from their rows by the same rules.
func Daily(ctx context.Context, db *sqlx.DB, programID int64, test bool, from, to time.Time) ([]Day, error) {
	first, last := from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
	if last.Before(first) {
		return []Day{}, nil
	}
	var rows []struct {
		Day  time.Time `db:"day"`
		Type string    `db:"event_type"`
		N    int64     `db:"n"`
	}
	var q string
	a := args{}
	program, lo, hi := a.add(programID), a.add(first), a.add(last.Add(24*time.Hour))
	if test {
		var parts []string
		for _, s := range sources {
			counted := ""
			if s.typ == Lead {
				counted = " AND " + counting.SettledLeadRows
			}
			parts = append(parts, fmt.Sprintf(`SELECT '%s' AS event_type, date_trunc('day', %s, 'UTC') AS day, count(*) AS n
				FROM %s WHERE program_id = %s AND %s%s AND %s >= %s AND %s < %s GROUP BY 2`,
				s.typ, s.ts, s.table, program, s.where(true), counted, s.ts, lo, s.ts, hi))
		}
		q = strings.Join(parts, " UNION ALL ")
	} else {
		// One read of the counts, each row's three figures a row of its own.
		q = `SELECT v.event_type, c.day::timestamp AT TIME ZONE 'UTC' AS day, sum(v.n)::bigint AS n
			FROM performance_program_live c
			CROSS JOIN LATERAL (VALUES ('` + Click + `', c.clicks), ('` + Lead + `', c.leads), ('` + Conversion + `', c.sales)) AS v(event_type, n)
			WHERE c.program_id = ` + program + ` AND c.day >= (` + lo + `::timestamptz AT TIME ZONE 'UTC')::date
			AND c.day < (` + hi + `::timestamptz AT TIME ZONE 'UTC')::date GROUP BY 1, 2`
	}
	if err := db.SelectContext(ctx, &rows, q, a...); err != nil {
		return nil, err
	}
	n := int(last.Sub(first)/(24*time.Hour)) + 1
	out := make([]Day, n)
	for i := range out {
		out[i].Date = first.Add(time.Duration(i) * 24 * time.Hour)
	}
	for _, r := range rows {
		i := int(r.Day.UTC().Sub(first) / (24 * time.Hour))
		if i < 0 || i >= n {
			continue
		}
		switch r.Type {
		case Click:
			out[i].Clicks += r.N
		case Lead:
			out[i].Leads += r.N
		case Conversion:
			out[i].Conversions += r.N
		}
	}
	return out, nil
}
