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
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
)

// How a sale is recorded: two statements and one commit for any number of sales.
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

// maxRounds bounds how often one sale is decided again because its customer kept changing under it.
const maxRounds = 8

// job is one sale on its way through record.
type job struct {
	in   Input
	res  Result
	err  error
	done chan struct{} // closed once res or err is final (Recorder only)
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
	for round := 0; len(pending) > 0; round++ {
		if round == maxRounds {
			for _, j := range pending {
				j.err = fmt.Errorf("sale %q not recorded: its customer changed on each of %d attempts", j.in.TransactionID, maxRounds)
			}
			return
		}
		again, err := recordRound(ctx, db, pending)
		switch {
		case err == nil:
			pending = again
		case retryable(err):
			// A deadlock or serialisation failure rolled the statement back: run the round again.
		case len(pending) > 1 && !dbfault.Unavailable(err):
			// One sale's bad data must not fail the others: each alone.
			log.WarnContext(ctx, "sale batch failed; recording its sales one by one", "sales", len(pending), "err", err)
			for _, j := range pending {
				record(ctx, db, log, []*job{j})
			}
			return
		default:
			for _, j := range pending {
				j.err = err
			}
			return
		}
	}
}

// retryable reports a failure that rolled the statement back for reasons of concurrency only.
func retryable(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") // deadlock_detected, serialization_failure
}

// recordRound reads, decides and writes the jobs once; it returns those to decide again.
func recordRound(ctx context.Context, db *sqlx.DB, jobs []*job) ([]*job, error) {
	states, err := read(ctx, db, jobs)
	if err != nil {
		return nil, err
	}
	var (
		again  []*job
		writes []*job
		plans  []plan
		taken  = map[string]bool{}
	)
	for i, j := range jobs {
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
			again = append(again, j)
			continue
		}
		taken[keys[0]], taken[keys[1]] = true, true
		writes, plans = append(writes, j), append(plans, p)
	}
	if len(writes) == 0 {
		return again, nil
	}
	written, err := write(ctx, db, writes, plans)
	if err != nil {
		if len(writes) == 1 && plans[0].pays && !retryable(err) && !dbfault.Unavailable(err) &&
			commissionFailed(ctx, db, writes[0], plans[0]) {
			return nil, &CommissionError{Err: err}
		}
		return nil, err
	}
	for i, j := range writes {
		w, ok := written[int64(i+1)]
		if !ok {
			again = append(again, j) // its customer changed, or its transaction_id was taken meanwhile
			continue
		}
		j.res = plans[i].result(j.in.ProgramID)
		j.res.SaleID = w.SaleID
		if w.CommissionID != nil {
			j.res.Commission = &Commission{ID: *w.CommissionID, AmountCents: *w.AmountCents,
				ReversedAmountCents: *w.ReversedAmountCents, Currency: *w.Currency, Status: *w.Status}
		}
	}
	return again, nil
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

// readQuery reads each sale's state; inputs are parallel arrays, ord ties each row to its input.
const readQuery = `
SELECT i.ord,
	(SELECT s.id FROM sales s WHERE s.program_id = i.program_id AND s.processor_event_id = i.txn) AS duplicate_id,
	p.id IS NOT NULL AS program_found, p.commission_type, p.commission_rate::text AS commission_rate,
	p.commission_duration_months, p.attribution_window_days,
	cu.id AS customer_id, cu.version AS customer_version, cu.customer_key, cu.click_ref AS customer_click_ref,
	cc.click_id AS customer_click_id, cc.click_timestamp AS customer_click_timestamp, cu.partner_id,
	cu.partner_program_id, cu.status, cu.signed_up_at, cu.converted_at, cu.is_test AS customer_test,
	(SELECT min(s.sale_date) FROM sales s WHERE s.customer_id = cu.id) AS first_sale,
	k.id AS click_ref, k.program_id AS click_program_id, k.partner_id AS click_partner_id,
	k.click_timestamp, k.is_test AS click_test,
	(SELECT pp.id FROM partner_programs pp WHERE pp.partner_id = k.partner_id AND pp.program_id = i.program_id) AS click_partner_program_id
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS i(program_id, txn, customer_key, click_id, ord)
LEFT JOIN programs p ON p.id = i.program_id
LEFT JOIN clicks k ON k.click_id = NULLIF(i.click_id, '')
LEFT JOIN LATERAL (
	SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
		c.signed_up_at, c.converted_at, c.is_test
	FROM customers c WHERE c.program_id = i.program_id AND c.customer_key = NULLIF(i.customer_key, '')
	UNION ALL
	(SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
		c.signed_up_at, c.converted_at, c.is_test
	FROM customers c WHERE i.customer_key = '' AND c.program_id = i.program_id AND c.click_ref = k.id ORDER BY c.id LIMIT 1)
) cu ON true
LEFT JOIN clicks cc ON cc.id = cu.click_ref
ORDER BY i.ord`

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

// writeQuery writes the planned sales (see the top of this file). Empty texts, 0 ids and a commission of
// -1 stand for NULL in the input arrays. Other packages' fragments write the tables they own.
var writeQuery = `
WITH input AS (
	SELECT ord, program_id, NULLIF(customer_id, 0) AS customer_id, customer_version,
		NULLIF(customer_key, '') AS customer_key, NULLIF(click_ref, 0) AS click_ref, NULLIF(click_id, '') AS click_id,
		partner_id, partner_program_id, customer_test, txn, amount_cents, currency, sale_type, is_recurring,
		NULLIF(provider, '') AS provider, NULLIF(provider_payment_id, '') AS provider_payment_id,
		NULLIF(livemode, '')::boolean AS livemode, NULLIF(event_name, '') AS event_name,
		NULLIF(subscription_id, '') AS subscription_id, NULLIF(subscription_interval, '') AS subscription_interval,
		source, sale_date, is_test, NULLIF(commission_cents, -1) AS commission_cents
	FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::bigint[],
		$8::bigint[], $9::boolean[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::boolean[], $15::text[],
		$16::text[], $17::text[], $18::text[], $19::text[], $20::text[], $21::text[], $22::timestamptz[],
		$23::boolean[], $24::bigint[])
	WITH ORDINALITY AS t(program_id, customer_id, customer_version, customer_key, click_ref, click_id, partner_id,
		partner_program_id, customer_test, txn, amount_cents, currency, sale_type, is_recurring, provider,
		provider_payment_id, livemode, event_name, subscription_id, subscription_interval, source, sale_date, is_test,
		commission_cents, ord)
), locked AS (` + attribution.LockUnchangedSQL("input") + `
), created AS (` + attribution.CreateConvertedSQL("input") + `
), buyer AS (
	SELECT ord, id FROM locked
	UNION ALL
	SELECT i.ord, c.id FROM input i JOIN created c ON c.program_id = i.program_id AND c.click_ref = i.click_ref
		AND c.customer_key IS NOT DISTINCT FROM i.customer_key
	WHERE i.customer_id IS NULL
), sale AS (
	INSERT INTO sales (program_id, customer_id, partner_id, click_ref, click_id, processor_event_id, amount_cents,
		currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
		subscription_interval, source, sale_date, is_test)
	SELECT i.program_id, b.id, i.partner_id, i.click_ref, i.click_id, i.txn, i.amount_cents, i.currency, i.sale_type,
		i.is_recurring, i.provider, i.provider_payment_id, i.livemode, i.event_name, i.subscription_id,
		i.subscription_interval, i.source, i.sale_date, i.is_test
	FROM input i JOIN buyer b ON b.ord = i.ord
	ON CONFLICT (program_id, processor_event_id) DO NOTHING
	RETURNING id, program_id, processor_event_id, customer_id, click_ref, sale_date
), commission AS (
	INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test)
	SELECT s.id, i.program_id, i.partner_id, i.partner_program_id, i.commission_cents, i.currency, i.is_test
	FROM sale s JOIN input i ON i.program_id = s.program_id AND i.txn = s.processor_event_id
	WHERE i.commission_cents IS NOT NULL
	RETURNING id, sale_id, amount_cents, reversed_amount_cents, currency, status
), converted AS (` + attribution.ConvertSQL("sale") + `
), leads_converted AS (` + leads.ConvertSQL("sale") + `
), click_converted AS (` + clicks.ConvertSQL("sale") + `
)
SELECT i.ord, s.id AS sale_id, c.id AS commission_id, c.amount_cents, c.reversed_amount_cents, c.currency, c.status
FROM input i JOIN sale s ON s.program_id = i.program_id AND s.processor_event_id = i.txn
LEFT JOIN commission c ON c.sale_id = s.id`

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
