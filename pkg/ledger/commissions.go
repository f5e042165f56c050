package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/pagecursor"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Audit actions of this package.
const (
	ActionApprove      = "commission.approve"
	ActionReject       = "commission.reject"
	ActionPayoutCreate = "payout.create"
	ActionPayoutPaid   = "payout.paid"
	ActionPayoutFailed = "payout.failed"
)

// Request is who acts, when, and under which Idempotency-Key (nil: none).
type Request struct {
	AccountID int64
	Email     string
	Now       time.Time
	Key       *idempotency.Key
}

func (r Request) actor() audit.Actor { return audit.Account(r.AccountID, r.Email) }

// InvalidError refuses an input out of its range (400); Message is the answer's.
type InvalidError struct{ Message string }

func (e *InvalidError) Error() string { return e.Message }

func invalid(format string, args ...any) error {
	return &InvalidError{Message: fmt.Sprintf(format, args...)}
}

// commissionColumns selects a commission as Commission shows it, from commissions c joined with its sale s
// and program p, its status effective at $1 (ledger_status). An approval the background pass has not
// written down yet is dated by available_on, the instant it took effect. A rejected commission pays
// nothing, so its payable amount is 0.
const commissionColumns = `c.id, c.program_id, c.partner_id, c.sale_id, s.processor_event_id AS transaction_id,
	c.amount_cents, c.reversed_amount_cents,
	CASE WHEN c.status = 'rejected' THEN 0 ELSE c.amount_cents - c.reversed_amount_cents END AS payable_cents,
	c.currency, ledger_status(c.status, c.available_on, p.commission_approval, $1) AS status, c.available_on,
	COALESCE(c.approved_at, CASE WHEN ledger_status(c.status, c.available_on, p.commission_approval, $1) = 'approved'
		THEN c.available_on END) AS approved_at,
	c.rejected_reason, c.payout_id, c.paid_at,
	COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id), 0)::bigint AS clawback_cents,
	c.is_test, c.created_at
	FROM commissions c JOIN sales s ON s.id = c.sale_id JOIN programs p ON p.id = c.program_id`

// Filter narrows a program's commissions list.
type Filter struct {
	Status      string // effective status; "" for any
	Hold        string // HoldRunning, HoldEnded; "" for any
	PartnerID   int64  // 0 for any
	CreatedFrom *time.Time
	CreatedTo   *time.Time // exclusive
	Cursor      string
	Limit       int // 0: DefaultPageSize
}

// CommissionPage is one page of a list, newest first, and the cursor of the next ("" at the end).
type CommissionPage struct {
	Commissions []Commission
	NextCursor  string
}

// access is the program once the account may take action on it (programs.Access), else ErrProgramNotFound
// for a program that does not exist, or the access error.
func access(ctx context.Context, db sqlx.QueryerContext, accountID, programID int64, action string) (programs.Program, error) {
	p, err := programs.Access(ctx, db, accountID, programID, action)
	if errors.Is(err, programs.ErrNotFound) {
		return programs.Program{}, ErrProgramNotFound
	}
	return p, err
}

// ownedBy is the program of the row id in table (commissions or payouts; missing: notFound), once the
// account may do action in it.
func ownedBy(ctx context.Context, db sqlx.QueryerContext, table string, id, accountID int64, action string,
	notFound error) (int64, error) {
	var programID int64
	err := sqlx.GetContext(ctx, db, &programID, `SELECT program_id FROM `+table+` WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound
	}
	if err != nil {
		return 0, err
	}
	_, err = access(ctx, db, accountID, programID, action)
	return programID, err
}

// commissionAccess is the program of the commission id (ErrCommissionNotFound when there is none), once
// the account may do action in it.
func commissionAccess(ctx context.Context, db sqlx.QueryerContext, accountID, id int64, action string) (int64, error) {
	return ownedBy(ctx, db, "commissions", id, accountID, action, ErrCommissionNotFound)
}

// ListCommissions is a page of the program's commissions, newest first (by created_at, then id): the
// cursor names the last one shown, so a page never repeats or skips a row whatever is added meanwhile.
func ListCommissions(ctx context.Context, db *sqlx.DB, accountID, programID int64, f Filter, now time.Time) (CommissionPage, error) {
	after, limit, err := f.checked()
	if err != nil {
		return CommissionPage{}, err
	}
	if _, err := access(ctx, db, accountID, programID, accounts.ActionCommissionsRead); err != nil {
		return CommissionPage{}, err
	}
	return listCommissions(ctx, db, programID, f, after, limit, now)
}

// checked checks the filter's status and page size and reads its cursor (nil for the first page).
func (f Filter) checked() (after *pagecursor.Position, limit int, err error) {
	if f.Status != "" {
		if err := CheckStatus(f.Status); err != nil {
			return nil, 0, err
		}
	}
	if f.Hold != "" {
		if err := CheckHold(f.Hold); err != nil {
			return nil, 0, err
		}
	}
	if limit, err = pageLimit(f.Limit); err != nil {
		return nil, 0, err
	}
	after, err = decodeCursor(f.Cursor)
	return after, limit, err
}

// listCommissions is ListCommissions once the reader may read them.
func listCommissions(ctx context.Context, db *sqlx.DB, programID int64, f Filter, after *pagecursor.Position, limit int, now time.Time) (CommissionPage, error) {
	args := []any{now, programID}
	where := []string{"c.program_id = $2"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Status != "" {
		add("ledger_status(c.status, c.available_on, p.commission_approval, $1) = ?", f.Status)
	}
	switch f.Hold {
	case HoldRunning:
		where = append(where, "NOT "+holdEnded("$1"))
	case HoldEnded:
		where = append(where, holdEnded("$1"))
	}
	if f.PartnerID != 0 {
		add("c.partner_id = ?", f.PartnerID)
	}
	if f.CreatedFrom != nil {
		add("c.created_at >= ?", *f.CreatedFrom)
	}
	if f.CreatedTo != nil {
		add("c.created_at < ?", *f.CreatedTo)
	}
	if after != nil {
		args = append(args, after.At, after.ID)
		where = append(where, fmt.Sprintf("(c.created_at, c.id) < ($%d::timestamptz, $%d::bigint)", len(args)-1, len(args)))
	}
	args = append(args, limit+1)
	q := `SELECT ` + commissionColumns + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY c.created_at DESC, c.id DESC LIMIT $` + strconv.Itoa(len(args))
	var out []Commission
	if err := sqlx.SelectContext(ctx, db, &out, q, args...); err != nil {
		return CommissionPage{}, err
	}
	var page CommissionPage
	page.Commissions, page.NextCursor = pagecursor.Trim(out, limit, func(c Commission) pagecursor.Position {
		return pagecursor.Position{At: c.CreatedAt, ID: c.ID}
	})
	return page, nil
}

// GetCommission is one commission, for a member who may read its program's.
func GetCommission(ctx context.Context, db *sqlx.DB, accountID, id int64, now time.Time) (Commission, error) {
	if _, err := commissionAccess(ctx, db, accountID, id, accounts.ActionCommissionsRead); err != nil {
		return Commission{}, err
	}
	return readCommission(ctx, db, id, now)
}

func readCommission(ctx context.Context, db sqlx.QueryerContext, id int64, now time.Time) (Commission, error) {
	var c Commission
	err := sqlx.GetContext(ctx, db, &c, `SELECT `+commissionColumns+` WHERE c.id = $2`, now, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Commission{}, ErrCommissionNotFound
	}
	return c, err
}

// Approve approves the commission once its hold has ended, or in its hold when releaseHold says so (the
// hold is then released: payout runs take it at once); one approved already stays as it is. A commission
// in a payout, paid, rejected or reversed in full cannot be.
func Approve(ctx context.Context, db *sqlx.DB, r Request, id int64, releaseHold bool) (Commission, error) {
	programID, err := commissionAccess(ctx, db, r.AccountID, id, accounts.ActionCommissionsWrite)
	if err != nil {
		return Commission{}, err
	}
	return run(ctx, db, r, func(tx *sqlx.Tx) (Commission, error) {
		cs, err := approve(ctx, tx, r, programID, []int64{id}, releaseHold)
		if err != nil {
			return Commission{}, err
		}
		return cs[0], nil
	})
}

// ApproveMany approves the program's commissions ids, all or none (Approve's rules for each).
func ApproveMany(ctx context.Context, db *sqlx.DB, r Request, programID int64, ids []int64, releaseHold bool) ([]Commission, error) {
	if err := CheckBulkApprove(len(ids)); err != nil {
		return nil, err
	}
	if _, err := access(ctx, db, r.AccountID, programID, accounts.ActionCommissionsWrite); err != nil {
		return nil, err
	}
	return run(ctx, db, r, func(tx *sqlx.Tx) ([]Commission, error) {
		return approve(ctx, tx, r, programID, ids, releaseHold)
	})
}

// held is a commission locked for a change, with its effective status.
type held struct {
	ID          int64     `db:"id"`
	Status      string    `db:"status"`
	Stored      string    `db:"stored"`
	Amount      int64     `db:"amount_cents"`
	Reversed    int64     `db:"reversed_amount_cents"`
	Currency    string    `db:"currency"`
	Payout      *int64    `db:"payout_id"`
	AvailableOn time.Time `db:"available_on"`
	// Where it is counted (pkg/counting): its sale's program, time, partner and currency.
	PartnerID int64     `db:"partner_id"`
	SaleDate  time.Time `db:"sale_date"`
	Test      bool      `db:"is_test"`
}

// countedUnder is the key of the counts a commission is kept under (pkg/counting): its sale's program,
// hour, partner and currency.
func countedUnder(programID, partnerID int64, saleDate time.Time, currency string) counting.Key {
	return counting.Key{ProgramID: programID, Hour: counting.HourOf(saleDate), PartnerID: partnerID, Currency: currency}
}

// lockCommissions locks the program's commissions ids in id order and reads them; ErrCommissionNotFound
// names the first id the program does not have.
func lockCommissions(ctx context.Context, tx *sqlx.Tx, programID int64, ids []int64, now time.Time) ([]held, error) {
	var hs []held
	if err := tx.SelectContext(ctx, &hs, `SELECT c.id, c.status AS stored, ledger_status(c.status, c.available_on,
		p.commission_approval, $3) AS status, c.amount_cents, c.reversed_amount_cents, c.currency, c.payout_id,
		c.available_on, c.partner_id, s.sale_date, c.is_test
		FROM commissions c JOIN programs p ON p.id = c.program_id JOIN sales s ON s.id = c.sale_id
		WHERE c.program_id = $1 AND c.id = ANY ($2) ORDER BY c.id FOR UPDATE OF c`, programID, pq.Array(ids), now); err != nil {
		return nil, err
	}
	found := make(map[int64]bool, len(hs))
	for _, h := range hs {
		found[h.ID] = true
	}
	for _, id := range ids {
		if !found[id] {
			return nil, fmt.Errorf("%w: %d", ErrCommissionNotFound, id)
		}
	}
	return hs, nil
}

// unchangeable refuses a change of a commission in status (409), or nil when it may change.
func unchangeable(id int64, status string) error {
	switch status {
	case StatusInPayout:
		return conflict("Commission %d is in a payout", id)
	case StatusPaid:
		return conflict("Commission %d is paid", id)
	case StatusRejected:
		return conflict("Commission %d is rejected", id)
	}
	return nil
}

func approve(ctx context.Context, tx *sqlx.Tx, r Request, programID int64, ids []int64, releaseHold bool) ([]Commission, error) {
	if err := waitForPayoutRun(ctx, tx, programID); err != nil {
		return nil, err
	}
	hs, err := lockCommissions(ctx, tx, programID, ids, r.Now)
	if err != nil {
		return nil, err
	}
	var change []int64
	released := map[int64]bool{}
	for _, h := range hs {
		if err := unchangeable(h.ID, h.Status); err != nil {
			return nil, err
		}
		switch h.Status {
		case StatusReversed:
			return nil, conflict("Commission %d is reversed: nothing is payable", h.ID)
		case StatusApproved:
			if h.Stored == StatusApproved {
				continue // approved already: nothing to write
			}
		}
		if err := commission.CheckHold(h.ID, h.AvailableOn, r.Now, releaseHold); err != nil {
			return nil, &ConflictError{Message: err.Error()}
		}
		change = append(change, h.ID)
		released[h.ID] = h.AvailableOn.After(r.Now)
	}
	if len(change) > 0 {
		// An approval that took effect by itself (auto, past available_on) is dated then, not now; one in
		// the hold releases it.
		if _, err := tx.ExecContext(ctx, `UPDATE commissions c SET status = 'approved',
			approved_at = CASE WHEN ledger_status(c.status, c.available_on, p.commission_approval, $2) = 'approved'
				THEN c.available_on ELSE $2 END,
			hold_released_at = CASE WHEN c.available_on > $2 THEN $2 END, updated_at = now()
			FROM programs p WHERE p.id = c.program_id AND c.id = ANY ($1)`, pq.Array(change), r.Now); err != nil {
			return nil, err
		}
	}
	out := make([]Commission, 0, len(ids))
	for _, id := range ids {
		c, err := readCommission(ctx, tx, id, r.Now)
		if err != nil {
			return nil, err
		}
		if slices.Contains(change, id) {
			detail := map[string]any{"program_id": programID, "payable_cents": c.PayableCents, "currency": c.Currency}
			if released[id] {
				detail["release_hold"] = true
			}
			if err := audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: ActionApprove,
				Target: "commission:" + strconv.FormatInt(id, 10), Detail: detail}); err != nil {
				return nil, err
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Reject rejects the commission with a reason (1 … MaxReason characters): it pays nothing, ever. Only
// before a payout: a commission in one, paid, rejected already, or back from a failed payout with
// clawbacks cannot be.
func Reject(ctx context.Context, db *sqlx.DB, r Request, id int64, reason string) (Commission, error) {
	if err := CheckReason(reason); err != nil {
		return Commission{}, err
	}
	programID, err := commissionAccess(ctx, db, r.AccountID, id, accounts.ActionCommissionsWrite)
	if err != nil {
		return Commission{}, err
	}
	return run(ctx, db, r, func(tx *sqlx.Tx) (Commission, error) {
		hs, err := lockCommissions(ctx, tx, programID, []int64{id}, r.Now)
		if err != nil {
			return Commission{}, err
		}
		if err := unchangeable(id, hs[0].Status); err != nil {
			return Commission{}, err
		}
		// Back from a failed payout, a commission may carry clawbacks its refunds recorded meanwhile:
		// rejected, it would pay nothing while its partner still owed them.
		var clawed int64
		if err := tx.GetContext(ctx, &clawed, `SELECT count(*) FROM commission_clawbacks WHERE commission_id = $1`, id); err != nil {
			return Commission{}, err
		}
		if clawed > 0 {
			return Commission{}, conflict("Commission %d has clawbacks from a payout that failed: it can no longer be rejected", id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE commissions SET status = 'rejected', rejected_reason = $2,
			rejected_at = $3, updated_at = now() WHERE id = $1`, id, reason, r.Now); err != nil {
			return Commission{}, err
		}
		h := hs[0]
		if err := events.Add(ctx, tx, counting.Delta{Key: countedUnder(programID, h.PartnerID, h.SaleDate, h.Currency),
			Measures: counting.Rejected(h.Test, h.Amount-h.Reversed)}); err != nil {
			return Commission{}, err
		}
		c, err := readCommission(ctx, tx, id, r.Now)
		if err != nil {
			return Commission{}, err
		}
		err = audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: ActionReject,
			Target: "commission:" + strconv.FormatInt(id, 10), Detail: map[string]any{"program_id": programID,
				"amount_cents": c.AmountCents, "reversed_amount_cents": c.ReversedAmountCents, "currency": c.Currency,
				"reason": reason}})
		return c, err
	})
}

func pageLimit(limit int) (int, error) {
	size, ok := pagecursor.Size(limit)
	if !ok {
		return 0, invalid("%s", pagecursor.SizeRule)
	}
	return size, nil
}

// decodeCursor reads a list's cursor (nil for the first page).
func decodeCursor(s string) (*pagecursor.Position, error) {
	p, ok := pagecursor.Decode(s)
	if !ok {
		return nil, invalid("cursor is not valid")
	}
	return p, nil
}
