package sales

import (
	"slices"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/programs"
)

// state is what one read (stateCall, sales_state) found for a sale: everything the rules need, nothing locked.
type state struct {
	Ord         int64  `db:"ord"`
	DuplicateID *int64 `db:"duplicate_id"`
	// The program.
	ProgramFound    bool           `db:"program_found"`
	Currencies      pq.StringArray `db:"currencies"`
	DefaultCurrency *string        `db:"default_currency"`
	CommissionType  *string        `db:"commission_type"`
	CommissionRate  *string        `db:"commission_rate"`
	DurationMonths  *int           `db:"commission_duration_months"`
	WindowDays      *int           `db:"attribution_window_days"`
	HoldDays        *int           `db:"hold_days"`
	Approval        *string        `db:"commission_approval"`
	// The customer, by customer_key, else (no key) the first made from the click; with its row version.
	CustomerID             *int64     `db:"customer_id"`
	CustomerVersion        *string    `db:"customer_version"`
	CustomerKey            *string    `db:"customer_key"`
	CustomerClickRef       *int64     `db:"customer_click_ref"`
	CustomerClickID        *string    `db:"customer_click_id"`
	CustomerClickTimestamp *time.Time `db:"customer_click_timestamp"`
	PartnerID              *int64     `db:"partner_id"`
	PartnerProgramID       *int64     `db:"partner_program_id"`
	PartnerStatus          *string    `db:"partner_status"` // the customer's partner's enrollment
	Status                 *string    `db:"status"`
	SignedUpAt             *time.Time `db:"signed_up_at"`
	ConvertedAt            *time.Time `db:"converted_at"`
	CustomerTest           *bool      `db:"customer_test"`
	FirstSale              *time.Time `db:"first_sale"`
	// The click behind click_id (any program's), for a customer still to be made from it.
	ClickRef              *int64     `db:"click_ref"`
	ClickProgramID        *int64     `db:"click_program_id"`
	ClickPartnerID        *int64     `db:"click_partner_id"`
	ClickTimestamp        *time.Time `db:"click_timestamp"`
	ClickTest             *bool      `db:"click_test"`
	ClickPartnerProgramID *int64     `db:"click_partner_program_id"`
	ClickPartnerStatus    *string    `db:"click_partner_status"` // the click's partner's enrollment
}

// plan is what the rules decided for a sale that passed every check: who bought (an existing customer
// at a row version, or one to make from the click), whether the attribution window lets it count, and
// its commission (pkg/commission's outcome).
type plan struct {
	cust attribution.Customer // ID 0: made by the sale from its click
	// version is the existing customer's row version the decision rests on; nil when the sale makes the
	// customer from its click.
	version  *string
	window   attribution.WindowCheck
	test     bool
	first    bool   // the customer's first recorded sale
	currency string // the sale's: as sent, else the program's default
	outcome  commission.Outcome
}

// decide applies the rules to what was read, at now, in the order of the documented refusals: a used
// transaction_id, the customer (by key, else by click within the program), the partner-program
// relationship and the partner, the attribution window, then the commission (commission.Decide).
func decide(in Input, st state, now time.Time) (plan, error) {
	if !st.ProgramFound {
		return plan{}, ErrProgramNotFound
	}
	// The currency before the transaction_id: the interface refuses a currency with the body's members,
	// before a used transaction_id is looked for.
	var p plan
	if p.currency = in.Currency; p.currency == "" {
		p.currency = deref(st.DefaultCurrency)
	}
	if !slices.Contains(st.Currencies, p.currency) {
		shown := p.currency
		if in.CurrencyAsSent != "" {
			shown = in.CurrencyAsSent
		}
		return plan{}, &CurrencyError{Currency: shown, Supported: slices.Clone(st.Currencies)}
	}
	if st.DuplicateID != nil {
		return plan{}, &DuplicateError{SaleID: *st.DuplicateID, ProgramID: in.ProgramID}
	}
	var enrollment *string // the partner's enrollment in the program
	switch {
	case st.CustomerID != nil:
		p.cust = attribution.Customer{ID: *st.CustomerID, ProgramID: in.ProgramID, Key: st.CustomerKey,
			ClickRef: st.CustomerClickRef, ClickID: st.CustomerClickID, ClickTimestamp: st.CustomerClickTimestamp,
			PartnerID: st.PartnerID, PartnerProgramID: st.PartnerProgramID, Status: deref(st.Status),
			SignedUpAt: st.SignedUpAt, ConvertedAt: st.ConvertedAt, IsTest: deref(st.CustomerTest)}
		version := deref(st.CustomerVersion)
		p.version, enrollment = &version, st.PartnerStatus
	case in.ClickID == "" || st.ClickRef == nil:
		return plan{}, ErrCustomerNotFound
	case deref(st.ClickProgramID) != in.ProgramID:
		return plan{}, ErrOtherProgram
	default:
		// The sale makes the customer from the click (binding customer_key when given).
		clickID := in.ClickID
		p.cust = attribution.Customer{ProgramID: in.ProgramID, ClickRef: st.ClickRef, ClickID: &clickID,
			ClickTimestamp: st.ClickTimestamp, PartnerID: st.ClickPartnerID, PartnerProgramID: st.ClickPartnerProgramID,
			Status: attribution.StatusVisitor, IsTest: in.Test || deref(st.ClickTest)}
		if in.CustomerKey != "" {
			key := in.CustomerKey
			p.cust.Key = &key
		}
		enrollment = st.ClickPartnerStatus
	}
	if p.cust.PartnerProgramID == nil {
		return plan{}, ErrNoPartnerProgram
	}
	if p.cust.PartnerID == nil {
		return plan{}, ErrNoPartner
	}
	if p.window = attribution.CheckWindow(p.cust, deref(st.WindowDays), in.OccurredAt); p.window.Expired {
		return p, nil // nothing is recorded: the same transaction_id may come again
	}
	p.test, p.first = in.Test || p.cust.IsTest, st.FirstSale == nil
	var err error
	p.outcome, err = commission.Decide(commission.Input{
		Terms: commission.Terms{Type: deref(st.CommissionType), Rate: deref(st.CommissionRate), DurationMonths: st.DurationMonths,
			HoldDays: deref(st.HoldDays), Approval: deref(st.Approval)},
		Sale:          commission.Sale{AmountCents: in.AmountCents, Currency: p.currency, OccurredAt: in.OccurredAt, FirstSaleAt: st.FirstSale},
		PartnerBanned: deref(enrollment) == programs.StatusBanned,
		Now:           now,
	})
	if err != nil {
		return plan{}, &CommissionError{Err: err}
	}
	return p, nil
}

// result is what the sale route answers for a planned sale; the write fills in the ids.
func (p plan) result(programID int64) Result {
	return Result{Attribution: Attribution{ClickID: p.cust.ClickID, PartnerID: p.cust.PartnerID, ProgramID: programID},
		Window: p.window, Currency: p.currency}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
