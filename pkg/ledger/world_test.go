package ledger_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// world is a brand's program paying 20 % on every sale (recurring), its partners each with one customer,
// and a clock the test moves. Sales and refunds go through pkg/sales, as the routes record them.
type world struct {
	t         *testing.T
	ctx       context.Context
	d         *dbtest.Database
	brand     seed.Result
	accountID int64
	clicks    *clicks.Recorder
	log       *slog.Logger

	mu       sync.Mutex
	now      time.Time
	partners map[int64]string // partner id → its customer's key
	// firstClick is the click a partner's customer's first sale names (the sale makes the customer).
	firstClick sync.Map
	txns       atomic.Int64
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, ctx: context.Background(), d: dbtest.New(t), now: time.Now().UTC().Truncate(time.Second),
		partners: map[int64]string{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	var err error
	if w.brand, err = seed.Run(w.ctx, w.d.DB, seed.Options{CommissionType: "recurring_percent", CommissionRate: "20"}); err != nil {
		t.Fatal(err)
	}
	if err := w.d.Get(&w.accountID, `SELECT id FROM accounts WHERE email = $1`, w.brand.AccountEmail); err != nil {
		t.Fatal(err)
	}
	w.clicks = clicks.NewRecorder(w.d.DB, w.log, 1, 8, nil)
	t.Cleanup(w.clicks.Close)
	w.customer(w.brand.PartnerID, w.brand.AffiliateURL)
	return w
}

// clock is the world's time; later moves it.
func (w *world) clock() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

func (w *world) later(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

// set changes the program's ledger settings.
func (w *world) set(holdDays int, approval string, minimum int64) {
	w.t.Helper()
	if _, err := w.d.Exec(`UPDATE programs SET hold_days = $2, commission_approval = $3, payout_minimum_cents = $4 WHERE id = $1`,
		w.brand.ProgramID, holdDays, approval, minimum); err != nil {
		w.t.Fatal(err)
	}
}

// partner adds a partner with a link, a click on it and a customer of its own; it returns its id.
func (w *world) partner(name string) int64 {
	w.t.Helper()
	p, err := programs.AddPartner(w.ctx, w.d.DB, w.brand.ProgramID, programs.NewPartner{Name: name, Email: name + "@partners.test"})
	if err != nil {
		w.t.Fatal(err)
	}
	l, err := programs.CreateLink(w.ctx, w.d.DB, w.brand.ProgramID, p.ID, "")
	if err != nil {
		w.t.Fatal(err)
	}
	w.customer(p.ID, l.ReferralURL())
	return p.ID
}

// customer readies the partner's customer: a click on its link, which the customer's first sale names
// (the sale makes the customer, keyed).
func (w *world) customer(partnerID int64, affiliateURL string) {
	w.t.Helper()
	c, err := w.clicks.Record(w.ctx, clicks.Input{AffiliateURL: affiliateURL, IP: fmt.Sprintf("10.9.%d.%d", partnerID/250, partnerID%250+1),
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0"})
	if err != nil {
		w.t.Fatal(err)
	}
	key := fmt.Sprintf("customer-%d", partnerID)
	w.mu.Lock()
	w.partners[partnerID] = key
	w.mu.Unlock()
	w.firstClick.Store(partnerID, c.ClickID)
}

// sold is a recorded sale and its transaction_id.
type sold struct {
	sales.Result
	TransactionID string
}

// sale records a sale of the partner's customer and answers its commission.
func (w *world) sale(partnerID, cents int64, currency string, test bool) sold {
	w.t.Helper()
	r, err := w.trySale(partnerID, cents, currency, test)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *world) trySale(partnerID, cents int64, currency string, test bool) (sold, error) {
	w.mu.Lock()
	key := w.partners[partnerID]
	w.mu.Unlock()
	in := sales.Input{ProgramID: w.brand.ProgramID, TransactionID: fmt.Sprintf("txn-%d", w.txns.Add(1)), AmountCents: cents,
		Currency: currency, CustomerKey: key, OccurredAt: w.clock(), Test: test, Source: sales.SourceAPI}
	if c, ok := w.firstClick.LoadAndDelete(partnerID); ok {
		in.ClickID = c.(string)
	}
	r, err := sales.Record(w.ctx, w.d.DB, w.log, w.clock, in)
	if err == nil && r.Commission == nil {
		err = fmt.Errorf("sale %s paid no commission: %+v", in.TransactionID, r)
	}
	return sold{Result: r, TransactionID: in.TransactionID}, err
}

// refund refunds cents of the sale (all that is left when cents is 0).
func (w *world) refund(txn string, cents int64) sales.RefundResult {
	w.t.Helper()
	r, err := w.tryRefund(txn, cents)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *world) tryRefund(txn string, cents int64) (sales.RefundResult, error) {
	in := sales.RefundInput{ProgramID: w.brand.ProgramID, TransactionID: txn, Source: sales.SourceAPI}
	if cents > 0 {
		in.AmountCents = &cents
	}
	return sales.Refund(w.ctx, w.d.DB, w.log, w.clock, in)
}

// req is the brand's owner acting now, without an Idempotency-Key.
func (w *world) req() ledger.Request {
	return ledger.Request{AccountID: w.accountID, Email: w.brand.AccountEmail, Now: w.clock()}
}

func (w *world) commission(id int64) ledger.Commission {
	w.t.Helper()
	c, err := ledger.GetCommission(w.ctx, w.d.DB, w.accountID, id, w.clock())
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

func (w *world) balances() map[string]ledger.Balance {
	w.t.Helper()
	bs, err := ledger.Balances(w.ctx, w.d.DB, w.accountID, w.brand.ProgramID, w.clock())
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]ledger.Balance{}
	for _, b := range bs {
		out[fmt.Sprintf("%d/%s", b.PartnerID, b.Currency)] = b
	}
	return out
}

// conserved checks the ledger's equation from the rows themselves: for every partner and currency, the
// payable amounts of its non-rejected, non-test commissions add up to pending + approved + in_payout +
// paid, and the clawback owed is what no processing or paid payout has netted.
func (w *world) conserved() {
	w.t.Helper()
	var rows []struct {
		Key     string `db:"key"`
		Payable int64  `db:"payable"`
		Owed    int64  `db:"owed"`
	}
	if err := w.d.Select(&rows, `SELECT k.key, COALESCE(c.payable, 0) AS payable, COALESCE(o.owed, 0) AS owed
		FROM (SELECT DISTINCT partner_id || '/' || currency AS key FROM commissions WHERE program_id = $1 AND NOT is_test
			UNION SELECT partner_id || '/' || currency FROM commission_clawbacks WHERE program_id = $1 AND NOT is_test) k
		LEFT JOIN (SELECT partner_id || '/' || currency AS key, sum(amount_cents - reversed_amount_cents) AS payable
			FROM commissions WHERE program_id = $1 AND NOT is_test AND status <> 'rejected' GROUP BY 1) c ON c.key = k.key
		LEFT JOIN (SELECT k.partner_id || '/' || k.currency AS key, sum(k.amount_cents) AS owed FROM commission_clawbacks k
			LEFT JOIN payouts o ON o.id = k.payout_id
			WHERE k.program_id = $1 AND NOT k.is_test AND (k.payout_id IS NULL OR o.status = 'failed') GROUP BY 1) o ON o.key = k.key`,
		w.brand.ProgramID); err != nil {
		w.t.Fatal(err)
	}
	bs := w.balances()
	if len(bs) != len(rows) {
		w.t.Errorf("%d balances for %d partner-currency pairs", len(bs), len(rows))
	}
	for _, r := range rows {
		b := bs[r.Key]
		if sum := b.PendingCents + b.ApprovedCents + b.InPayoutCents + b.PaidCents; sum != r.Payable || b.ClawbackOwedCents != r.Owed {
			w.t.Errorf("%s: buckets %+v add up to %d, owe %d; the rows' payable is %d, owed %d", r.Key, b, sum,
				b.ClawbackOwedCents, r.Payable, r.Owed)
		}
	}
}

func (w *world) count(q string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.d.Get(&n, q, args...); err != nil {
		w.t.Fatal(err)
	}
	return n
}

func (w *world) audits(action string) int {
	return w.count(`SELECT count(*) FROM audit_log WHERE action = $1`, action)
}

// auditsWith counts the audit log's entries of action whose detail carries key.
func (w *world) auditsWith(action, key string) int {
	return w.count(`SELECT count(*) FROM audit_log WHERE action = $1 AND detail ? $2`, action, key)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
