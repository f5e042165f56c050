package leads

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/platform/rounds"
)

// How a lead is recorded: the sale's recipe (pkg/sales), two statements and one commit for any number of
// leads, both calling PL/pgSQL functions (pkg/leads/sql) whose plans PostgreSQL keeps per connection.
//
//  1. leads_state reads, for every lead of the batch, the click, the program and the customer with its
//     row version, locking nothing.
//  2. decide applies the rules in Go.
//  3. leads_write writes every planned lead in one statement (its own transaction): a settled lead only if
//     its customer's row is still the version the decision rested on (locked meanwhile), or, for a
//     customer made now, if its key is still free. A lead that loses that race is read and decided again,
//     so the answer is always the one a lead alone would have had.
//
// A batch never holds two leads of one customer or one click: the later waits for the next round. Each
// answer is given only after the statement holding it has committed.

// maxRounds bounds how often leads are decided again after losing races. Each loss means the customer
// moved on (a visitor became a lead or converted), after which the lead is refused: one or two rounds are
// all a lead needs in practice.
const maxRounds = 8

// job is one lead on its way through record.
type job struct {
	in  Input
	res Result
	err error
}

// Track records one lead (payment webhooks, synthetic chains): a batch of one.
func Track(ctx context.Context, db *sqlx.DB, log *slog.Logger, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	record(ctx, db, log, []*job{j})
	return j.res, j.err
}

// newJob checks what a lead needs before it reaches the database.
func newJob(in Input) (*job, error) {
	if in.ClickID == "" && in.CustomerKey == "" {
		return nil, ErrIdentifierRequired
	}
	if err := attribution.CheckKey(in.CustomerKey); err != nil {
		return nil, err
	}
	return &job{in: in}, nil
}

// record records the leads of jobs, setting each job's res or err.
func record(ctx context.Context, db *sqlx.DB, log *slog.Logger, jobs []*job) {
	rounds.Run(ctx, log, "leads", jobs, maxRounds, func(ctx context.Context, jobs []*job) ([]*job, error) {
		return recordRound(ctx, db, jobs)
	}, func(j *job, err error) { j.res, j.err = Result{}, err })
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
		j.res, j.err = Result{}, nil // an earlier attempt's answer does not stand
		p, err := decide(j.in, states[i])
		switch {
		case err != nil:
			j.err = err
			continue
		case p.kind == kindNone:
			j.res = p.res
			continue
		}
		// One lead per customer and per click in a statement: the rules of the second depend on the first.
		keys := p.keys()
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
	written, err := write(ctx, db, plans)
	if err != nil {
		return nil, err
	}
	for i, j := range writes {
		w := written[i]
		if !w.Written {
			again = append(again, j) // its customer changed, or its key was bound, meanwhile
			continue
		}
		j.res = plans[i].res
		if w.LeadID != nil {
			j.res.LeadID = w.LeadID
		}
	}
	return again, nil
}

// keys name what a plan writes, for keeping two leads of one customer or one click apart.
func (p plan) keys() [2]string {
	program := strconv.FormatInt(p.programID, 10)
	click := "click " + program + " " + strconv.FormatInt(p.clickRef, 10)
	switch {
	case p.kind == kindSettle && p.customer != 0:
		return [2]string{"customer " + strconv.FormatInt(p.customer, 10), click}
	case p.kind == kindSettle && p.key != "":
		return [2]string{"key " + program + " " + p.key, click}
	default:
		return [2]string{click, click}
	}
}

func read(ctx context.Context, db sqlx.QueryerContext, jobs []*job) ([]state, error) {
	n := len(jobs)
	clickIDs, programs, keys, clickDecides := make([]string, n), make([]int64, n), make([]string, n), make([]bool, n)
	for i, j := range jobs {
		clickIDs[i], programs[i], keys[i], clickDecides[i] = j.in.ClickID, j.in.ProgramID, j.in.CustomerKey, !j.in.ServerMode
	}
	var states []state
	if err := sqlx.SelectContext(ctx, db, &states, `SELECT * FROM leads_state($1::text[], $2::bigint[], $3::text[], $4::boolean[])`,
		pq.Array(clickIDs), pq.Array(programs), pq.Array(keys), pq.Array(clickDecides)); err != nil {
		return nil, fmt.Errorf("read leads: %w", err)
	}
	if len(states) != n {
		return nil, fmt.Errorf("read leads: %d rows for %d leads", len(states), n)
	}
	return states, nil
}

// written is what leads_write answers for one lead.
type written struct {
	Ord     int64  `db:"ord"`
	Written bool   `db:"written"`
	LeadID  *int64 `db:"lead_id"`
}

// write writes the plans (leads_write, which settles through attribution's and clicks' functions) and
// returns, in order, what it did with each.
func write(ctx context.Context, db sqlx.QueryerContext, plans []plan) ([]written, error) {
	n := len(plans)
	var (
		kinds, versions, clickIDs, keys, emails, sources = make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n)
		customers, programs, clickRefs, partners = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		tests                                    = make([]bool, n)
	)
	for i, p := range plans {
		kinds[i], versions[i], clickIDs[i], keys[i] = p.kind, p.version, p.clickID, p.key
		emails[i], sources[i] = p.email, p.source
		customers[i], programs[i], clickRefs[i], partners[i], tests[i] = p.customer, p.programID, p.clickRef, p.partnerID, p.test
	}
	var out []written
	err := sqlx.SelectContext(ctx, db, &out, `SELECT * FROM leads_write($1::text[], $2::bigint[], $3::text[], $4::bigint[],
		$5::bigint[], $6::text[], $7::bigint[], $8::text[], $9::text[], $10::text[], $11::boolean[])`,
		pq.Array(kinds), pq.Array(customers), pq.Array(versions), pq.Array(programs), pq.Array(clickRefs),
		pq.Array(clickIDs), pq.Array(partners), pq.Array(keys), pq.Array(emails), pq.Array(sources), pq.Array(tests))
	if err != nil {
		return nil, fmt.Errorf("write leads: %w", err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("write leads: %d rows for %d leads", len(out), n)
	}
	return out, nil
}
