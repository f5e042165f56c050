// Package attribution owns customers: it resolves who a lead or a sale belongs to (the click behind a
// click_id, and the customer behind a customer_key or a click, always within one program) and moves a
// customer through its statuses. First click wins: once a customer is bound to a partner, later clicks
// never move it. Leads, sales and payment webhooks all use these same functions.
package attribution

import (
	"errors"
	"math"
	"time"
	"unicode/utf8"
)

// ErrKeyTooLong refuses a customer_key longer than MaxKeyLength.
var ErrKeyTooLong = errors.New("customer_key is too long")

// MaxKeyLength is the longest customer_key, in characters. Customers are found by key through a unique
// index, whose entries have a size limit (a few KiB) that a longer key could pass.
const MaxKeyLength = 255

// CheckKey refuses a customer_key longer than MaxKeyLength.
func CheckKey(key string) error {
	if utf8.RuneCountInString(key) > MaxKeyLength {
		return ErrKeyTooLong
	}
	return nil
}

// Customer statuses, in order.
const (
	StatusVisitor   = "visitor"
	StatusLead      = "lead"
	StatusConverted = "converted"
)

// Click is what attribution needs of a click.
type Click struct {
	ID        int64
	ClickID   string
	ProgramID int64
	PartnerID int64
	IsTest    bool
}

// Customer is a customer of one program.
type Customer struct {
	ID               int64      `db:"id"`
	ProgramID        int64      `db:"program_id"`
	Key              *string    `db:"customer_key"`
	ClickRef         *int64     `db:"click_ref"`
	ClickID          *string    `db:"click_id"`
	ClickTimestamp   *time.Time `db:"click_timestamp"`
	PartnerID        *int64     `db:"partner_id"`
	PartnerProgramID *int64     `db:"partner_program_id"`
	Status           string     `db:"status"`
	SignedUpAt       *time.Time `db:"signed_up_at"`
	ConvertedAt      *time.Time `db:"converted_at"`
	IsTest           bool       `db:"is_test"`
}

// A lead's writes of customers are this package's database functions (pkg/attribution/sql), called by
// pkg/leads' leads_settle: attribution_create_lead makes a customer from the lead's click and
// attribution_mark_lead moves one to lead. (leads_state, pkg/leads' read, reads the customer and
// locks nothing; leads_settle writes only while the customer is still the version read.)

// A sale's writes of customers are this package's database functions (pkg/attribution/sql), called by the
// sale's statement (pkg/sales' sales_record): attribution_lock_unchanged (lock customers still at the
// version read), attribution_create_converted (make a buyer's customer from its click) and
// attribution_convert.

// WindowCheck is the attribution-window rule for a sale: until a conversion is recorded, the click must
// be at most windowDays older than the customer's signup, or than the payment when there was none.
type WindowCheck struct {
	Expired      bool
	ClickAgeDays int
	WindowDays   int
}

// CheckWindow applies the rule to c for a payment at paidAt.
func CheckWindow(c Customer, windowDays int, paidAt time.Time) WindowCheck {
	w := WindowCheck{WindowDays: windowDays}
	if c.Status == StatusConverted || c.ClickTimestamp == nil {
		return w // checked until the first conversion only; a customer without a click has nothing to check
	}
	ref := paidAt
	if c.SignedUpAt != nil {
		ref = *c.SignedUpAt
	}
	age := ref.Sub(*c.ClickTimestamp)
	w.ClickAgeDays = int(math.Floor(age.Hours() / 24))
	w.Expired = age > time.Duration(windowDays)*24*time.Hour
	return w
}
