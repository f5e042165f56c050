package leads

import (
	"slices"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/programs"
)

// state is what the rules need of the database for one lead (pkg/leads/sql/leads_state.sql): the
// click behind its click_id, its program and the program's customer, each absent when nil.
type state struct {
	Ord            int64          `db:"ord"`
	ClickRef       *int64         `db:"click_ref"`
	ClickID        *string        `db:"click_id"`
	ClickProgramID *int64         `db:"click_program_id"`
	ClickPartnerID *int64         `db:"click_partner_id"`
	ClickTest      *bool          `db:"click_test"`
	ProgramID      *int64         `db:"program_id"`
	LeadAuth       *string        `db:"lead_auth"`
	AllowedOrigins pq.StringArray `db:"allowed_origins"`
	OwnerSuspended bool           `db:"owner_suspended"`
	Customer       *int64         `db:"customer_id"`
	Version        *string        `db:"customer_version"` // the customer row's xmin: the write needs it unchanged
	CustomerKey    *string        `db:"customer_key"`
	CustomerClick  *int64         `db:"customer_click_ref"`
	CustomerClkID  *string        `db:"customer_click_id"`
	PartnerID      *int64         `db:"customer_partner_id"`
	Status         *string        `db:"customer_status"`
	CustomerTest   *bool          `db:"customer_test"`
	// The click's provisional lead, with what it counts for (pkg/counting).
	Provisional         *int64  `db:"provisional_id"`
	ProvisionalTest     *bool   `db:"provisional_test"`
	ProvisionalCountsAs *string `db:"provisional_counts_as"`
}

// Kinds of write a plan asks for.
const (
	kindNone        = ""            // answered without writing (a provisional lead with no click to hold it)
	kindProvisional = "provisional" // a provisional lead on its click
	kindSettle      = "settle"      // a settled lead: the customer moves to lead
)

// plan is a lead decided: what to write and what to answer once written.
type plan struct {
	kind string
	// The settled lead's row: its customer (0: made now from the click, with key and partner) at the
	// version read, and the lead's program, click, key and test flag. A zero value is none: the write
	// sends it as NULL (writeInputOf).
	customer  int64
	version   string
	programID int64
	clickRef  int64 // 0: none
	clickID   string
	partnerID int64
	key       string
	email     string
	source    string
	test      bool
	// provisional is the click's provisional lead that the settled lead becomes (0: a new lead).
	provisional int64
	// What the lead counts for (pkg/counting): its class, stored with it, and what writing it adds to the
	// counts, under countPartner (its click's partner, else its customer's; 0: none).
	countsAs     string
	counts       counting.Measures
	countPartner int64
	res          Result
}

// decide applies the settlement rules to a lead and what the database holds for it.
func decide(in Input, st state) (plan, error) {
	var click *attribution.Click
	if st.ClickRef != nil {
		click = &attribution.Click{ID: *st.ClickRef, ClickID: *st.ClickID, ProgramID: *st.ClickProgramID,
			PartnerID: *st.ClickPartnerID, IsTest: *st.ClickTest}
	}
	programID := in.ProgramID
	switch {
	case in.ServerMode && click != nil && click.ProgramID != programID:
		return plan{}, ErrOtherProgram
	case !in.ServerMode && click != nil:
		programID = click.ProgramID // browser mode: the click decides the program (leads_state read that one)
	case programID == 0:
		return plan{}, ErrCustomerNotFound
	}
	switch {
	case st.ProgramID == nil:
		return plan{}, ErrCustomerNotFound
	case st.OwnerSuspended:
		// Server mode never gets here (its key is refused); a keyless lead is refused the same way.
		return plan{}, accounts.ErrSuspended
	case !in.ServerMode && in.Origin != "" && !slices.Contains(st.AllowedOrigins, in.Origin):
		return plan{}, ErrOriginNotAllowed
	case !in.ServerMode && st.LeadAuth != nil && *st.LeadAuth == programs.LeadAuthServerRequired:
		return provisional(in, st, click, programID)
	}
	return settle(in, st, click, programID)
}

// provisional plans a browser-mode lead on a server_required program, stored against its click. It never
// changes a customer and never reveals state: a repeat, or a lead after settlement, records nothing and
// answers the same.
func provisional(in Input, st state, click *attribution.Click, programID int64) (plan, error) {
	p := plan{kind: kindProvisional, programID: programID, key: in.CustomerKey, email: in.Email, source: SourceBrowser,
		res: Result{Provisional: true, ProgramID: programID, Attribution: Attribution{Status: "provisional", ProgramID: &programID}}}
	if click == nil {
		// No click to hold the lead: only a known customer_key gets the (empty) provisional answer.
		if st.Customer == nil {
			return plan{}, ErrCustomerNotFound
		}
		p.kind = kindNone
		return p, nil
	}
	p.clickRef, p.clickID, p.test = click.ID, click.ClickID, in.Test || click.IsTest
	p.res.Attribution.ClickID, p.res.Attribution.PartnerID = &click.ClickID, &click.PartnerID
	p.countsAs, p.countPartner = counting.Lead(p.test, true), click.PartnerID
	p.counts = counting.LeadMeasures(p.countsAs)
	return p, nil
}

// settle plans a settled lead: the customer (found by key, else by click, else made from the click) moves
// from visitor to lead, and a provisional lead of its click becomes the settled one.
func settle(in Input, st state, click *attribution.Click, programID int64) (plan, error) {
	p := plan{kind: kindSettle, programID: programID, email: in.Email, source: in.Source, test: in.Test,
		res: Result{ProgramID: programID, Attribution: Attribution{Status: "unattributed", ProgramID: &programID}}}
	switch {
	case st.Customer != nil && *st.Status != attribution.StatusVisitor:
		return plan{}, &StatusError{Status: *st.Status}
	case st.Customer != nil:
		// The lead's row takes the customer's key and click.
		p.customer, p.version = *st.Customer, *st.Version
		p.key, p.clickID, p.clickRef = deref(st.CustomerKey), deref(st.CustomerClkID), deref(st.CustomerClick)
		p.test = p.test || *st.CustomerTest
		p.res.CustomerKey, p.res.Attribution.ClickID, p.res.Attribution.PartnerID = st.CustomerKey, st.CustomerClkID, st.PartnerID
	case click == nil:
		return plan{}, ErrCustomerNotFound
	default:
		// A customer made now from the click, with the lead's key.
		p.key, p.clickRef, p.clickID, p.partnerID = in.CustomerKey, click.ID, click.ClickID, click.PartnerID
		p.test = p.test || click.IsTest
		if in.CustomerKey != "" {
			p.res.CustomerKey = &in.CustomerKey
		}
		p.res.Attribution.ClickID, p.res.Attribution.PartnerID = &click.ClickID, &click.PartnerID
	}
	if p.res.Attribution.PartnerID != nil {
		p.res.Attribution.Status = "attributed"
		p.countPartner = *p.res.Attribution.PartnerID
	}
	// The click's provisional lead becomes this one: it takes back what the provisional counted for, and
	// counts as a lead of both's test mode.
	p.countsAs = counting.Lead(p.test, false)
	if st.Provisional != nil && p.clickRef != 0 {
		p.provisional = *st.Provisional
		p.countsAs = counting.Lead(p.test || *st.ProvisionalTest, false)
		p.counts = counting.LeadMeasures(deref(st.ProvisionalCountsAs)).Negate()
	}
	p.counts.Leads += counting.LeadMeasures(p.countsAs).Leads
	return p, nil
}

// deref is the value p points to, or T's zero value when p is nil (an absent column).
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
