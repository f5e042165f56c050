// Package counting holds the counting rules: what each event adds to its program's counts. They are
// decided here, in Go, when the event is written; the writers' statements add the deltas as they are (one
// row per key and batch), and pkg/events folds them into the hourly, daily and monthly counts that every
// view of a program's activity reads (reports, readiness, the events list, partner stats, the dashboard
// and the portal).
package counting

import (
	"cmp"
	"slices"
	"time"
)

// The rules:
//
//   - A test event counts nowhere (the test-data view lists them from their rows).
//   - A click counts once, unless a bot made it: then it counts apart, as a bot click.
//   - A lead counts once settled. A provisional lead is listed (the events list shows it) but counts
//     nowhere until it settles; settling moves it from listed to counted.
//   - A sale counts once, with its amount as revenue, and its customer as converted when it is their first.
//   - A commission counts what it earned less its reversals and clawbacks, on its sale's hour, unless it is
//     rejected.

// Delta is what events add to one key of the counts: a program's hour, partner and currency.
type Delta struct {
	ProgramID int64
	Hour      time.Time // UTC, at the hour
	PartnerID int64     // 0: no partner
	Currency  string    // "" for clicks and leads
	// Clicks are counted clicks; BotClicks clicks made by bots (counted apart).
	Clicks, BotClicks int64
	// Leads are settled leads; ProvisionalLeads leads listed but not counted until they settle.
	Leads, ProvisionalLeads int64
	// Sales are sales; Customers the customers whose first sale they are.
	Sales, Customers int64
	RevenueCents     int64
	CommissionCents  int64
}

// key is the part of a delta that says where it is counted.
type key struct {
	program, partner int64
	hour             time.Time
	currency         string
}

func (d Delta) key() key { return key{d.ProgramID, d.PartnerID, d.Hour, d.Currency} }

func (d Delta) zero() bool {
	return d.Clicks == 0 && d.BotClicks == 0 && d.Leads == 0 && d.ProvisionalLeads == 0 && d.Sales == 0 &&
		d.Customers == 0 && d.RevenueCents == 0 && d.CommissionCents == 0
}

func (d *Delta) add(o Delta) {
	d.Clicks += o.Clicks
	d.BotClicks += o.BotClicks
	d.Leads += o.Leads
	d.ProvisionalLeads += o.ProvisionalLeads
	d.Sales += o.Sales
	d.Customers += o.Customers
	d.RevenueCents += o.RevenueCents
	d.CommissionCents += o.CommissionCents
}

// hourOf is t's hour, in UTC.
func hourOf(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

// Click is what a click adds: one counted click, or one bot click; nothing for a test click.
func Click(programID, partnerID int64, at time.Time, test, bot bool) Delta {
	d := Delta{ProgramID: programID, PartnerID: partnerID, Hour: hourOf(at)}
	switch {
	case test:
	case bot:
		d.BotClicks = 1
	default:
		d.Clicks = 1
	}
	return d
}

// LeadChange is a lead written: a new one (provisional or settled), or a provisional one settling.
type LeadChange struct {
	ProgramID, PartnerID int64 // the partner it counts for: its click's, else its customer's (0: none)
	At                   time.Time
	Test                 bool
	Provisional          bool // the lead as written is provisional
	Settles              bool // a provisional lead written before now settles
}

// Lead is what a lead change adds: a provisional lead is listed only; a settled one counts, and one that
// settles moves from listed to counted.
func Lead(c LeadChange) Delta {
	d := Delta{ProgramID: c.ProgramID, PartnerID: c.PartnerID, Hour: hourOf(c.At)}
	switch {
	case c.Test:
	case c.Provisional:
		d.ProvisionalLeads = 1
	case c.Settles:
		d.Leads, d.ProvisionalLeads = 1, -1
	default:
		d.Leads = 1
	}
	return d
}

// SaleFacts is a sale written, with its commission (CommissionCents 0 when it pays none).
type SaleFacts struct {
	ProgramID, PartnerID int64
	At                   time.Time // the sale's time
	Currency             string
	AmountCents          int64
	FirstSale            bool // the customer's first recorded sale
	Test                 bool
	CommissionCents      int64
	CommissionRejected   bool
}

// Sale is what a sale adds: a sale, its revenue, a converted customer on their first sale, and its
// commission unless rejected. A test sale adds nothing.
func Sale(s SaleFacts) Delta {
	d := Delta{ProgramID: s.ProgramID, PartnerID: s.PartnerID, Hour: hourOf(s.At), Currency: s.Currency}
	if s.Test {
		return d
	}
	d.Sales, d.RevenueCents = 1, s.AmountCents
	if s.FirstSale {
		d.Customers = 1
	}
	if !s.CommissionRejected {
		d.CommissionCents = s.CommissionCents
	}
	return d
}

// Refund is what a refund of a sale (at saleAt) takes back: the refunded amount from its revenue, and
// from its commission what the refund reversed or clawed back.
func Refund(programID, partnerID int64, saleAt time.Time, currency string, test bool, refundedCents, commissionLostCents int64) Delta {
	d := Delta{ProgramID: programID, PartnerID: partnerID, Hour: hourOf(saleAt), Currency: currency}
	if !test {
		d.RevenueCents, d.CommissionCents = -refundedCents, -commissionLostCents
	}
	return d
}

// Rejected is what rejecting a commission (of a sale at saleAt) takes back: what it still counted for.
func Rejected(programID, partnerID int64, saleAt time.Time, currency string, test bool, countedCents int64) Delta {
	d := Delta{ProgramID: programID, PartnerID: partnerID, Hour: hourOf(saleAt), Currency: currency}
	if !test {
		d.CommissionCents = -countedCents
	}
	return d
}

// Merge adds up deltas of the same key and leaves out those that add nothing, in key order (so that
// concurrent writers insert in the same order).
func Merge(ds ...Delta) []Delta {
	sum := map[key]*Delta{}
	var out []Delta
	for _, d := range ds {
		if d.zero() {
			continue
		}
		if s, ok := sum[d.key()]; ok {
			s.add(d)
			continue
		}
		c := d
		sum[d.key()] = &c
	}
	for _, d := range sum {
		if !d.zero() {
			out = append(out, *d)
		}
	}
	slices.SortFunc(out, func(a, b Delta) int {
		return cmp.Or(cmp.Compare(a.ProgramID, b.ProgramID), a.Hour.Compare(b.Hour), cmp.Compare(a.PartnerID, b.PartnerID),
			cmp.Compare(a.Currency, b.Currency))
	})
	return out
}
