package sales

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
)

// How a sale is recorded: two statements and one commit for any number of sales. Both statements call
// PL/pgSQL functions (pkg/sales/sql), whose plans PostgreSQL keeps per connection: a statement sent as
// text would be parsed and planned on every call, which cost more than running it.
//
//  1. readQuery reads, for every sale of the batch, what the rules need (a used transaction_id, the
//     program's terms, the customer with its row version, the click, the customer's first sale), locking
//     nothing.
//  2. decide applies the rules in Go.
//  3. writeQuery writes every sale that passed, with its commission, its customer's new state and its
//     leads and click, in one statement (its own transaction). Each sale is written only if its customer's
//     row is still the version the decision rested on (the row is locked meanwhile) and its
//     transaction_id is still free in the program; a sale that loses either race is read and decided
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
	if in.SaleType == "" {
		in.SaleType = "payment"
	}
	return &job{in: in}, nil
}

// record records the sales of jobs, setting each job's res or err.
func record(ctx context.Context, db *sqlx.DB, log *slog.Logger, jobs []*job) {
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
			retry, err := recordLocked(ctx, db, j)
			switch {
			case err != nil && !dbfault.Conflict(err):
				j.err = err
			case err != nil || retry:
				again = append(again, j)
			}
		}
		if len(optimistic) > 0 {
			more, err := recordRound(ctx, db, optimistic)
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
					record(ctx, db, log, []*job{j})
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
func recordLocked(ctx context.Context, db *sqlx.DB, j *job) (bool, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM customers WHERE id = $1 FOR UPDATE`, j.customer); err != nil {
		return false, err
	}
	r, err := prepare(ctx, tx, []*job{j})
	if err != nil {
		return false, err
	}
	again, err := apply(ctx, tx, r)
	if err != nil {
		_ = tx.Rollback() // the diagnosis below runs on another connection: release the customer first
		return false, diagnose(ctx, db, r, err)
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
func recordRound(ctx context.Context, db *sqlx.DB, jobs []*job) ([]*job, error) {
	r, err := prepare(ctx, db, jobs)
	if err != nil {
		return nil, err
	}
	again, err := apply(ctx, db, r)
	if err != nil {
		return nil, diagnose(ctx, db, r, err)
	}
	return again, nil
}

// round is a round's decisions: the sales to write with their plans, and those to decide again.
type round struct {
	writes []*job
	plans  []plan
	again  []*job
}

// prepare reads the jobs' states and decides each: a refusal or a window miss is answered at once.
func prepare(ctx context.Context, db sqlx.QueryerContext, jobs []*job) (round, error) {
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
		p, err := decide(j.in, states[i])
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
		keys := []string{"txn " + strconv.FormatInt(j.in.ProgramID, 10) + " " + j.in.TransactionID, customerKey(p.cust)}
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
func apply(ctx context.Context, db sqlx.QueryerContext, r round) ([]*job, error) {
	if len(r.writes) == 0 {
		return r.again, nil
	}
	written, err := write(ctx, db, r.writes, r.plans)
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

// diagnose is the error a round's failed write answers: a CommissionError when it wrote one paying sale
// and the failure was its commission's, else err itself.
func diagnose(ctx context.Context, db *sqlx.DB, r round, err error) error {
	if len(r.writes) == 1 && r.plans[0].pays && !dbfault.Conflict(err) && !dbfault.Unavailable(err) &&
		commissionFailed(ctx, db, r.writes[0], r.plans[0]) {
		return &CommissionError{Err: err}
	}
	return err
}

// commissionFailed tells whether the failed write of one paying sale failed in its commission (the
// interface answers that failure with its own message, and clients do not retry it): run again in a
// transaction rolled back at once, the write still fails, and succeeds without the commission. A
// failure that does not come back was passing, and is answered as such. Either way nothing was stored.
func commissionFailed(ctx context.Context, db *sqlx.DB, j *job, p plan) bool {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return false
	}
	defer tx.Rollback() //nolint:errcheck // rolled back on purpose: this only asks what failed
	if _, err := tx.ExecContext(ctx, `SAVEPOINT whole`); err != nil {
		return false
	}
	if _, err := write(ctx, tx, []*job{j}, []plan{p}); err == nil {
		return false
	}
	if _, err := tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT whole`); err != nil {
		return false
	}
	p.pays = false
	_, err = write(ctx, tx, []*job{j}, []plan{p})
	return err == nil
}

// customerKey names the customer a plan writes, for keeping two sales of one customer apart.
func customerKey(c attribution.Customer) string {
	switch {
	case c.ID != 0:
		return "customer " + strconv.FormatInt(c.ID, 10)
	case c.Key != nil:
		return "key " + strconv.FormatInt(c.ProgramID, 10) + " " + *c.Key
	default:
		return "click " + strconv.FormatInt(c.ProgramID, 10) + " " + strconv.FormatInt(deref(c.ClickRef), 10)
	}
}

// readQuery reads each sale's state (pkg/sales/sql/sales_state.sql): inputs are parallel arrays, ord
// ties each row to its input.
const readQuery = `SELECT * FROM sales_state($1::bigint[], $2::text[], $3::text[], $4::text[])`

func read(ctx context.Context, db sqlx.QueryerContext, jobs []*job) ([]state, error) {
	n := len(jobs)
	programs, txns, keys, clickIDs := make([]int64, n), make([]string, n), make([]string, n), make([]string, n)
	for i, j := range jobs {
		programs[i], txns[i], keys[i], clickIDs[i] = j.in.ProgramID, j.in.TransactionID, j.in.CustomerKey, j.in.ClickID
	}
	var states []state
	if err := sqlx.SelectContext(ctx, db, &states, readQuery, pq.Array(programs), pq.Array(txns), pq.Array(keys),
		pq.Array(clickIDs)); err != nil {
		return nil, fmt.Errorf("read sales: %w", err)
	}
	if len(states) != n {
		return nil, fmt.Errorf("read sales: %d rows for %d sales", len(states), n)
	}
	return states, nil
}

// writeQuery writes the planned sales (pkg/sales/sql/sales_record.sql, which converts the customer, its
// leads and its click through their owners' functions). Empty texts, 0 ids and a commission of -1 stand
// for none in the input arrays.
const writeQuery = `SELECT * FROM sales_record($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[],
	$6::text[], $7::bigint[], $8::bigint[], $9::boolean[], $10::text[], $11::bigint[], $12::text[], $13::text[],
	$14::boolean[], $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[],
	$22::timestamptz[], $23::boolean[], $24::bigint[])`

// written is one sale writeQuery recorded.
type written struct {
	Ord                 int64   `db:"ord"`
	SaleID              int64   `db:"sale_id"`
	CommissionID        *int64  `db:"commission_id"`
	AmountCents         *int64  `db:"amount_cents"`
	ReversedAmountCents *int64  `db:"reversed_amount_cents"`
	Currency            *string `db:"currency"`
	Status              *string `db:"status"`
}

// write runs writeQuery for the planned jobs and returns what it recorded by ord (1-based position).
func write(ctx context.Context, db sqlx.QueryerContext, jobs []*job, plans []plan) (map[int64]written, error) {
	n := len(jobs)
	var (
		programs, customers, clickRefs, partners, partnerPrograms, amounts, commissions = make([]int64, n),
			make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		versions, keys, clickIDs, txns, currencies, saleTypes, providers, paymentIDs, livemodes, eventNames,
		subscriptions, intervals, sources, dates = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		customerTests, recurring, tests = make([]bool, n), make([]bool, n), make([]bool, n)
	)
	for i, j := range jobs {
		in, p := j.in, plans[i]
		programs[i], customers[i], versions[i], keys[i] = in.ProgramID, p.cust.ID, p.version, deref(p.cust.Key)
		clickRefs[i], clickIDs[i], partners[i], partnerPrograms[i] = deref(p.cust.ClickRef), deref(p.cust.ClickID),
			*p.cust.PartnerID, *p.cust.PartnerProgramID
		customerTests[i], txns[i], amounts[i], currencies[i] = p.cust.IsTest, in.TransactionID, in.AmountCents, in.Currency
		saleTypes[i], recurring[i], providers[i], paymentIDs[i] = in.SaleType, in.IsRecurring, in.Provider, in.ProviderPaymentID
		if in.Livemode != nil {
			livemodes[i] = strconv.FormatBool(*in.Livemode)
		}
		eventNames[i], subscriptions[i], intervals[i], sources[i] = in.EventName, in.SubscriptionID, in.SubscriptionInterval, in.Source
		dates[i], tests[i], commissions[i] = in.OccurredAt.UTC().Format(time.RFC3339Nano), p.test, -1
		if p.pays {
			commissions[i] = p.amount
		}
	}
	var rows []written
	if err := sqlx.SelectContext(ctx, db, &rows, writeQuery, pq.Array(programs), pq.Array(customers), pq.Array(versions),
		pq.Array(keys), pq.Array(clickRefs), pq.Array(clickIDs), pq.Array(partners), pq.Array(partnerPrograms),
		pq.Array(customerTests), pq.Array(txns), pq.Array(amounts), pq.Array(currencies), pq.Array(saleTypes),
		pq.Array(recurring), pq.Array(providers), pq.Array(paymentIDs), pq.Array(livemodes), pq.Array(eventNames),
		pq.Array(subscriptions), pq.Array(intervals), pq.Array(sources), pq.Array(dates), pq.Array(tests),
		pq.Array(commissions)); err != nil {
		return nil, fmt.Errorf("record sales: %w", err)
	}
	out := make(map[int64]written, len(rows))
	for _, r := range rows {
		out[r.Ord] = r
	}
	return out, nil
}
