// Package readiness tells an integrator, gate by gate and check by check, what a program still needs
// before it goes live.
package readiness

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Gate and check statuses.
const (
	Pass    = "pass"
	Fail    = "fail"
	Unknown = "unknown"
)

// GateNames in the order they are passed.
var GateNames = []string{"profile", "economics", "payout", "tracking", "live"}

// Gate is one stage of going live.
type Gate struct {
	Status     string
	NextAction *string
	// Verdict is the last synthetic chain's verdict per step (live gate only, once a chain ran).
	Verdict *Verdict
}

// Verdict is a synthetic chain's verdict per step.
type Verdict struct {
	Click string `db:"click_verdict"`
	Lead  string `db:"lead_verdict"`
	Sale  string `db:"sale_verdict"`
}

// Check is one thing the integration must have done.
type Check struct {
	ID     string
	Status string
	Hint   string
}

// Report is a program's readiness.
type Report struct {
	ProgramID           int64
	State               string
	IntegrationVerified bool
	Blocker             *string
	Gates               map[string]Gate
	Checks              []Check
	LastClick           *time.Time
	LastLead            *time.Time
	LastSale            *time.Time
	Clicks24h           int
	Leads24h            int
	Sales24h            int
	KeyRotatedAt        *time.Time
}

// PollSeconds is how often a client may poll readiness.
const PollSeconds = 30

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
}

// How every view of a program's activity counts its events (readiness, the dashboard, which shows
// readiness's counts, and `reftrack status`): real events only. Test events (the synthetic chain's
// included) and bot clicks never count, and a lead counts once settled (a provisional lead is a browser's
// claim that the brand's backend has not confirmed yet).
const (
	countedClicks = `FROM clicks WHERE program_id = p.id AND NOT is_test AND NOT is_bot`
	countedLeads  = `FROM leads WHERE program_id = p.id AND NOT is_test AND status = 'settled'`
	countedSales  = `FROM sales WHERE program_id = p.id AND NOT is_test`
)

// countsSince selects the program p's counted events since $2 as clicks, leads and sales. Clicks and
// sales are counted as the events list counts them: the hourly counts that the triggers keep exactly
// (pkg/events/sql: the same events, real and not bots) for every hour after the one $2 falls in, and
// the rows themselves only in that first, cut hour; so a busy program's day (137 000 clicks at 50 M a
// year) costs a few dozen rows, not a scan of the day. Leads are counted from their rows: the hourly
// counts include provisional leads, which do not count here.
const countsSince = `(SELECT count(*) ` + countedClicks + ` AND click_timestamp > $2 AND click_timestamp < ` + nextHour + `)
	+ (SELECT COALESCE(sum(n), 0) FROM event_counts_live WHERE program_id = p.id AND event_type = 'click' AND hour >= ` + nextHour + `) AS clicks,
	(SELECT count(*) ` + countedLeads + ` AND lead_timestamp > $2) AS leads,
	(SELECT count(*) ` + countedSales + ` AND sale_date > $2 AND sale_date < ` + nextHour + `)
	+ (SELECT COALESCE(sum(n), 0) FROM event_counts_live WHERE program_id = p.id AND event_type = 'conversion' AND hour >= ` + nextHour + `) AS sales`

// nextHour is the start of the hour after the one $2 falls in (the counts' hours are UTC).
const nextHour = `(date_trunc('hour', $2::timestamptz, 'UTC') + interval '1 hour')`

// ErrNoProgram means the program is not in the database read: deleted, or, on a replica, created less
// than the replica's lag ago.
var ErrNoProgram = errors.New("readiness: no such program")

// Compute reads everything in one query (counted events only; real partners only: the synthetic chain's
// partner and its link do not pass the payout gate). The 24-hour counts end at now.
func Compute(ctx context.Context, db *sqlx.DB, programID int64, now time.Time) (Report, error) {
	var f facts
	err := db.GetContext(ctx, &f, `SELECT p.name, p.domain, cardinality(p.allowed_origins) AS origins,
		`+programs.RealPartners+` AS partners,
		(SELECT count(*) FROM referral_links l JOIN partners pa ON pa.id = l.partner_id
		 WHERE l.program_id = p.id AND l.enabled AND NOT pa.synthetic) AS active_links,
		EXISTS (SELECT 1 FROM processor_connections WHERE program_id = p.id) AS processor,
		EXISTS (SELECT 1 FROM processor_connections WHERE program_id = p.id AND charges_enabled) AS charges,
		p.dns_verified_at IS NOT NULL AS dns_verified, p.dns_token,
		(SELECT max(click_timestamp) `+countedClicks+`) AS last_click,
		(SELECT max(lead_timestamp) `+countedLeads+`) AS last_lead,
		(SELECT max(sale_date) `+countedSales+`) AS last_sale,
		`+countsSince+`,
		(SELECT count(*) `+countedLeads+` AND source IN ('server', 'webhook')) AS server_leads,
		(p.commission_rate > 0) AS commission_ok
		FROM programs p WHERE p.id = $1`, programID, now.Add(-24*time.Hour))
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, ErrNoProgram
	}
	if err != nil {
		return Report{}, err
	}
	rotated, err := apikeys.RotatedAt(ctx, db, programID)
	if err != nil {
		return Report{}, err
	}
	r := Report{ProgramID: programID, LastClick: f.LastClick, LastLead: f.LastLead, LastSale: f.LastSale,
		Clicks24h: f.Clicks24h, Leads24h: f.Leads24h, Sales24h: f.Sales24h, KeyRotatedAt: rotated}

	check := func(id string, ok bool, hint string) Check {
		c := Check{ID: id, Status: Fail, Hint: hint}
		if ok {
			c.Status, c.Hint = Pass, "Done."
		}
		return c
	}
	// An optional check not done is unknown, never fail: nothing waits on it.
	optional := func(c Check) Check {
		if c.Status == Fail {
			c.Status = Unknown
		}
		return c
	}
	r.Checks = []Check{
		check("tracker_click_seen", f.LastClick != nil,
			"Install the tracker tag on every page and open your site through a referral link (?aff=…)."),
		check("server_lead_seen", f.ServerLeads > 0,
			"Report sign-ups from your backend: POST /api/v1/track/lead with the program key, the click_id and your customer_key."),
		check("sale_seen", f.LastSale != nil,
			"Report payments from your backend (POST /api/v1/track/sale) or connect your payment processor."),
		check("allowed_origins_set", f.Origins > 0,
			"List your site's origin (such as https://www.example.com) in the program's allowed origins."),
		optional(check("processor_connected", f.Processor,
			"Optional: connect your payment processor so payments are attributed without code.")),
		optional(check("processor_charges_seen", f.Charges,
			"Optional: once the processor is connected, a first live payment it reports proves its charges reach reftrack.")),
		domainCheck(f.DNSVerified, programs.DNSRecordOf(f.Domain, f.DNSToken)),
	}

	gate := func(ok bool, action string) Gate {
		if ok {
			return Gate{Status: Pass}
		}
		return Gate{Status: Fail, NextAction: &action}
	}
	firstFailing := func(ids ...string) (bool, string) {
		for _, c := range r.Checks {
			for _, id := range ids {
				if c.ID == id && c.Status != Pass {
					return false, c.Hint
				}
			}
		}
		return true, ""
	}
	trackingOK, trackingAction := firstFailing("allowed_origins_set", "tracker_click_seen", "server_lead_seen")
	r.Gates = map[string]Gate{
		"profile":   gate(f.Name != "" && f.Domain != "", "Give the program a name and your site's domain."),
		"economics": gate(f.CommissionOK, "Set the commission type and rate."),
		"payout":    gate(f.Partners > 0 && f.ActiveLinks > 0, "Add a partner and give them a referral link."),
		"tracking":  gate(trackingOK, trackingAction),
	}
	live := Gate{Status: Pass}
	if f.LastSale == nil {
		action := "Record a first real sale; until then going live is unverified."
		live = Gate{Status: Unknown, NextAction: &action}
	}
	var v Verdict
	err = db.GetContext(ctx, &v, `SELECT click_verdict, lead_verdict, sale_verdict FROM synthetic_chains
		WHERE program_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, programID)
	switch {
	case err == nil:
		live.Verdict = &v
	case !errors.Is(err, sql.ErrNoRows):
		return Report{}, err
	}
	r.Gates["live"] = live

	for _, name := range GateNames {
		if r.Gates[name].Status != Pass {
			n := name
			r.Blocker = &n
			break
		}
	}
	r.IntegrationVerified = r.Gates["tracking"].Status == Pass
	switch {
	case r.Gates["profile"].Status != Pass:
		r.State = "draft"
	case r.Gates["economics"].Status != Pass || r.Gates["payout"].Status != Pass:
		r.State = "configuring"
	case !r.IntegrationVerified:
		r.State = "ready"
	case r.Gates["live"].Status != Pass:
		r.State = "integration_verified"
	default:
		r.State = "live_verified"
	}
	return r, nil
}

// domainCheck is the optional domain_verified check: pass once verified, else unknown with the record to
// publish.
func domainCheck(verified bool, rec programs.DNSRecord) Check {
	if verified {
		return Check{ID: "domain_verified", Status: Pass, Hint: "Done."}
	}
	return Check{ID: "domain_verified", Status: Unknown, Hint: dnsHint(rec)}
}

// WithDNS is r with its domain_verified check as st, a DNS check made on the primary, says: that check
// may have just recorded the verification, which a report read from a replica does not show yet. The
// check is optional and in no gate, so nothing else changes.
func (r Report) WithDNS(st programs.DNSStatus) Report {
	r.Checks = slices.Clone(r.Checks)
	for i, c := range r.Checks {
		if c.ID == "domain_verified" {
			r.Checks[i] = domainCheck(st.Verified, st.Record)
		}
	}
	return r
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
		FROM programs p WHERE p.id = $1`, programID, since)
	return a, err
}

// dnsHint says which DNS record proves the program's domain.
func dnsHint(r programs.DNSRecord) string {
	return "Optional: prove the domain is yours with a DNS TXT record " + r.Name + " whose value is " + r.Value + "."
}
