package sales

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	salessql "github.com/reftrack/reftrack/pkg/sales/sql"
)

// How a sale is recorded: two statements and one commit for any number of sales. Both statements call
// PL/pgSQL functions (pkg/sales/sql), whose plans PostgreSQL keeps per connection: a statement sent as
// text would be parsed and planned on every call, which cost more than running it.
//
//  1. stateCall (sales_state) reads, for every sale of the batch, what the rules need (a used
//     transaction_id, the program's terms, the customer with its row version, the click, the customer's
//     first sale), locking nothing.
//  2. decide applies the rules in Go.
//  3. recordCall (sales_record) writes every sale that passed, with its commission, its customer's new
//     state and its leads and click, in one statement (its own transaction). Each sale is written only if
//     its customer's row is still the version the decision rested on (the row is locked meanwhile) and
//     its transaction_id is still free in the program; a sale that loses either race is read and decided
//     again, so the answer is always the one a sale alone would have had.
//
// A batch never holds two sales of one customer or one transaction_id: the later waits for the next
// round. Every sale's answer is given only after the statement holding it has committed.

// maxRounds bounds how often sales are decided again after losing races; lockAfter is how many writes a sale may lose to
// concurrent changes of its customer before it locks the customer first and decides under that lock
// (which cannot lose): optimism is cheap when customers rarely race, and a busy customer cannot starve
// a sale.
const (
	maxRounds = 8
	lockAfter = 2
)

// job is one sale on its way through record.
type job struct {
	in  Input
	res Result
	err error
	// lost counts the writes this sale lost to a concurrent change of its customer (customer, the last
	// one decided on); after lockAfter of them it is recorded with that customer locked first.
	lost     int
	customer int64
}

// newJob checks what a sale needs before it reaches the database.
func newJob(in Input) (*job, error) {
	if err := attribution.CheckKey(in.CustomerKey); err != nil {
		return nil, err
	}
	if in.OccurredAt.IsZero() {
		return nil, ErrOccurredAtRequired
	}
	// The database keeps microseconds: the rules decide on the time it stores (the hold's end is the
	// stored sale date's, to the microsecond).
	in.OccurredAt = in.OccurredAt.Truncate(time.Microsecond)
	if in.SaleType == "" {
		in.SaleType = "payment"
	}
	return &job{in: in}, nil
}

// record records the sales of jobs, setting each job's res or err.
func record(ctx context.Context, db *sqlx.DB, log *slog.Logger, now func() time.Time, jobs []*job) {
	pending := jobs
	// A round writes at least one sale of each customer (the others of a customer wait for the next
	// round), so len(jobs) rounds are enough for a batch; maxRounds more for sales that lose races.
	for round := 0; len(pending) > 0; round++ {
		if round == len(jobs)+maxRounds {
			for _, j := range pending {
				j.err = fmt.Errorf("sale %q not recorded after %d attempts", j.in.TransactionID, round)
			}
			return
		}
		var optimistic, again []*job
		for _, j := range pending {
			if j.lost < lockAfter || j.customer == 0 {
				optimistic = append(optimistic, j)
				continue
			}
			retry, err := recordLocked(ctx, db, now, j)
			switch {
			case err != nil && !dbfault.Conflict(err):
				j.err = err
			case err != nil || retry:
				again = append(again, j)
			}
		}
		if len(optimistic) > 0 {
			more, err := recordRound(ctx, db, now, optimistic)
			switch {
			case err == nil:
				again = append(again, more...)
			case dbfault.Conflict(err):
				// A deadlock or serialisation failure rolled the statement back: run the round again.
				again = append(again, optimistic...)
			case len(optimistic) > 1 && !dbfault.Unavailable(err):
				// One sale's bad data must not fail the others: each alone.
				log.WarnContext(ctx, "sale batch failed; recording its sales one by one", "sales", len(optimistic), "err", err)
				for _, j := range optimistic {
					record(ctx, db, log, now, []*job{j})
				}
			default:
				for _, j := range optimistic {
					j.err = err
				}
			}
		}
		pending = again
	}
}

// recordLocked records one sale whose customer kept changing under it: in one transaction it locks the
// customer it was last decided on, then reads, decides and writes as a round does, so that nobody can
// change the customer in between. It reports whether the sale must go round again (decided on another
// customer, or its transaction_id taken meanwhile).
func recordLocked(ctx context.Context, db *sqlx.DB, now func() time.Time, j *job) (bool, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM customers WHERE id = $1 FOR UPDATE`, j.customer); err != nil {
		return false, err
	}
	at := now()
	r, err := prepare(ctx, tx, []*job{j}, at)
	if err != nil {
		return false, err
	}
	again, err := apply(ctx, tx, at, r)
	if err != nil {
		return false, diagnose(err)
	}
	if len(again) > 0 {
		return true, nil
	}
	if err := tx.Commit(); err != nil {
		j.res = Result{}
		return false, err
	}
	return false, nil
}

// recordRound reads, decides and writes the jobs once; it returns those to decide again.
func recordRound(ctx context.Context, db *sqlx.DB, now func() time.Time, jobs []*job) ([]*job, error) {
	at := now()
	r, err := prepare(ctx, db, jobs, at)
	if err != nil {
		return nil, err
	}
	again, err := apply(ctx, db, at, r)
	if err != nil {
		return nil, diagnose(err)
	}
	return again, nil
}

// round is a round's decisions: the sales to write with their plans, and those to decide again.
type round struct {
	writes []*job
	plans  []plan
	again  []*job
}

// prepare reads the jobs' states and decides each at now: a refusal or a window miss is answered at once.
func prepare(ctx context.Context, db sqlx.QueryerContext, jobs []*job, now time.Time) (round, error) {
	states, err := read(ctx, db, jobs)
	if err != nil {
		return round{}, err
	}
	var (
		r     round
		taken = map[string]bool{}
	)
	for i, j := range jobs {
		j.res, j.err = Result{}, nil // an earlier attempt's answer does not stand
		p, err := decide(j.in, states[i], now)
		switch {
		case err != nil:
			j.err = err
			continue
		case p.window.Expired:
			j.res = p.result(j.in.ProgramID)
			continue
		}
		// One sale per customer and per transaction_id in a statement: the rules of the second depend on
		// the first (first sale, duplicate).
		keys := []string{"txn " + strconv.FormatInt(j.in.ProgramID, 10) + " " + j.in.TransactionID, p.customerKey()}
		if taken[keys[0]] || taken[keys[1]] {
			r.again = append(r.again, j)
			continue
		}
		taken[keys[0]], taken[keys[1]] = true, true
		r.writes, r.plans = append(r.writes, j), append(r.plans, p)
	}
	return r, nil
}

// apply writes a round's planned sales and answers them; it returns those to decide again (with the
// round's own).
func apply(ctx context.Context, db sqlx.QueryerContext, now time.Time, r round) ([]*job, error) {
	if len(r.writes) == 0 {
		return r.again, nil
	}
	written, err := write(ctx, db, now, r.writes, r.plans)
	if err != nil {
		return nil, err
	}
	again := r.again
	for i, j := range r.writes {
		w, ok := written[int64(i+1)]
		if !ok {
			again = append(again, j) // its customer changed, or its transaction_id was taken meanwhile
			j.lost++
			j.customer = r.plans[i].cust.ID
			continue
		}
		j.res = r.plans[i].result(j.in.ProgramID)
		j.res.SaleID = w.SaleID
		if w.CommissionID != nil {
			j.res.Commission = &Commission{ID: *w.CommissionID, AmountCents: *w.AmountCents,
				ReversedAmountCents: *w.ReversedAmountCents, Currency: *w.Currency, Status: *w.Status}
		}
	}
	return again, nil
}

// diagnose is the error a round's failed write answers: a CommissionError when it failed writing a
// commission (sales_record raises any failure of its commission insert with the table commissions
// named in the error), else err itself. A conflict or an unavailable database stays what it is, wherever
// it struck: it is retried, or answered 503.
func diagnose(err error) error {
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Table == "commissions" && !dbfault.Conflict(err) && !dbfault.Unavailable(err) {
		return &CommissionError{Err: err}
	}
	return err
}

// customerKey names the customer a plan writes, for keeping two sales of one customer apart.
func (p plan) customerKey() string {
	c := p.cust
	switch {
	case p.version != nil:
		return "customer " + strconv.FormatInt(c.ID, 10)
	case c.Key != nil:
		return "key " + strconv.FormatInt(c.ProgramID, 10) + " " + *c.Key
	default:
		return "click " + strconv.FormatInt(c.ProgramID, 10) + " " + strconv.FormatInt(deref(c.ClickRef), 10)
	}
}

// stateCall reads each sale's state (pkg/sales/sql/sales_state.sql); ord ties each row to its input.
var stateCall = pgcall.New[stateInput, pgcall.None](salessql.State)

// stateInput is one sale as sales_state takes it; nil is a value not sent.
type stateInput struct {
	Program     int64   `pg:"p_program"`
	Txn         string  `pg:"p_txn"`
	CustomerKey *string `pg:"p_customer_key"`
	ClickID     *string `pg:"p_click_id"`
}

func read(ctx context.Context, db sqlx.QueryerContext, jobs []*job) ([]state, error) {
	in := make([]stateInput, len(jobs))
	for i, j := range jobs {
		in[i] = stateInput{Program: j.in.ProgramID, Txn: j.in.TransactionID, CustomerKey: text(j.in.CustomerKey),
			ClickID: text(j.in.ClickID)}
	}
	var states []state
	if err := stateCall.Select(ctx, db, &states, in, pgcall.None{}); err != nil {
		return nil, fmt.Errorf("read sales: %w", err)
	}
	if len(states) != len(jobs) {
		return nil, fmt.Errorf("read sales: %d rows for %d sales", len(states), len(jobs))
	}
	return states, nil
}

// recordCall writes the planned sales (pkg/sales/sql/sales_record.sql, which converts the customer,
// its leads and its click through their owners' functions).
var recordCall = pgcall.New[recordInput, recordFixed](salessql.Record)

// recordFixed is what sales_record takes once per batch: the time of the writes (a rejection's date).
type recordFixed struct {
	Now time.Time `pg:"p_now"`
}

// recordInput is one planned sale as sales_record takes it; nil is a value not sent.
type recordInput struct {
	Program int64 `pg:"p_program"`
	// The customer and the row version the decision rests on; both nil when the sale makes the customer
	// from its click.
	Customer       *int64    `pg:"p_customer"`
	Version        *string   `pg:"p_version"`
	CustomerKey    *string   `pg:"p_customer_key"`
	ClickRef       *int64    `pg:"p_click_ref"`
	ClickID        *string   `pg:"p_click_id"`
	Partner        int64     `pg:"p_partner"`
	PartnerProgram int64     `pg:"p_partner_program"`
	CustomerTest   bool      `pg:"p_customer_test"`
	Txn            string    `pg:"p_txn"`
	Amount         int64     `pg:"p_amount"`
	Currency       string    `pg:"p_currency"`
	SaleType       string    `pg:"p_sale_type"`
	Recurring      bool      `pg:"p_recurring"`
	Provider       *string   `pg:"p_provider"`
	PaymentID      *string   `pg:"p_payment_id"`
	Livemode       *bool     `pg:"p_livemode"`
	EventName      *string   `pg:"p_event_name"`
	Subscription   *string   `pg:"p_subscription"`
	Interval       *string   `pg:"p_interval"`
	Source         string    `pg:"p_source"`
	SaleDate       time.Time `pg:"p_sale_date"`
	Test           bool      `pg:"p_test"`
	// The commission as pkg/commission decided it; CommissionCents nil: the sale pays none.
	CommissionCents  *int64     `pg:"p_commission"`
	CommissionStatus *string    `pg:"p_commission_status"`
	AvailableOn      *time.Time `pg:"p_available_on"`
	ApprovedAt       *time.Time `pg:"p_approved_at"`
	RejectedReason   *string    `pg:"p_rejected_reason"`
	// What the sale counts for (pkg/counting).
	CountSales      int64 `pg:"p_count_sales"`
	CountCustomers  int64 `pg:"p_count_customers"`
	CountRevenue    int64 `pg:"p_count_revenue"`
	CountCommission int64 `pg:"p_count_commission"`
}

// recordInputOf is a planned sale as sales_record takes it.
func recordInputOf(in Input, p plan) recordInput {
	r := recordInput{
		Program: in.ProgramID, Version: p.version, CustomerKey: p.cust.Key, ClickRef: p.cust.ClickRef, ClickID: p.cust.ClickID,
		Partner: *p.cust.PartnerID, PartnerProgram: *p.cust.PartnerProgramID, CustomerTest: p.cust.IsTest,
		Txn: in.TransactionID, Amount: in.AmountCents, Currency: p.currency, SaleType: in.SaleType, Recurring: in.IsRecurring,
		Provider: text(in.Provider), PaymentID: text(in.ProviderPaymentID), Livemode: in.Livemode, EventName: text(in.EventName),
		Subscription: text(in.SubscriptionID), Interval: text(in.SubscriptionInterval), Source: in.Source,
		SaleDate: in.OccurredAt, Test: p.test,
	}
	if p.version != nil {
		r.Customer = &p.cust.ID
	}
	facts := counting.SaleFacts{AmountCents: in.AmountCents, FirstSale: p.first, Test: p.test}
	if o := p.outcome; o.Pays {
		r.CommissionCents, r.CommissionStatus, r.AvailableOn = &o.AmountCents, &o.Status, &o.AvailableOn
		r.ApprovedAt, r.RejectedReason = o.ApprovedAt, text(o.RejectedReason)
		facts.CommissionCents, facts.CommissionRejected = o.AmountCents, o.Status == commission.StatusRejected
	}
	counts := counting.Sale(facts)
	r.CountSales, r.CountCustomers, r.CountRevenue, r.CountCommission = counts.Sales, counts.Customers, counts.RevenueCents,
		counts.CommissionCents
	return r
}

// text is s, or nil when empty.
func text(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// written is one sale sales_record recorded.
type written struct {
	Ord                 int64   `db:"ord"`
	SaleID              int64   `db:"sale_id"`
	CommissionID        *int64  `db:"commission_id"`
	AmountCents         *int64  `db:"amount_cents"`
	ReversedAmountCents *int64  `db:"reversed_amount_cents"`
	Currency            *string `db:"currency"`
	Status              *string `db:"status"`
}

// write records the planned jobs and returns what it recorded by ord (1-based position).
func write(ctx context.Context, db sqlx.QueryerContext, now time.Time, jobs []*job, plans []plan) (map[int64]written, error) {
	in := make([]recordInput, len(jobs))
	for i, j := range jobs {
		in[i] = recordInputOf(j.in, plans[i])
	}
	var rows []written
	if err := recordCall.Select(ctx, db, &rows, in, recordFixed{Now: now}); err != nil {
		return nil, fmt.Errorf("record sales: %w", err)
	}
	out := make(map[int64]written, len(rows))
	for _, r := range rows {
		out[r.Ord] = r
	}
	return out, nil
}
