package ledger

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
)

// ReasonPartnerBanned is the rejected_reason of a banned partner's commissions.
const ReasonPartnerBanned = commission.RejectedBanned

// openForBan are the stored statuses of commissions a ban rejects: those not yet in a payout that still
// pay something (a reversed one pays nothing and stays as it is).
const openForBan = `('pending', 'approved')`

// RejectBanned rejects, in the ban's transaction tx, the partner's commissions in the program not yet in
// a payout (reason ReasonPartnerBanned), each in the audit log, and returns how many. A payout run in
// progress finishes first (waitForPayoutRun); the commissions it took stay in their payout. A sale
// recorded meanwhile is caught by its own decision (pkg/commission.Decide makes a banned partner's
// commission rejected) or, when it read the partner before the ban committed, by SweepBanned.
func RejectBanned(ctx context.Context, tx *sqlx.Tx, actor audit.Actor, programID, partnerID int64, now time.Time) (int, error) {
	if err := waitForPayoutRun(ctx, tx, programID); err != nil {
		return 0, err
	}
	return rejectBanned(ctx, tx, actor, now, `c.program_id = $3 AND c.partner_id = $4`, programID, partnerID)
}

// rejectBanned rejects the open commissions (openForBan) that where (a condition on the commission c,
// with args from $3) selects, writing each to the audit log as actor's, and returns how many.
func rejectBanned(ctx context.Context, tx *sqlx.Tx, actor audit.Actor, now time.Time, where string, args ...any) (int, error) {
	var rows []struct {
		ID        int64     `db:"id"`
		ProgramID int64     `db:"program_id"`
		PartnerID int64     `db:"partner_id"`
		Amount    int64     `db:"amount_cents"`
		Reversed  int64     `db:"reversed_amount_cents"`
		Currency  string    `db:"currency"`
		Test      bool      `db:"is_test"`
		SaleDate  time.Time `db:"sale_date"`
	}
	if err := tx.SelectContext(ctx, &rows, `UPDATE commissions c SET status = 'rejected', rejected_reason = $1,
			rejected_at = $2, updated_at = now()
		FROM sales s
		WHERE s.id = c.sale_id AND `+where+` AND c.status IN `+openForBan+`
		RETURNING c.id, c.program_id, c.partner_id, c.amount_cents, c.reversed_amount_cents, c.currency, c.is_test, s.sale_date`,
		append([]any{ReasonPartnerBanned, now}, args...)...); err != nil {
		return 0, err
	}
	// What they counted for is taken back from the counts (pkg/counting), in the same transaction.
	deltas := make([]counting.Delta, len(rows))
	for i, r := range rows {
		deltas[i] = counting.Delta{Key: countedUnder(r.ProgramID, r.PartnerID, r.SaleDate, r.Currency),
			Measures: counting.Rejected(r.Test, r.Amount-r.Reversed)}
	}
	if err := events.Add(ctx, tx, deltas...); err != nil {
		return 0, err
	}
	for _, r := range rows {
		if err := audit.Write(ctx, tx, audit.Entry{At: now, Actor: actor, Action: ActionReject,
			Target: "commission:" + strconv.FormatInt(r.ID, 10), Detail: map[string]any{"program_id": r.ProgramID,
				"amount_cents": r.Amount, "reversed_amount_cents": r.Reversed, "currency": r.Currency,
				"reason": ReasonPartnerBanned}}); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// SweepActor is who the audit log says rejected what SweepBanned rejects.
const SweepActor = "reftrackd (ban sweep)"

// SweepBanned rejects the commissions of banned partners not yet in a payout that a sale racing the ban
// made pending (it read the partner before the ban committed), each in the audit log as the ban's own
// rejections are. The server runs it with AutoApprove, every minute; payouts leave banned partners out
// meanwhile.
func SweepBanned(ctx context.Context, db *sqlx.DB, now time.Time) (int64, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	n, err := rejectBanned(ctx, tx, audit.Operator(SweepActor), now,
		`EXISTS (SELECT FROM partner_programs pp WHERE pp.id = c.partner_program_id AND pp.status = 'banned')`)
	if err != nil {
		return 0, err
	}
	return int64(n), tx.Commit()
}
