package readiness

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/programs"
)

// This file is every read of readiness and of `reftrack status`: the gates (gates.go) are pure
// functions of the facts read here. The counted-event queries are kept together below, so that how an
// event counts is defined in one place.

// facts is what the gates look at, read in one go by readFacts.
type facts struct {
	Name         string     `db:"name"`
	Domain       string     `db:"domain"`
	Origins      int        `db:"origins"`
	Partners     int        `db:"partners"`
	ActiveLinks  int        `db:"active_links"`
	Processor    bool       `db:"processor"`
	Charges      bool       `db:"charges"`
	DNSVerified  bool       `db:"dns_verified"`
	DNSToken     string     `db:"dns_token"`
	LastClick    *time.Time `db:"last_click"`
	LastLead     *time.Time `db:"last_lead"`
	LastSale     *time.Time `db:"last_sale"`
	Clicks24h    int        `db:"clicks"`
	Leads24h     int        `db:"leads"`
	Sales24h     int        `db:"sales"`
	ServerLeads  int        `db:"server_leads"`
	CommissionOK bool       `db:"commission_ok"`
	// KeyRotatedAt is when the program's key was last regenerated (apikeys.RotatedAt).
	KeyRotatedAt *time.Time `db:"-"`
	// Verdict is the program's last synthetic chain's verdict, nil before any chain ran.
	Verdict *Verdict `db:"-"`
}

// How every view of a program's activity counts its events (readiness, the dashboard, which shows
// readiness's counts, and `reftrack status`): as the counts count them (pkg/counting: test events, the
// synthetic chain's included, bots' clicks and provisional leads never count). Over a time, the hourly
// counts serve every hour after the one the time falls in, and the rows only in that first, cut hour
// (counting's row rules); so a busy program's day (137 000 clicks at 50 M a year) costs a few dozen rows,
// not a scan of the day.
const (
	countedClicks = `FROM clicks WHERE program_id = p.id AND ` + counting.ClickRows
	countedLeads  = `FROM leads WHERE program_id = p.id AND ` + counting.LeadRows
	countedSales  = `FROM sales WHERE program_id = p.id AND ` + counting.SaleRows
)

// countsSince selects the program p's counted events since $2 as clicks, leads and sales: the cut hour's
// rows, and the whole hours after it from hoursSince (in the query's FROM, beside programs p).
const countsSince = `(SELECT count(*) ` + countedClicks + ` AND click_timestamp > $2 AND click_timestamp < ` + nextHour + `) + h.clicks AS clicks,
	(SELECT count(*) ` + countedLeads + ` AND lead_timestamp > $2 AND lead_timestamp < ` + nextHour + `) + h.leads AS leads,
	(SELECT count(*) ` + countedSales + ` AND sale_date > $2 AND sale_date < ` + nextHour + `) + h.sales AS sales`

// hoursSince joins programs p to its hourly counts after the hour $2 falls in, read once for the three
// kinds of event.
const hoursSince = `CROSS JOIN LATERAL (SELECT COALESCE(sum(clicks), 0) AS clicks, COALESCE(sum(leads), 0) AS leads,
	COALESCE(sum(sales), 0) AS sales FROM performance_hourly_live WHERE program_id = p.id AND hour >= ` + nextHour + `) h`

// nextHour is the start of the hour after the one $2 falls in (the counts' hours are UTC).
const nextHour = `(date_trunc('hour', $2::timestamptz, 'UTC') + interval '1 hour')`

// programFacts selects the program $1's facts, its counts since $2 (counted events only; real partners
// only: the synthetic chain's partner and its link do not pass the payout gate).
const programFacts = `SELECT p.name, p.domain, cardinality(p.allowed_origins) AS origins,
		` + programs.RealPartners + ` AS partners,
		(SELECT count(*) FROM referral_links l JOIN partners pa ON pa.id = l.partner_id
		 WHERE l.program_id = p.id AND l.enabled AND NOT pa.synthetic) AS active_links,
		EXISTS (SELECT 1 FROM processor_connections WHERE program_id = p.id) AS processor,
		EXISTS (SELECT 1 FROM processor_connections WHERE program_id = p.id AND charges_enabled) AS charges,
		p.dns_verified_at IS NOT NULL AS dns_verified, p.dns_token,
		(SELECT max(click_timestamp) ` + countedClicks + `) AS last_click,
		(SELECT max(lead_timestamp) ` + countedLeads + `) AS last_lead,
		(SELECT max(sale_date) ` + countedSales + `) AS last_sale,
		` + countsSince + `,
		(SELECT count(*) ` + countedLeads + ` AND source IN ('server', 'webhook')) AS server_leads,
		(p.commission_rate > 0) AS commission_ok
		FROM programs p ` + hoursSince + ` WHERE p.id = $1`

// lastVerdict selects the program $1's last synthetic chain's verdict.
const lastVerdict = `SELECT click_verdict, lead_verdict, sale_verdict FROM synthetic_chains
		WHERE program_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`

// readFacts reads the program's facts, with its counts over the 24 hours before now: ErrNoProgram when
// db does not have it.
func readFacts(ctx context.Context, db *sqlx.DB, programID int64, now time.Time) (facts, error) {
	var f facts
	err := db.GetContext(ctx, &f, programFacts, programID, now.Add(-24*time.Hour))
	if errors.Is(err, sql.ErrNoRows) {
		return facts{}, ErrNoProgram
	}
	if err != nil {
		return facts{}, err
	}
	if f.KeyRotatedAt, err = apikeys.RotatedAt(ctx, db, programID); err != nil {
		return facts{}, err
	}
	var v Verdict
	err = db.GetContext(ctx, &v, lastVerdict, programID)
	switch {
	case err == nil:
		f.Verdict = &v
	case !errors.Is(err, sql.ErrNoRows):
		return facts{}, err
	}
	return f, nil
}

// Activity is what `reftrack status` shows of a program: counted events since a time (as readiness
// counts them), real partners and pending commissions.
type Activity struct {
	Clicks             int `db:"clicks"`
	Leads              int `db:"leads"`
	Sales              int `db:"sales"`
	ActivePartners     int `db:"partners"`
	PendingCommissions int `db:"pending"`
}

// RecentActivity reads the program's Activity since a time.
func RecentActivity(ctx context.Context, q sqlx.QueryerContext, programID int64, since time.Time) (Activity, error) {
	var a Activity
	err := sqlx.GetContext(ctx, q, &a, `SELECT `+countsSince+`,
		`+programs.RealPartners+` AS partners,
		(SELECT count(*) FROM commissions WHERE program_id = p.id AND status = 'pending' AND NOT is_test) AS pending
		FROM programs p `+hoursSince+` WHERE p.id = $1`, programID, since)
	return a, err
}
