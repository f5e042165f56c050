package ledger

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/audit"
)

// ReasonPartnerBanned is the rejected_reason of a banned partner's commissions.
const ReasonPartnerBanned = "partner banned"

// openForBan are the stored statuses of commissions a ban rejects: those not yet in a payout that still
// pay something (a reversed one pays nothing and stays as it is).
const openForBan = `('pending', 'partially_reversed', 'approved')`

// RejectBanned rejects, in the ban's transaction tx, the partner's commissions in the program not yet in
// a payout (reason ReasonPartnerBanned), each in the audit log, and returns how many. A payout run in
// progress finishes first (waitForPayoutRun); the commissions it took stay in their payout. A sale
// recorded meanwhile is caught by ledger_create (which makes a banned partner's commission rejected) or,
// when it read the partner before the ban committed, by SweepBanned.
func RejectBanned(ctx context.Context, tx *sqlx.Tx, actor audit.Actor, programID, partnerID int64, now time.Time) (int, error) {
	if err := waitForPayoutRun(ctx, tx, programID); err != nil {
		return 0, err
	}
	var rows []struct {
		ID       int64  `db:"id"`
		Amount   int64  `db:"amount_cents"`
		Reversed int64  `db:"reversed_amount_cents"`
		Currency string `db:"currency"`
	}
	if err := tx.SelectContext(ctx, &rows, `UPDATE commissions SET status = 'rejected', rejected_reason = $3,
			rejected_at = $4, updated_at = now()
		WHERE program_id = $1 AND partner_id = $2 AND status IN `+openForBan+`
		RETURNING id, amount_cents, reversed_amount_cents, currency`, programID, partnerID, ReasonPartnerBanned, now); err != nil {
		return 0, err
	}
	for _, r := range rows {
		if err := audit.Write(ctx, tx, audit.Entry{At: now, Actor: actor, Action: ActionReject,
			Target: "commission:" + strconv.FormatInt(r.ID, 10), Detail: map[string]any{"program_id": programID,
				"amount_cents": r.Amount, "reversed_amount_cents": r.Reversed, "currency": r.Currency,
				"reason": ReasonPartnerBanned}}); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// SweepBanned rejects the commissions of banned partners not yet in a payout that a sale racing the ban
// made pending (it read the partner before the ban committed). The server runs it with AutoApprove,
// every minute; payouts leave banned partners out meanwhile.
func SweepBanned(ctx context.Context, db *sqlx.DB, now time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, `UPDATE commissions c SET status = 'rejected', rejected_reason = $1, rejected_at = $2,
			updated_at = now()
		FROM partner_programs pp
		WHERE pp.id = c.partner_program_id AND pp.status = 'banned' AND c.status IN `+openForBan,
		ReasonPartnerBanned, now)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
