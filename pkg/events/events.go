// Package events lists a program's merged click, lead and conversion events, newest first, with exact
// pagination: total counts the whole filtered set and every page is reachable.
//
// Totals and deep pages come from the hourly event_counts (kept exact by triggers): the page's first
// hour is found by summing hours, then one merged index scan starts at that hour's end and skips only
// the events of that hour before the page. Page 1 and page 100 000 cost about the same.
package events

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
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
	typ, table, ts, where, columns string
}

var sources = []source{
	{Conversion, "sales", "sale_date", "NOT is_test", `'conversion' AS event_type, 0 AS rank, id, sale_date AS ts, click_id,
		NULL::text AS session_id, NULL::text AS page_url, NULL::text AS referrer_url, NULL::text AS geo_country,
		NULL::text AS geo_region, NULL::text AS geo_city, NULL::text AS device_type, NULL::text AS device_os,
		NULL::text AS browser_name, NULL::text AS customer_key, NULL::boolean AS converted, amount_cents, currency,
		sale_type, payment_status, processor_event_id, is_recurring, created_at`},
	{Lead, "leads", "lead_timestamp", "NOT is_test", `'lead' AS event_type, 1 AS rank, id, lead_timestamp AS ts, click_id,
		session_id, page_url, NULL::text AS referrer_url, NULL::text AS geo_country, NULL::text AS geo_region,
		NULL::text AS geo_city, NULL::text AS device_type, NULL::text AS device_os, NULL::text AS browser_name,
		customer_key, converted, NULL::bigint AS amount_cents, NULL::text AS currency, NULL::text AS sale_type,
		NULL::text AS payment_status, NULL::text AS processor_event_id, NULL::boolean AS is_recurring, created_at`},
	{Click, "clicks", "click_timestamp", "NOT is_test AND NOT is_bot", `'click' AS event_type, 2 AS rank, id, click_timestamp AS ts,
		click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city, device_type, device_os,
		browser_name, NULL::text AS customer_key, converted, NULL::bigint AS amount_cents, NULL::text AS currency,
		NULL::text AS sale_type, NULL::text AS payment_status, NULL::text AS processor_event_id,
		NULL::boolean AS is_recurring, created_at`},
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

// List returns page (1-based) of size events and the total.
func List(ctx context.Context, db *sqlx.DB, f Filter, page, size int) (Page, error) {
	out := Page{Events: []Event{}}
	if f.From != nil && f.To != nil && f.From.After(*f.To) {
		return out, nil
	}
	// The hours cut by From or To also hold events outside the bounds: count those exactly.
	var edges [2]struct {
		hour *time.Time
		n    int64
	}
	cut := func(i int, h time.Time) error {
		n, err := count(ctx, db, f, h, h.Add(time.Hour))
		edges[i].hour, edges[i].n = &h, n
		return err
	}
	if f.From != nil {
		if err := cut(0, f.From.UTC().Truncate(time.Hour)); err != nil {
			return Page{}, err
		}
	}
	if f.To != nil {
		if h := f.To.UTC().Truncate(time.Hour); edges[0].hour == nil || !edges[0].hour.Equal(h) {
			if err := cut(1, h); err != nil {
				return Page{}, err
			}
		}
	}
	offset := int64(page-1) * int64(size)
	a := args{}
	where := "program_id = " + a.add(f.ProgramID)
	if f.Type != "" {
		where += " AND event_type = " + a.add(f.Type)
	}
	if f.From != nil {
		where += " AND hour >= " + a.add(f.From.UTC().Truncate(time.Hour))
	}
	if f.To != nil {
		where += " AND hour <= " + a.add(*f.To)
	}
	e0h, e0n, e1h, e1n := a.add(edges[0].hour), a.add(edges[0].n), a.add(edges[1].hour), a.add(edges[1].n)
	off := a.add(offset)
	// One round trip: the total, and the hour the page starts in with the count of later events.
	var row struct {
		Total  int64      `db:"total"`
		Hour   *time.Time `db:"hour"`
		Before *int64     `db:"before"`
	}
	err := db.GetContext(ctx, &row, `WITH h AS (
			SELECT hour, CASE WHEN hour = `+e0h+`::timestamptz THEN `+e0n+`::bigint
			                  WHEN hour = `+e1h+`::timestamptz THEN `+e1n+`::bigint ELSE sum(n) END AS n
			FROM event_counts WHERE `+where+` GROUP BY hour),
		w AS (SELECT hour, n, sum(n) OVER (ORDER BY hour DESC) - n AS before FROM h WHERE n > 0)
		SELECT t.total, w.hour, w.before FROM (SELECT coalesce(sum(n), 0)::bigint AS total FROM h) t
		LEFT JOIN w ON w.before <= `+off+`::bigint AND w.before + w.n > `+off+`::bigint`, a...)
	if err != nil {
		return Page{}, err
	}
	out.Total = row.Total
	if row.Hour == nil {
		return out, nil // past the last page
	}
	upper := row.Hour.Add(time.Hour)
	out.Events, err = scan(ctx, db, f, &upper, offset-*row.Before, size)
	return out, err
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

// count counts the filtered events with lo <= ts < hi (and within From and To).
func count(ctx context.Context, db *sqlx.DB, f Filter, lo, hi time.Time) (int64, error) {
	var parts []string
	a := args{}
	program, from, to := a.add(f.ProgramID), a.add(lo), a.add(hi)
	for _, s := range f.sources() {
		parts = append(parts, fmt.Sprintf(`(SELECT count(*) FROM %s WHERE program_id = %s AND %s AND %s >= %s AND %s < %s%s)`,
			s.table, program, s.where, s.ts, from, s.ts, to, f.bounds(&a, s.ts)))
	}
	var n int64
	err := db.GetContext(ctx, &n, `SELECT `+strings.Join(parts, " + "), a...)
	return n, err
}

// scan reads the merged events before upper (and within From and To), newest first, skipping skip.
func scan(ctx context.Context, db *sqlx.DB, f Filter, upper *time.Time, skip int64, size int) ([]Event, error) {
	var parts []string
	a := args{}
	program, before, off, limit := a.add(f.ProgramID), a.add(*upper), a.add(skip), a.add(size)
	for _, s := range f.sources() {
		parts = append(parts, fmt.Sprintf(`(SELECT %s FROM %s WHERE program_id = %s AND %s AND %s < %s%s ORDER BY %s DESC, id DESC LIMIT %s::bigint + %s::bigint)`,
			s.columns, s.table, program, s.where, s.ts, before, f.bounds(&a, s.ts), s.ts, off, limit))
	}
	q := `SELECT event_type, id, ts, click_id, session_id, page_url, referrer_url, geo_country, geo_region, geo_city,
		device_type, device_os, browser_name, customer_key, converted, amount_cents, currency, sale_type, payment_status,
		processor_event_id, is_recurring, created_at FROM (` + strings.Join(parts, " UNION ALL ") + `) e
		ORDER BY ts DESC, rank, id DESC OFFSET ` + off + ` LIMIT ` + limit
	list := []Event{}
	err := db.SelectContext(ctx, &list, q, a...)
	return list, err
}
