// Package portal is what a partner person sees in the partner portal: the programs their verified email
// is a partner of (in any workspace), and in each program where they are approved their links, daily
// stats, commissions (customers masked), balances, payouts and payout details. Every read is scoped to
// the partner records of the signed-in person; nothing here takes a partner id from the request.
package portal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Errors of this package.
var (
	// ErrProgramNotFound: the person is no partner of the program (or it does not exist): one answer for
	// both, so a partner learns nothing of programs that are not theirs.
	ErrProgramNotFound = errors.New("program not found")
	// ErrLinkCodesOff: the program does not let partners make their own link codes.
	ErrLinkCodesOff = errors.New("this program does not let partners make their own link codes")
	// ErrLinkCode: a link code out of its format.
	ErrLinkCode = errors.New("code must be 3 to 32 characters of a-z, 0-9 and -")
)

// NotApprovedError refuses the program's data to a partner whose enrollment is not approved (403).
type NotApprovedError struct{ Status string }

func (e *NotApprovedError) Error() string {
	switch e.Status {
	case programs.StatusInvited:
		return "Your invitation to this program is not accepted yet: open the link in the invitation mail"
	case programs.StatusPending:
		return "Your application to this program is waiting for the brand's approval"
	case programs.StatusRejected:
		return "Your application to this program was not accepted"
	}
	return "You are banned from this program"
}

// Program is one program of the person, as a partner of it.
type Program struct {
	ID           int64   `db:"id"`
	Name         string  `db:"name"`
	Domain       string  `db:"domain"`
	Slug         string  `db:"slug"`
	PartnerID    int64   `db:"partner_id"`
	Status       string  `db:"status"`
	StatusReason *string `db:"status_reason"`
	LinkCodes    bool    `db:"partner_link_codes"`
	programs.Terms
}

var programQuery = `SELECT pr.id, pr.name, pr.domain, pr.slug, pa.id AS partner_id,
	` + programs.StatusColumn + ` AS status, pp.status_reason, pr.partner_link_codes, ` + programs.TermsColumns("pr") + `
	FROM partners pa JOIN partner_programs pp ON pp.partner_id = pa.id JOIN programs pr ON pr.id = pp.program_id
	WHERE lower(pa.email) = lower($1) AND pp.status <> 'removed' AND NOT pa.synthetic`

// Programs are the person's programs, by name.
func Programs(ctx context.Context, db sqlx.QueryerContext, p logins.Person) ([]Program, error) {
	out := []Program{}
	err := sqlx.SelectContext(ctx, db, &out, programQuery+` ORDER BY pr.name, pr.id`, p.Email)
	return out, err
}

// Open is the person's program id, for reading its data: ErrProgramNotFound when they are no partner of
// it, a *NotApprovedError unless approved.
func Open(ctx context.Context, db sqlx.QueryerContext, p logins.Person, programID int64) (Program, error) {
	var out Program
	err := sqlx.GetContext(ctx, db, &out, programQuery+` AND pr.id = $2`, p.Email, programID)
	if errors.Is(err, sql.ErrNoRows) {
		return Program{}, ErrProgramNotFound
	}
	if err != nil {
		return Program{}, err
	}
	if out.Status != programs.StatusApproved {
		return Program{}, &NotApprovedError{Status: out.Status}
	}
	return out, nil
}

// Links are the partner's links in the program.
func Links(ctx context.Context, db sqlx.QueryerContext, pr Program) ([]programs.Link, error) {
	return programs.PartnerLinks(ctx, db, pr.ID, pr.PartnerID)
}

var linkCode = regexp.MustCompile(`^[a-z0-9-]{3,32}$`)

// CheckLinkCode refuses a link code out of its format.
func CheckLinkCode(code string) error {
	if !linkCode.MatchString(code) {
		return ErrLinkCode
	}
	return nil
}

// CreateLink makes a link with the partner's own code, when the program allows it; a code in use
// anywhere is a *programs.ShortLinkTakenError.
func CreateLink(ctx context.Context, db *sqlx.DB, pr Program, code string) (programs.Link, error) {
	if !pr.LinkCodes {
		return programs.Link{}, ErrLinkCodesOff
	}
	if err := CheckLinkCode(code); err != nil {
		return programs.Link{}, err
	}
	return programs.CreateLink(ctx, db, pr.ID, pr.PartnerID, code)
}

// Day is one UTC day of the partner's real events in the program: clicks (no bots), settled leads,
// sales by their date, and the commission of those sales by currency, less reversals and clawbacks
// (rejected ones pay nothing): the daily counts, as reports read them.
type Day struct {
	Day         time.Time
	Clicks      int64
	Leads       int64
	Sales       int64
	Commissions map[string]int64
}

// Periods are the stats' lengths a portal offers, in days.
var Periods = []int{7, 30, 90}

// Stats are the partner's last days days (one of Periods), oldest first, ending with now's UTC day.
func Stats(ctx context.Context, db sqlx.QueryerContext, pr Program, days int, now time.Time) ([]Day, error) {
	ok := false
	for _, d := range Periods {
		ok = ok || d == days
	}
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrPeriod, days)
	}
	last := now.UTC().Truncate(24 * time.Hour)
	first := last.AddDate(0, 0, -(days - 1))
	// The partner's rows of the daily counts (pkg/counting's rules, as reports read them): clicks and leads
	// in no currency, sales and commissions in theirs.
	var rows []struct {
		Day        time.Time `db:"day"`
		Currency   string    `db:"currency"`
		Clicks     int64     `db:"clicks"`
		Leads      int64     `db:"leads"`
		Sales      int64     `db:"sales"`
		Commission int64     `db:"commission_cents"`
	}
	err := sqlx.SelectContext(ctx, db, &rows, `SELECT day, currency, sum(clicks)::bigint AS clicks, sum(leads)::bigint AS leads,
			sum(sales)::bigint AS sales, sum(commission_cents)::bigint AS commission_cents
		FROM performance_live WHERE program_id = $1 AND partner_id = $2 AND day >= $3 GROUP BY 1, 2`, pr.ID, pr.PartnerID, first)
	if err != nil {
		return nil, err
	}
	out := make([]Day, days)
	for i := range out {
		out[i] = Day{Day: first.AddDate(0, 0, i), Commissions: map[string]int64{}}
	}
	for _, r := range rows {
		i := int(r.Day.UTC().Sub(first) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue // a day after now's (a sale dated ahead)
		}
		out[i].Clicks += r.Clicks
		out[i].Leads += r.Leads
		out[i].Sales += r.Sales
		if r.Currency != "" && (r.Commission != 0 || r.Sales != 0) {
			out[i].Commissions[r.Currency] += r.Commission
		}
	}
	return out, nil
}

// ErrPeriod refuses a stats period that is not one of Periods.
var ErrPeriod = errors.New("days must be 7, 30 or 90")
