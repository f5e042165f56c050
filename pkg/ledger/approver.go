package ledger

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// approveBatch bounds the rows one statement of AutoApprove changes, so that a backlog never holds many
// commissions locked at once.
const approveBatch = 1000

// AutoApprove writes down what ledger_status already says: a commission of a program with auto approval
// whose available_on has passed at now is approved (dated then). Rows another transaction holds are left
// for the next pass. It answers how many commissions it approved. The server runs it every minute.
func AutoApprove(ctx context.Context, db *sqlx.DB, now time.Time) (int64, error) {
	var total int64
	for {
		// The hold index finds the candidates; ledger_status says which are approved.
		res, err := db.ExecContext(ctx, `UPDATE commissions c SET status = 'approved', approved_at = c.available_on,
			updated_at = now()
			WHERE c.id IN (SELECT x.id FROM commissions x JOIN programs p ON p.id = x.program_id
				WHERE x.status = 'pending' AND x.available_on <= $1
					AND ledger_status(x.status, x.available_on, p.commission_approval, $1) = 'approved'
				LIMIT $2 FOR UPDATE OF x SKIP LOCKED)
				AND c.status = 'pending'`, now, approveBatch)
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
		if n < approveBatch {
			return total, nil
		}
	}
}
