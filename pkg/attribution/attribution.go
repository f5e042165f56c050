// Package attribution owns customers: it resolves who a lead or a sale belongs to (the click behind a
// click_id, and the customer behind a customer_key or a click, always within one program) and moves a
// customer through its statuses. First click wins: once a customer is bound to a partner, later clicks
// never move it. Leads, sales and payment webhooks all use these same functions.
package attribution

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
)

// Errors.
var (
	ErrClickNotFound    = errors.New("click not found")
	ErrCustomerNotFound = errors.New("customer not found")
	// ErrKeyTooLong refuses a customer_key longer than MaxKeyLength.
	ErrKeyTooLong = errors.New("customer_key is too long")
)

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
	ID        int64     `db:"id"`
	ClickID   string    `db:"click_id"`
	ProgramID int64     `db:"program_id"`
	PartnerID int64     `db:"partner_id"`
	Timestamp time.Time `db:"click_timestamp"`
	IsTest    bool      `db:"is_test"`
}

// FindClick reads the click behind a click_id (of any program; callers check the program).
func FindClick(ctx context.Context, q sqlx.QueryerContext, clickID string) (Click, error) {
	var c Click
	err := sqlx.GetContext(ctx, q, &c, `SELECT id, click_id, program_id, partner_id, click_timestamp, is_test
		FROM clicks WHERE click_id = $1`, clickID)
	if errors.Is(err, sql.ErrNoRows) {
		return Click{}, ErrClickNotFound
	}
	return c, err
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

const customerQuery = `SELECT cu.id, cu.program_id, cu.customer_key, cu.click_ref, c.click_id, c.click_timestamp,
	cu.partner_id, cu.partner_program_id, cu.status, cu.signed_up_at, cu.converted_at, cu.is_test
	FROM customers cu LEFT JOIN clicks c ON c.id = cu.click_ref`

// CustomerByKey finds the program's customer with this customer_key, locking its row for the caller's
// transaction.
func CustomerByKey(ctx context.Context, tx *sqlx.Tx, programID int64, key string) (Customer, error) {
	return getCustomer(ctx, tx, customerQuery+` WHERE cu.program_id = $1 AND cu.customer_key = $2 FOR UPDATE OF cu`, programID, key)
}

// CustomerByClick finds the program's (first) customer made from this click, locking its row.
func CustomerByClick(ctx context.Context, tx *sqlx.Tx, programID, clickRef int64) (Customer, error) {
	return getCustomer(ctx, tx, customerQuery+` WHERE cu.program_id = $1 AND cu.click_ref = $2 ORDER BY cu.id LIMIT 1 FOR UPDATE OF cu`, programID, clickRef)
}

func getCustomer(ctx context.Context, tx *sqlx.Tx, q string, args ...any) (Customer, error) {
	var c Customer
	err := tx.GetContext(ctx, &c, q, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return Customer{}, ErrCustomerNotFound
	}
	return c, err
}

// CreateFromClick makes a customer of the click's program, attributed to the click's partner (and its
// partner-program relationship when there is one), with key bound when given. When a concurrent
// transaction bound the same key first, that customer is returned instead. The row is locked.
func CreateFromClick(ctx context.Context, tx *sqlx.Tx, click Click, key, email string, isTest bool) (Customer, error) {
	var id int64
	err := tx.GetContext(ctx, &id, `INSERT INTO customers (program_id, customer_key, click_ref, partner_id, partner_program_id, email, is_test)
		SELECT $1, $2, $3, $4, (SELECT id FROM partner_programs WHERE partner_id = $4 AND program_id = $1), $5, $6
		ON CONFLICT (program_id, customer_key) DO NOTHING RETURNING id`,
		click.ProgramID, nullable(key), click.ID, click.PartnerID, nullable(email), isTest)
	if errors.Is(err, sql.ErrNoRows) && key != "" {
		return CustomerByKey(ctx, tx, click.ProgramID, key)
	}
	if err != nil {
		return Customer{}, fmt.Errorf("create customer: %w", err)
	}
	return getCustomer(ctx, tx, customerQuery+` WHERE cu.id = $1 FOR UPDATE OF cu`, id)
}

// MarkLead moves the customer to lead, keeping its email unless one is given, in the caller's
// transaction.
func MarkLead(ctx context.Context, tx sqlx.ExecerContext, customerID int64, email string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE customers SET status = 'lead', signed_up_at = now(),
		email = COALESCE($2, email), updated_at = now() WHERE id = $1`, customerID, nullable(email)); err != nil {
		return fmt.Errorf("update customer: %w", err)
	}
	return nil
}

// A sale's writes of customers are this package's database functions (migration 000010), called by the
// sale's statement: attribution_lock_unchanged (lock customers still at the version read),
// attribution_create_converted (make a buyer's customer from its click) and attribution_convert.

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

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
