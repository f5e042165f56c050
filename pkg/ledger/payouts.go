package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/pagecursor"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
)

// Balances is the program's money per partner and currency, by bucket (see the package comment), test
// commissions left out; a partner appears once it has a commission or a clawback in a currency.
func Balances(ctx context.Context, db *sqlx.DB, accountID, programID int64, now time.Time) ([]Balance, error) {
	if _, err := access(ctx, db, accountID, programID, accounts.ActionCommissionsRead); err != nil {
		return nil, err
	}
	return balances(ctx, db, programID, 0, now)
}

// balances is Balances of the program's partner partnerID (0: every partner) once the reader may read them.
func balances(ctx context.Context, db *sqlx.DB, programID, partnerID int64, now time.Time) ([]Balance, error) {
	out := []Balance{}
	err := sqlx.SelectContext(ctx, db, &out, `WITH c AS (
			SELECT c.partner_id, c.currency, c.amount_cents - c.reversed_amount_cents AS payable,
				ledger_status(c.status, c.available_on, p.commission_approval, $2) AS status
			FROM commissions c JOIN programs p ON p.id = c.program_id
			WHERE c.program_id = $1 AND NOT c.is_test AND ($3 = 0 OR c.partner_id = $3)
		), held AS (
			SELECT partner_id, currency,
				COALESCE(sum(payable) FILTER (WHERE status = 'pending'), 0) AS pending_cents,
				COALESCE(sum(payable) FILTER (WHERE status = 'approved'), 0) AS approved_cents,
				COALESCE(sum(payable) FILTER (WHERE status = 'in_payout'), 0) AS in_payout_cents,
				COALESCE(sum(payable) FILTER (WHERE status = 'paid'), 0) AS paid_cents
			FROM c GROUP BY partner_id, currency
		), owed AS (
			SELECT partner_id, currency, sum(amount_cents) AS owed_cents FROM commission_clawbacks
			WHERE program_id = $1 AND payout_id IS NULL AND NOT is_test AND ($3 = 0 OR partner_id = $3)
			GROUP BY partner_id, currency
		)
		SELECT b.partner_id, pa.name AS partner_name, b.currency,
			COALESCE(h.pending_cents, 0)::bigint AS pending_cents, COALESCE(h.approved_cents, 0)::bigint AS approved_cents,
			COALESCE(h.in_payout_cents, 0)::bigint AS in_payout_cents, COALESCE(h.paid_cents, 0)::bigint AS paid_cents,
			COALESCE(o.owed_cents, 0)::bigint AS clawback_owed_cents
		FROM (SELECT partner_id, currency FROM held UNION SELECT partner_id, currency FROM owed) b
		JOIN partners pa ON pa.id = b.partner_id
		LEFT JOIN held h ON h.partner_id = b.partner_id AND h.currency = b.currency
		LEFT JOIN owed o ON o.partner_id = b.partner_id AND o.currency = b.currency
		ORDER BY b.partner_id, b.currency`, programID, now, partnerID)
	return out, err
}

// payoutColumns selects a payout as Payout shows it, from payouts o joined with its partner pa.
const payoutColumns = `o.id, o.program_id, o.partner_id, pa.name AS partner_name, pa.email AS partner_email, o.currency,
	o.amount_cents, o.commission_count, o.clawback_cents, o.status, o.external_reference, o.failure_reason,
	o.created_at, o.paid_at
	FROM payouts o JOIN partners pa ON pa.id = o.partner_id`

// CreatePayouts pays out the program's approved commissions (of currency only, when not ""): for each
// partner and currency whose approved total less the clawbacks it owes is positive and at least the
// program's payout minimum, one payout holding those commissions (now in_payout) and netting those
// clawbacks; the rest carries over. Runs of one program are serialised, so no commission is in two
// payouts; a refund racing a run ends before it (the commission is paid out reduced) or after it (a
// clawback), as the commission's row lock decides.
func CreatePayouts(ctx context.Context, db *sqlx.DB, r Request, programID int64, currency string) ([]Payout, error) {
	run, err := CreatePayoutRun(ctx, db, r, programID, currency)
	return run.Payouts, err
}

// A Run is what a payout run did: the payouts it made, and the partners' approved totals it carried over
// to a later run, with why.
type Run struct {
	Payouts     []Payout
	CarriedOver []CarriedOver
}

// CarriedOver is a partner's approved total in a currency that a run did not pay.
type CarriedOver struct {
	PartnerID   int64  `json:"partner_id"`
	Currency    string `json:"currency"`
	AmountCents int64  `json:"amount_cents"` // approved commissions, less the clawbacks owed
	Reason      string `json:"reason"`       // CarriedBelowMinimum, CarriedOwed
}

// Why a run carries a total over.
const (
	CarriedBelowMinimum = "below_minimum"  // positive, but under the program's payout minimum
	CarriedOwed         = "clawbacks_owed" // the clawbacks owed take all of it
)

// CreatePayoutRun is CreatePayouts, with what the run carried over.
func CreatePayoutRun(ctx context.Context, db *sqlx.DB, r Request, programID int64, currency string) (Run, error) {
	if currency != "" {
		if err := CheckCurrency(currency); err != nil {
			return Run{}, err
		}
	}
	if _, err := access(ctx, db, r.AccountID, programID, accounts.ActionPayoutsWrite); err != nil {
		return Run{}, err
	}
	return run(ctx, db, r, func(tx *sqlx.Tx) (Run, error) {
		return createPayouts(ctx, tx, r, programID, currency)
	})
}

// holdEnded is the SQL condition that commission c's hold has ended at the instant now (a placeholder):
// its end has passed, or an approval released it. The payout run and the list's hold filter read it.
func holdEnded(now string) string {
	return "(c.available_on <= " + now + " OR c.hold_released_at IS NOT NULL)"
}

// payoutRunLock is the advisory lock of a program's payout runs: a run holds it exclusively; a payout's
// failure and an approval, which make commissions approved, share it. A run reads the approved
// commissions and the owed clawbacks in two statements, two snapshots under READ COMMITTED: without the
// lock, a failure committing between them would hand the run its clawbacks but not its commissions, an
// outcome of no order of the two. Approvals share it so that a run sees the program's approvals at one
// instant, in whole.
const payoutRunLock = `hashtextextended('reftrack.payouts', $1)`

// waitForPayoutRun takes the program's payout-run lock shared, until tx ends: a run in progress finishes
// first, and none starts until tx has ended.
func waitForPayoutRun(ctx context.Context, tx *sqlx.Tx, programID int64) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared(`+payoutRunLock+`)`, programID)
	return err
}

// run runs action in a transaction under r's Idempotency-Key, again (at most three times more) when
// PostgreSQL ended it on a deadlock or a serialization failure: a refund batch, a payout run or a
// payout's settlement may lock the same commissions in another order. Nothing of a transaction ended so
// has been written, so running it again is safe.
func run[T any](ctx context.Context, db *sqlx.DB, r Request, action func(*sqlx.Tx) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		out, err := idempotency.Run(ctx, db, r.Key, r.Now, action)
		if err != nil && dbfault.Conflict(err) && attempt < 3 {
			continue
		}
		return out, err
	}
}

// open is an approved commission or an owed clawback, locked by a payout run.
type open struct {
	ID        int64  `db:"id"`
	PartnerID int64  `db:"partner_id"`
	Currency  string `db:"currency"`
	Cents     int64  `db:"cents"`
}

type group struct {
	partnerID   int64
	currency    string
	commissions []int64
	gross       int64
	clawbacks   []int64
	owed        int64
}

func createPayouts(ctx context.Context, tx *sqlx.Tx, r Request, programID int64, currency string) (Run, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+payoutRunLock+`)`, programID); err != nil {
		return Run{}, err
	}
	var minimum int64
	if err := tx.GetContext(ctx, &minimum, `SELECT payout_minimum_cents FROM programs WHERE id = $1`, programID); err != nil {
		return Run{}, err
	}
	var approved, owed []open
	if err := tx.SelectContext(ctx, &approved, `SELECT c.id, c.partner_id, c.currency, c.amount_cents - c.reversed_amount_cents AS cents
		FROM commissions c JOIN programs p ON p.id = c.program_id
		WHERE c.program_id = $1 AND NOT c.is_test AND c.status IN ('pending', 'approved')
			AND ledger_status(c.status, c.available_on, p.commission_approval, $2) = 'approved'
			-- Approved in its hold: paid once the hold ends, unless the approval released it.
			AND `+holdEnded("$2")+`
			AND ($3 = '' OR c.currency = $3)
			-- A banned partner is paid nothing more (SweepBanned rejects what a racing sale left open).
			AND NOT EXISTS (SELECT FROM partner_programs pp WHERE pp.id = c.partner_program_id AND pp.status = 'banned')
		ORDER BY c.id FOR UPDATE OF c`, programID, r.Now, currency); err != nil {
		return Run{}, err
	}
	if err := tx.SelectContext(ctx, &owed, `SELECT id, partner_id, currency, amount_cents AS cents FROM commission_clawbacks
		WHERE program_id = $1 AND payout_id IS NULL AND NOT is_test AND ($2 = '' OR currency = $2)
		ORDER BY id FOR UPDATE`, programID, currency); err != nil {
		return Run{}, err
	}
	groups := map[[2]string]*group{}
	at := func(partnerID int64, cur string) *group {
		k := [2]string{strconv.FormatInt(partnerID, 10), cur}
		if groups[k] == nil {
			groups[k] = &group{partnerID: partnerID, currency: cur}
		}
		return groups[k]
	}
	for _, c := range approved {
		g := at(c.PartnerID, c.Currency)
		g.commissions, g.gross = append(g.commissions, c.ID), g.gross+c.Cents
	}
	for _, k := range owed {
		g := at(k.PartnerID, k.Currency)
		g.clawbacks, g.owed = append(g.clawbacks, k.ID), g.owed+k.Cents
	}
	due, carried := decideRun(groups, minimum)
	out := Run{Payouts: []Payout{}, CarriedOver: carried}
	for _, g := range due {
		var id int64
		if err := tx.GetContext(ctx, &id, `INSERT INTO payouts (program_id, partner_id, currency, gross_cents, clawback_cents,
			amount_cents, commission_count, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			programID, g.partnerID, g.currency, g.gross, g.owed, g.gross-g.owed, len(g.commissions), r.Now); err != nil {
			return Run{}, err
		}
		// An approval that took effect by itself is written down with its date.
		if _, err := tx.ExecContext(ctx, `UPDATE commissions SET status = 'in_payout', payout_id = $2,
			approved_at = COALESCE(approved_at, available_on), updated_at = now() WHERE id = ANY ($1)`,
			pq.Array(g.commissions), id); err != nil {
			return Run{}, err
		}
		if len(g.clawbacks) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE commission_clawbacks SET payout_id = $2 WHERE id = ANY ($1)`,
				pq.Array(g.clawbacks), id); err != nil {
				return Run{}, err
			}
		}
		p, err := readPayout(ctx, tx, id)
		if err != nil {
			return Run{}, err
		}
		if err := audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: ActionPayoutCreate,
			Target: "payout:" + strconv.FormatInt(id, 10), Detail: map[string]any{"program_id": programID,
				"partner_id": g.partnerID, "currency": g.currency, "amount_cents": p.AmountCents,
				"clawback_cents": g.owed, "commission_count": len(g.commissions)}}); err != nil {
			return Run{}, err
		}
		out.Payouts = append(out.Payouts, p)
	}
	return out, nil
}

// decideRun is the payout run's rule: a partner's approved commissions in a currency are paid, less the
// clawbacks they owe in it, when that is positive and at least the program's minimum; else carried over
// (with why). A partner who owes clawbacks and has nothing approved is neither. Both lists are ordered by
// partner, then currency.
func decideRun(groups map[[2]string]*group, minimum int64) (due []*group, carried []CarriedOver) {
	carried = []CarriedOver{}
	for _, g := range groups {
		if len(g.commissions) == 0 {
			continue
		}
		switch net := g.gross - g.owed; {
		case net <= 0:
			carried = append(carried, CarriedOver{PartnerID: g.partnerID, Currency: g.currency, AmountCents: net, Reason: CarriedOwed})
		case net < minimum:
			carried = append(carried, CarriedOver{PartnerID: g.partnerID, Currency: g.currency, AmountCents: net, Reason: CarriedBelowMinimum})
		default:
			due = append(due, g)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if due[i].partnerID != due[j].partnerID {
			return due[i].partnerID < due[j].partnerID
		}
		return due[i].currency < due[j].currency
	})
	sort.Slice(carried, func(i, j int) bool {
		if carried[i].PartnerID != carried[j].PartnerID {
			return carried[i].PartnerID < carried[j].PartnerID
		}
		return carried[i].Currency < carried[j].Currency
	})
	return due, carried
}

// PayoutPage is one page of payouts, newest first, and the cursor of the next ("" at the end).
type PayoutPage struct {
	Payouts    []Payout
	NextCursor string
}

// ListPayouts is a page of the program's payouts (of partnerID's, when not 0; of status, when not ""), newest first.
func ListPayouts(ctx context.Context, db *sqlx.DB, accountID, programID, partnerID int64, status, cur string, limit int) (PayoutPage, error) {
	if status != "" {
		if err := CheckPayoutStatus(status); err != nil {
			return PayoutPage{}, err
		}
	}
	limit, err := pageLimit(limit)
	if err != nil {
		return PayoutPage{}, err
	}
	after, err := decodeCursor(cur)
	if err != nil {
		return PayoutPage{}, err
	}
	if _, err := access(ctx, db, accountID, programID, accounts.ActionCommissionsRead); err != nil {
		return PayoutPage{}, err
	}
	return listPayouts(ctx, db, programID, partnerID, status, after, limit)
}

// listPayouts is ListPayouts of the program's partner partnerID (0: every partner) once the reader may
// read them.
func listPayouts(ctx context.Context, db *sqlx.DB, programID, partnerID int64, status string, after *pagecursor.Position, limit int) (PayoutPage, error) {
	var afterID int64
	if after != nil {
		afterID = after.ID
	}
	var out []Payout
	if err := sqlx.SelectContext(ctx, db, &out, `SELECT `+payoutColumns+` WHERE o.program_id = $1
		AND ($2 = '' OR o.status = $2) AND ($3 = 0 OR o.id < $3) AND ($5 = 0 OR o.partner_id = $5) ORDER BY o.id DESC LIMIT $4`,
		programID, status, afterID, limit+1, partnerID); err != nil {
		return PayoutPage{}, err
	}
	var page PayoutPage
	page.Payouts, page.NextCursor = pagecursor.Trim(out, limit, func(p Payout) pagecursor.Position {
		return pagecursor.Position{At: p.CreatedAt, ID: p.ID}
	})
	return page, nil
}

// payoutAccess is the program of the payout id (ErrPayoutNotFound when there is none), once the account
// may do action in it.
func payoutAccess(ctx context.Context, db sqlx.QueryerContext, accountID, id int64, action string) (int64, error) {
	return ownedBy(ctx, db, "payouts", id, accountID, action, ErrPayoutNotFound)
}

func readPayout(ctx context.Context, db sqlx.QueryerContext, id int64) (Payout, error) {
	var p Payout
	err := sqlx.GetContext(ctx, db, &p, `SELECT `+payoutColumns+` WHERE o.id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return Payout{}, ErrPayoutNotFound
	}
	return p, err
}

// GetPayout is one payout, for a member who may read its program's.
func GetPayout(ctx context.Context, db *sqlx.DB, accountID, id int64) (Payout, error) {
	if _, err := payoutAccess(ctx, db, accountID, id, accounts.ActionCommissionsRead); err != nil {
		return Payout{}, err
	}
	return readPayout(ctx, db, id)
}

// MarkPaid marks the payout paid under the processor's reference (1 … MaxReference characters): its
// commissions become paid. Marking it paid again with the same reference changes nothing; with another,
// or once it failed, is a conflict.
func MarkPaid(ctx context.Context, db *sqlx.DB, r Request, id int64, reference string) (Payout, error) {
	if err := CheckReference(reference); err != nil {
		return Payout{}, err
	}
	return settle(ctx, db, r, id, func(tx *sqlx.Tx, p Payout) (bool, error) {
		switch p.Status {
		case PayoutPaid:
			if p.ExternalReference != nil && *p.ExternalReference == reference {
				return false, nil
			}
			return false, conflict("Payout %d is already paid with another external_reference", id)
		case PayoutFailed:
			return false, conflict("Payout %d has failed", id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE payouts SET status = 'paid', external_reference = $2, paid_at = $3
			WHERE id = $1`, id, reference, r.Now); err != nil {
			return false, err
		}
		_, err := tx.ExecContext(ctx, `UPDATE commissions SET status = 'paid', paid_at = $2, updated_at = now()
			WHERE payout_id = $1 AND status = 'in_payout'`, id, r.Now)
		return true, err
	}, ActionPayoutPaid, map[string]any{"external_reference": reference})
}

// MarkFailed marks the payout failed with a reason (1 … MaxReason characters): its commissions return to
// approved and the clawbacks it netted are owed again. A payout paid or failed already cannot fail.
func MarkFailed(ctx context.Context, db *sqlx.DB, r Request, id int64, reason string) (Payout, error) {
	if err := CheckReason(reason); err != nil {
		return Payout{}, err
	}
	return settle(ctx, db, r, id, func(tx *sqlx.Tx, p Payout) (bool, error) {
		switch p.Status {
		case PayoutPaid:
			return false, conflict("Payout %d is paid", id)
		case PayoutFailed:
			return false, conflict("Payout %d has already failed", id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE payouts SET status = 'failed', failure_reason = $2, failed_at = $3
			WHERE id = $1`, id, reason, r.Now); err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE commissions SET status = 'approved', payout_id = NULL, updated_at = now()
			WHERE payout_id = $1 AND status = 'in_payout'`, id); err != nil {
			return false, err
		}
		_, err := tx.ExecContext(ctx, `UPDATE commission_clawbacks SET payout_id = NULL WHERE payout_id = $1`, id)
		return true, err
	}, ActionPayoutFailed, map[string]any{"reason": reason})
}

// settle runs change on the payout locked in a transaction (with r's Idempotency-Key), records action in
// the audit log when change changed something, and answers the payout as it then is.
func settle(ctx context.Context, db *sqlx.DB, r Request, id int64, change func(*sqlx.Tx, Payout) (bool, error),
	action string, detail map[string]any) (Payout, error) {
	programID, err := payoutAccess(ctx, db, r.AccountID, id, accounts.ActionPayoutsWrite)
	if err != nil {
		return Payout{}, err
	}
	return run(ctx, db, r, func(tx *sqlx.Tx) (Payout, error) {
		// Taken before the payout's row, in the order a run takes its locks.
		if err := waitForPayoutRun(ctx, tx, programID); err != nil {
			return Payout{}, err
		}
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM payouts WHERE id = $1 FOR UPDATE`, id); err != nil {
			return Payout{}, err
		}
		p, err := readPayout(ctx, tx, id)
		if err != nil {
			return Payout{}, err
		}
		changed, err := change(tx, p)
		if err != nil || !changed {
			return p, err
		}
		if p, err = readPayout(ctx, tx, id); err != nil {
			return Payout{}, err
		}
		detail["program_id"], detail["partner_id"], detail["currency"] = programID, p.PartnerID, p.Currency
		detail["amount_cents"], detail["commission_count"] = p.AmountCents, p.CommissionCount
		err = audit.Write(ctx, tx, audit.Entry{At: r.Now, Actor: r.actor(), Action: action,
			Target: "payout:" + strconv.FormatInt(id, 10), Detail: detail})
		return p, err
	})
}

// FormatAmount writes cents of currency in major units with the currency's exponent: 1250 USD is
// "12.50", 125000 VND "125000".
func FormatAmount(cents int64, currency string) string {
	exp, _ := commission.Exponent(currency)
	if exp == 0 {
		return strconv.FormatInt(cents, 10)
	}
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	s := fmt.Sprintf("%0*d", exp+1, cents)
	return sign + s[:len(s)-exp] + "." + s[len(s)-exp:]
}
