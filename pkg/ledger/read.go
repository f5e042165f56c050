package ledger

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Moment is a commission as one change left it: the status the change stored and when it happened (a
// webhook event's).
type Moment struct {
	ID     int64
	Status string // as stored by the change (commissions.status), not yet read by ledger_status
	At     time.Time
}

// CommissionsAt reads, in one query, each moment's commission as GetCommission shows it at now, but for
// Status: the effective status the moment's stored status had at the moment's instant (ledger_status
// then). That is what a webhook of the change tells: a pending commission of an auto-approving program
// whose hold had ended by then is approved, one whose hold ended later is pending. The result has one
// entry per moment, in order (a commission may have several moments); nil for a commission gone.
func CommissionsAt(ctx context.Context, q sqlx.QueryerContext, now time.Time, moments []Moment) ([]*Commission, error) {
	ids, statuses, ats := make(pq.Int64Array, len(moments)), make(pq.StringArray, len(moments)), make([]string, len(moments))
	for i, m := range moments {
		ids[i], statuses[i], ats[i] = m.ID, m.Status, m.At.Format(time.RFC3339Nano)
	}
	var rows []struct {
		Ord  int64  `db:"ord"`
		Then string `db:"status_then"`
		Commission
	}
	// commissionColumns begins with the columns and ends with its joins, so the moments are joined after.
	err := sqlx.SelectContext(ctx, q, &rows, `SELECT m.ord, ledger_status(m.status, c.available_on, p.commission_approval, m.at)
		AS status_then, `+commissionColumns+`
		JOIN unnest($2::bigint[], $3::text[], $4::timestamptz[]) WITH ORDINALITY AS m(id, status, at, ord) ON m.id = c.id
`, now, ids, statuses, pq.Array(ats))
	if err != nil {
		return nil, err
	}
	out := make([]*Commission, len(moments))
	for _, r := range rows {
		c := r.Commission
		c.Status = r.Then
		out[r.Ord-1] = &c
	}
	return out, nil
}

// ReadPayouts reads the payouts of ids as GetPayout shows them, in one query, in no particular order;
// ids that name no payout are left out. The webhook worker reads a batch of events' payouts with it.
func ReadPayouts(ctx context.Context, q sqlx.QueryerContext, ids []int64) ([]Payout, error) {
	out := []Payout{}
	err := sqlx.SelectContext(ctx, q, &out, `SELECT `+payoutColumns+` WHERE o.id = ANY ($1)`, pq.Array(ids))
	return out, err
}
