// Package counting holds the counting rules: what each event adds to its program's counts. They are
// decided here, in Go, when the event is written. A writer whose events are written by a database
// function passes each event's Measures to it beside the event, and the function adds up the measures of
// the rows it wrote (pkg/events' performance_add); a writer in Go passes Deltas to pkg/events.Add in its
// transaction. pkg/events folds them into the hourly, daily and monthly counts that every view of a
// program's activity reads (reports, readiness, the events list, partner stats, the dashboard and the
// portal).
//
// The rules:
//
//   - A test event counts nowhere (the test-data view lists them from their rows).
//   - A click counts once, unless a bot made it: then it counts apart, as a bot click.
//   - A lead counts once settled. A provisional lead is listed (the events list shows it) but counts
//     nowhere until it settles; settling moves it from listed to counted.
//   - A sale counts once, with its amount as revenue, and its customer as converted when it is their first.
//   - A commission counts what it earned less its reversals and clawbacks, on its sale's hour, unless it is
//     rejected.
package counting

import (
	"time"
)

// Measures are what events add to one key of the counts.
type Measures struct {
	// Clicks are counted clicks; BotClicks clicks made by bots (counted apart).
	Clicks, BotClicks int64
	// Leads are settled leads; ProvisionalLeads leads listed but not counted until they settle.
	Leads, ProvisionalLeads int64
	// Sales are sales; Customers the customers whose first sale they are.
	Sales, Customers int64
	RevenueCents     int64
	CommissionCents  int64
}

// Key is where measures are counted: a program's UTC hour, partner (0: none) and currency ("" for clicks
// and leads).
type Key struct {
	ProgramID int64
	Hour      time.Time
	PartnerID int64
	Currency  string
}

// Delta is what events add at one key.
type Delta struct {
	Key
	Measures
}

// HourOf is t's hour in UTC, the counts' finest time.
func HourOf(t time.Time) time.Time { return t.UTC().Truncate(time.Hour) }

func (m *Measures) add(o Measures) {
	m.Clicks += o.Clicks
	m.BotClicks += o.BotClicks
	m.Leads += o.Leads
	m.ProvisionalLeads += o.ProvisionalLeads
	m.Sales += o.Sales
	m.Customers += o.Customers
	m.RevenueCents += o.RevenueCents
	m.CommissionCents += o.CommissionCents
}

// Negate is what takes m back.
func (m Measures) Negate() Measures {
	return Measures{-m.Clicks, -m.BotClicks, -m.Leads, -m.ProvisionalLeads, -m.Sales, -m.Customers, -m.RevenueCents,
		-m.CommissionCents}
}

// Click is what a click counts for: one counted click, or one bot click; nothing for a test click.
func Click(test, bot bool) Measures {
	switch {
	case test:
		return Measures{}
	case bot:
		return Measures{BotClicks: 1}
	}
	return Measures{Clicks: 1}
}

// Lead classes: what a lead counts for, stored with it (leads.counts_as) so that settling a provisional
// lead takes back exactly what it counted for.
const (
	LeadCounted     = "lead"        // a settled lead
	LeadProvisional = "provisional" // listed, not counted
	LeadNowhere     = ""            // a test lead
)

// Lead is the class of a lead: a test lead counts nowhere, a provisional one is listed only, a settled one
// counts.
func Lead(test, provisional bool) string {
	switch {
	case test:
		return LeadNowhere
	case provisional:
		return LeadProvisional
	}
	return LeadCounted
}

// The same rules for the readers that count rows rather than the counts (readiness's last events and the
// hour its 24 hours cut, the test-data view): SQL predicates over an event table's columns, held to the
// rules above by pkg/events' TestRowRulesAgree.
const (
	// ClickRows selects counted clicks (Click's Clicks).
	ClickRows = "NOT is_test AND NOT is_bot"
	// LeadRows selects counted leads: the class stored with each (Lead). A counted lead is never a test
	// one; saying so lets the leads' index of real events serve.
	LeadRows = "NOT is_test AND counts_as = 'lead'"
	// SaleRows selects counted sales (Sale).
	SaleRows = "NOT is_test"
	// SettledLeadRows selects, among test leads (which count nowhere), those the test-data view counts as
	// a real lead would count: settled, not provisional.
	SettledLeadRows = "status = 'settled'"
)

// LeadMeasures are what a lead of class counts for.
func LeadMeasures(class string) Measures {
	switch class {
	case LeadCounted:
		return Measures{Leads: 1}
	case LeadProvisional:
		return Measures{ProvisionalLeads: 1}
	}
	return Measures{}
}

// SaleFacts is a sale written, with its commission (CommissionCents 0 when it pays none).
type SaleFacts struct {
	AmountCents        int64
	FirstSale          bool // the customer's first recorded sale
	Test               bool
	CommissionCents    int64
	CommissionRejected bool
}

// Sale is what a sale counts for: a sale, its revenue, a converted customer on their first sale, and its
// commission unless rejected. A test sale counts nowhere.
func Sale(s SaleFacts) Measures {
	if s.Test {
		return Measures{}
	}
	m := Measures{Sales: 1, RevenueCents: s.AmountCents}
	if s.FirstSale {
		m.Customers = 1
	}
	if !s.CommissionRejected {
		m.CommissionCents = s.CommissionCents
	}
	return m
}

// Refund is what a refund of a sale takes back: the amount refunded now from its revenue, and from its
// commission what the refund reversed or clawed back. A test sale's refund takes back nothing.
func Refund(test bool, refundedCents, commissionLostCents int64) Measures {
	if test {
		return Measures{}
	}
	return Measures{RevenueCents: -refundedCents, CommissionCents: -commissionLostCents}
}

// Rejected is what rejecting a commission takes back: what it still counted for (its payable amount), on
// its sale's key. A test commission counted nothing.
func Rejected(test bool, payableCents int64) Measures {
	if test {
		return Measures{}
	}
	return Measures{CommissionCents: -payableCents}
}
