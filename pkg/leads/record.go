package leads

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/attribution"
	leadssql "github.com/reftrack/reftrack/pkg/leads/sql"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/platform/rounds"
)

// How a lead is recorded: the sale's recipe (pkg/sales), two statements and one commit for any number of
// leads, both calling PL/pgSQL functions (pkg/leads/sql) whose plans PostgreSQL keeps per connection.
//
//  1. leads_state reads, for every lead of the batch, the click, the program and the customer with
//     its row version, locking nothing.
//  2. decide applies the rules in Go.
//  3. leads_write writes every planned lead in one statement (its own transaction): a settled lead
//     only if its customer's row is still the version the decision rested on (locked meanwhile), or, for
//     a customer made now, if its key is still free. A lead that loses that race is read and decided
//     again, so the answer is always the one a lead alone would have had.
//
// Both calls take named inputs (pgcall), a struct per lead whose nil fields are NULL: a value not given.
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

// stateCall reads the leads' state through leads_state (pkg/leads/sql/leads_state.sql), one row
// per lead in the leads' order.
var stateCall = pgcall.New[stateInput, pgcall.None](leadssql.State)

// stateInput is one lead as leads_state takes it; nil is a value not given.
type stateInput struct {
	ClickID      *string `pg:"p_click_id"`
	ProgramID    *int64  `pg:"p_program"`
	CustomerKey  *string `pg:"p_customer_key"`
	ClickDecides bool    `pg:"p_click_decides"` // browser mode: the click's program, when the click exists
}

func stateInputOf(in Input) stateInput {
	return stateInput{ClickID: orNull(in.ClickID), ProgramID: orNull(in.ProgramID), CustomerKey: orNull(in.CustomerKey),
		ClickDecides: !in.ServerMode}
}

func read(ctx context.Context, db sqlx.QueryerContext, jobs []*job) ([]state, error) {
	in := make([]stateInput, len(jobs))
	for i, j := range jobs {
		in[i] = stateInputOf(j.in)
	}
	var states []state
	if err := stateCall.Select(ctx, db, &states, in, pgcall.None{}); err != nil {
		return nil, fmt.Errorf("read leads: %w", err)
	}
	if len(states) != len(jobs) {
		return nil, fmt.Errorf("read leads: %d rows for %d leads", len(states), len(jobs))
	}
	return states, nil
}

// writeCall writes the planned leads through leads_write (pkg/leads/sql/leads_write.sql), which
// settles through leads_settle and attribution's and clicks' functions; one row per lead, in order.
var writeCall = pgcall.New[writeInput, pgcall.None](leadssql.Write)

// writeInput is one planned lead as leads_write takes it; nil is a value not given. A settled lead
// without Customer makes its customer now from the click (ClickRef, PartnerID, CustomerKey).
type writeInput struct {
	Kind        string  `pg:"p_kind"` // kindProvisional or kindSettle
	Customer    *int64  `pg:"p_customer"`
	Version     *string `pg:"p_version"` // the customer's row version the plan rested on
	ProgramID   int64   `pg:"p_program"`
	ClickRef    *int64  `pg:"p_click_ref"`
	ClickID     *string `pg:"p_click_id"`
	PartnerID   *int64  `pg:"p_partner"`
	CustomerKey *string `pg:"p_customer_key"`
	Email       *string `pg:"p_email"` // nil keeps the customer's email
	Source      string  `pg:"p_source"`
	Test        bool    `pg:"p_test"`
	// The click's provisional lead the settled one becomes (nil: a new lead); what the lead counts for
	// (pkg/counting): its class, and what writing it adds to the counts, under CountPartner.
	Provisional      *int64  `pg:"p_provisional"`
	CountsAs         *string `pg:"p_counts_as"`
	CountPartner     int64   `pg:"p_count_partner"`
	CountLeads       int64   `pg:"p_count_leads"`
	CountProvisional int64   `pg:"p_count_provisional"`
}

func writeInputOf(p plan) writeInput {
	return writeInput{Kind: p.kind, Customer: orNull(p.customer), Version: orNull(p.version), ProgramID: p.programID,
		ClickRef: orNull(p.clickRef), ClickID: orNull(p.clickID), PartnerID: orNull(p.partnerID), CustomerKey: orNull(p.key),
		Email: orNull(p.email), Source: p.source, Test: p.test, Provisional: orNull(p.provisional), CountsAs: orNull(p.countsAs),
		CountPartner: p.countPartner, CountLeads: p.counts.Leads, CountProvisional: p.counts.ProvisionalLeads}
}

// orNull is v, or nil (NULL) when v is its type's zero value: the plan's and the input's "none".
func orNull[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// written is what leads_write answers for one lead.
type written struct {
	Ord     int64  `db:"ord"`
	Written bool   `db:"written"`
	LeadID  *int64 `db:"lead_id"`
}

// write writes the plans and returns, in order, what it did with each.
func write(ctx context.Context, db sqlx.QueryerContext, plans []plan) ([]written, error) {
	in := make([]writeInput, len(plans))
	for i, p := range plans {
		in[i] = writeInputOf(p)
	}
	var out []written
	if err := writeCall.Select(ctx, db, &out, in, pgcall.None{}); err != nil {
		return nil, fmt.Errorf("write leads: %w", err)
	}
	if len(out) != len(plans) {
		return nil, fmt.Errorf("write leads: %d rows for %d leads", len(out), len(plans))
	}
	return out, nil
}
