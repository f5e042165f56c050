// Package customers lists a program's customers: who came through a partner, how far they went
// (visitor, lead, converted), and what their sales brought in and earned, per currency. The customers,
// leads and sales are written by the tracking routes (pkg/attribution, pkg/leads, pkg/sales); this
// package only reads them. Erasing a customer's personal data is to come here too.
package customers

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/pagecursor"
	"github.com/reftrack/reftrack/pkg/programs"
)

// The statuses, in the order a customer reaches them.
const (
	Visitor   = "visitor"
	Lead      = "lead"
	Converted = "converted"
)

// Statuses are the statuses, in that order.
var Statuses = []string{Visitor, Lead, Converted}

// CheckStatus refuses a status that is not one of Statuses.
func CheckStatus(status string) error {
	if !slices.Contains(Statuses, status) {
		return invalid("status must be one of %s", strings.Join(Statuses, ", "))
	}
	return nil
}

// CheckPageSize refuses a page size out of 1 to MaxPageSize.
func CheckPageSize(limit int) error {
	if !pagecursor.CheckSize(limit) {
		return invalid("%s", pagecursor.SizeRule)
	}
	return nil
}

// Page sizes: every cursor list's (pagecursor).
const (
	DefaultPageSize = pagecursor.DefaultSize
	MaxPageSize     = pagecursor.MaxSize
)

// InvalidError refuses a filter out of its range (400); Message is the answer's.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &InvalidError{Message: fmt.Sprintf(format, args...)}
}

// Filter narrows the list to a partner's customers or a status, and names the page.
type Filter struct {
	PartnerID int64
	Status    string
	Cursor    string
	Limit     int
}

// check checks the filter and reads its cursor (nil for the first page) and page size.
func (f Filter) check() (*pagecursor.Position, int, error) {
	if f.Status != "" {
		if err := CheckStatus(f.Status); err != nil {
			return nil, 0, err
		}
	}
	if f.PartnerID < 0 {
		return nil, 0, invalid("partner_id must be a positive integer")
	}
	limit, ok := pagecursor.Size(f.Limit)
	if !ok {
		return nil, 0, invalid("%s", pagecursor.SizeRule)
	}
	after, ok := pagecursor.Decode(f.Cursor)
	if !ok {
		return nil, 0, invalid("cursor is not valid")
	}
	return after, limit, nil
}

// Money is what one customer's sales in one currency took, less their refunds (RevenueCents), and what
// their commissions earned, less reversals and clawbacks, rejected ones excluded (CommissionCents): the
// reports' measures (pkg/counting), for one customer.
type Money struct {
	Currency        string `db:"currency"`
	RevenueCents    int64  `db:"revenue_cents"`
	CommissionCents int64  `db:"commission_cents"`
}

// Customer is one customer of a program.
type Customer struct {
	ID int64 `db:"id"`
	// Key is the brand's customer id (customer_key); nil for a customer known only from a browser lead.
	Key         *string    `db:"customer_key"`
	PartnerID   *int64     `db:"partner_id"`
	PartnerName *string    `db:"partner_name"`
	Status      string     `db:"status"`
	IsTest      bool       `db:"is_test"`
	CreatedAt   time.Time  `db:"created_at"`
	FirstClick  *time.Time `db:"first_click_at"` // the click the customer is attributed to
	LeadAt      *time.Time `db:"lead_at"`
	FirstSaleAt *time.Time `db:"first_sale_at"`
	// Money is per currency, in the currencies' alphabetical order; empty (never nil) before a sale.
	Money []Money `db:"-"`
}

// Page is one page of customers, newest first; NextCursor is "" on the last page.
type Page struct {
	Customers  []Customer
	NextCursor string
}

// List is a page of the program's customers, newest first (by when they became one, then id), for any
// member of its workspace.
func List(ctx context.Context, db *sqlx.DB, accountID, programID int64, f Filter) (Page, error) {
	after, limit, err := f.check()
	if err != nil {
		return Page{}, err
	}
	if _, err := programs.Access(ctx, db, accountID, programID, accounts.ActionProgramRead); err != nil {
		return Page{}, err
	}
	args := []any{programID}
	where := []string{"cu.program_id = $1"}
	if f.PartnerID != 0 {
		args = append(args, f.PartnerID)
		where = append(where, "cu.partner_id = $"+strconv.Itoa(len(args)))
	}
	if f.Status != "" {
		args = append(args, f.Status)
		where = append(where, "cu.status = $"+strconv.Itoa(len(args)))
	}
	if after != nil {
		args = append(args, after.At, after.ID)
		where = append(where, fmt.Sprintf("(cu.created_at, cu.id) < ($%d::timestamptz, $%d::bigint)", len(args)-1, len(args)))
	}
	args = append(args, limit+1)
	// The attributed click is in clicks, or in clicks_kept once its month expired; its row id names its
	// month (clicks_ref_month), so the lookup reads one partition.
	q := `SELECT cu.id, cu.customer_key, cu.partner_id, pa.name AS partner_name, cu.status, cu.is_test, cu.created_at,
			COALESCE(ck.click_timestamp, kk.click_timestamp) AS first_click_at,
			cu.signed_up_at AS lead_at, cu.converted_at AS first_sale_at
		FROM customers cu
		LEFT JOIN partners pa ON pa.id = cu.partner_id
		LEFT JOIN clicks ck ON ck.click_month = clicks_ref_month(cu.click_ref) AND ck.id = cu.click_ref
		LEFT JOIN clicks_kept kk ON ck.id IS NULL AND kk.id = cu.click_ref
		WHERE ` + strings.Join(where, " AND ") + `
		ORDER BY cu.created_at DESC, cu.id DESC LIMIT $` + strconv.Itoa(len(args))
	var rows []Customer
	if err := sqlx.SelectContext(ctx, db, &rows, q, args...); err != nil {
		return Page{}, err
	}
	var page Page
	page.Customers, page.NextCursor = pagecursor.Trim(rows, limit, func(c Customer) pagecursor.Position {
		return pagecursor.Position{At: c.CreatedAt, ID: c.ID}
	})
	return page, addMoney(ctx, db, page.Customers)
}

// addMoney reads the customers' revenue and commission per currency.
func addMoney(ctx context.Context, db *sqlx.DB, cs []Customer) error {
	if len(cs) == 0 {
		return nil
	}
	ids := make([]int64, len(cs))
	at := make(map[int64]int, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
		at[c.ID] = i
		cs[i].Money = []Money{}
	}
	var rows []struct {
		CustomerID int64 `db:"customer_id"`
		Money
	}
	err := sqlx.SelectContext(ctx, db, &rows, `
		SELECT s.customer_id, s.currency, sum(s.amount_cents - s.refunded_amount_cents)::bigint AS revenue_cents,
			COALESCE(sum(CASE WHEN c.status = 'rejected' THEN 0 ELSE c.amount_cents - c.reversed_amount_cents END
				- COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id), 0)), 0)::bigint
				AS commission_cents
		FROM sales s LEFT JOIN commissions c ON c.sale_id = s.id
		WHERE s.customer_id = ANY($1)
		GROUP BY s.customer_id, s.currency ORDER BY s.customer_id, s.currency`, pq.Array(ids))
	if err != nil {
		return err
	}
	for _, r := range rows {
		i := at[r.CustomerID]
		cs[i].Money = append(cs[i].Money, r.Money)
	}
	return nil
}
