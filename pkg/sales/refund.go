package sales

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/platform/rounds"
	salessql "github.com/reftrack/reftrack/pkg/sales/sql"
)

// Refund errors.
var ErrSaleNotFound = errors.New("sale not found for transaction_id")

// RefundTooLargeError refuses a partial refund above what is left unrefunded.
type RefundTooLargeError struct{ Remaining int64 }

func (e *RefundTooLargeError) Error() string {
	return fmt.Sprintf("refund larger than the %d left unrefunded", e.Remaining)
}

// Refund reasons.
const (
	ReasonRefund     = "refund"
	ReasonChargeback = "chargeback"
)

// Refund statuses answered.
const (
	RefundReversed     = "reversed"      // fully refunded, commission reversed
	RefundPartial      = "refunded"      // partially refunded
	RefundNoCommission = "no_commission" // the sale paid no commission
	RefundSkipped      = "skipped"       // already fully refunded: nothing changed
)

// RefundInput is one refund.
type RefundInput struct {
	ProgramID     int64
	TransactionID string
	Reason        string
	RefundReason  string
	// AmountCents refunds part of the sale; nil refunds all that is left.
	AmountCents *int64
	Source      string
	// ProcessorRefundID makes a processor's refund idempotent ("" for API calls): a refund already
	// recorded under it changes nothing (status skipped).
	ProcessorRefundID string
	// RefundedTotalCents is a processor's cumulative refunded amount: the refund is what it adds to what
	// is recorded (skipped when it adds nothing), so a repeated or reordered event cannot refund twice.
	// It overrides AmountCents.
	RefundedTotalCents *int64
}

// RefundResult is the state after a refund.
type RefundResult struct {
	Status              string
	SaleID              int64
	TransactionID       string
	Reason              string
	RefundedAmountCents int64
	Commission          *Commission
}

// Refund refunds (part of) a sale of the program and reverses its commission in proportion (see
// decideRefund): a batch of one, for payment webhooks.
func Refund(ctx context.Context, db *sqlx.DB, log *slog.Logger, now func() time.Time, in RefundInput) (RefundResult, error) {
	j := &refundJob{in: in}
	recordRefunds(ctx, db, log, now, []*refundJob{j})
	return j.res, j.err
}

// How a refund is recorded: the sale's recipe. refunds_state reads every refund's sale, commission
// and earlier refunds (pkg/sales/sql) locking nothing; decideRefund applies the rules; sales_refund
// writes every planned refund in one statement, each only while its sale is still the version the plan
// rested on. A refund whose sale changed meanwhile (another refund) is decided again. A batch never
// holds two refunds of one sale. Both calls take named inputs (pgcall), a struct per refund whose nil
// fields are NULL: a value not given.

// refundJob is one refund on its way through recordRefunds.
type refundJob struct {
	in  RefundInput
	res RefundResult
	err error
}

// refundState is what the rules need of the database for one refund (refunds_state).
type refundState struct {
	Ord                int64      `db:"ord"`
	SaleID             *int64     `db:"sale_id"`
	SaleVersion        *string    `db:"sale_version"`
	SaleDate           *time.Time `db:"sale_date"`
	PartnerID          *int64     `db:"partner_id"`
	Currency           *string    `db:"currency"`
	SaleTest           *bool      `db:"sale_test"`
	AmountCents        *int64     `db:"amount_cents"`
	RefundedCents      *int64     `db:"refunded_amount_cents"`
	CommissionID       *int64     `db:"commission_id"`
	CommissionCents    *int64     `db:"commission_amount_cents"`
	CommissionReversed *int64     `db:"commission_reversed_cents"`
	CommissionCurrency *string    `db:"commission_currency"`
	CommissionStatus   *string    `db:"commission_status"` // effective (ledger_status)
	CommissionVersion  *string    `db:"commission_version"`
	CommissionClawback *int64     `db:"commission_clawback_cents"`
	RefundSeen         bool       `db:"refund_seen"`
	LatestReason       *string    `db:"latest_reason"`
}

// refundPlan is a refund decided: the answer, and what to write first unless skip.
type refundPlan struct {
	res           RefundResult
	skip          bool // nothing changes: res is the answer as it stands
	version       string
	amount        int64 // refunded now
	total         int64 // the sale's refunded total after it
	paymentStatus string
	// What the refund does to the commission (pkg/commission.Refund), and the commission's row version it
	// rests on.
	effect            commission.RefundEffect
	commissionVersion string
	// What it takes back of the counts (pkg/counting), kept under the sale's key.
	counts counting.Measures
	key    counting.Key
}

// decideRefund applies the refund rules: a processor refund already recorded, or a cumulative total that
// adds nothing, or a sale refunded in full changes nothing; a partial refund above what is left is
// refused; what it does to the commission is pkg/commission's rule (commission.Refund: reversed before a payout,
// clawed back after).
func decideRefund(in RefundInput, st refundState) (refundPlan, error) {
	if st.SaleID == nil {
		return refundPlan{}, ErrSaleNotFound
	}
	p := refundPlan{version: *st.SaleVersion,
		res: RefundResult{SaleID: *st.SaleID, TransactionID: in.TransactionID, Reason: in.Reason, RefundedAmountCents: *st.RefundedCents}}
	if st.CommissionID != nil {
		p.res.Commission = &Commission{ID: *st.CommissionID, AmountCents: *st.CommissionCents,
			ReversedAmountCents: *st.CommissionReversed, Currency: *st.CommissionCurrency, Status: *st.CommissionStatus,
			ClawbackCents: *st.CommissionClawback}
		p.commissionVersion = *st.CommissionVersion
	}
	skip := func() (refundPlan, error) {
		// The sale's state as stored, its reason included (the reason of its latest refund, which may have
		// come from the processor as a refund or a dispute), never the reason the request asked for.
		p.skip, p.res.Status = true, RefundSkipped
		if st.LatestReason != nil {
			p.res.Reason = *st.LatestReason
		}
		return p, nil
	}
	amountCents, refunded := *st.AmountCents, *st.RefundedCents
	if st.RefundSeen {
		return skip()
	}
	if in.RefundedTotalCents != nil {
		add := min(*in.RefundedTotalCents, amountCents) - refunded
		if add <= 0 {
			return skip()
		}
		in.AmountCents = &add
	}
	remaining := amountCents - refunded
	if remaining == 0 {
		return skip()
	}
	p.amount = remaining
	if in.AmountCents != nil {
		if *in.AmountCents > remaining {
			return refundPlan{}, &RefundTooLargeError{Remaining: remaining}
		}
		p.amount = *in.AmountCents
	}
	p.total = refunded + p.amount
	full := p.total == amountCents
	if c := p.res.Commission; c != nil {
		var err error
		p.effect, err = commission.Refund(commission.Held{ID: c.ID, Version: p.commissionVersion, AmountCents: c.AmountCents,
			ReversedCents: c.ReversedAmountCents, ClawbackCents: c.ClawbackCents, Currency: c.Currency, Status: c.Status},
			p.total, amountCents)
		if err != nil {
			return refundPlan{}, err
		}
	}
	p.paymentStatus = "partially_refunded"
	if full {
		p.paymentStatus = "refunded"
		if in.Reason == ReasonChargeback {
			p.paymentStatus = "charged_back"
		}
	}
	p.res.RefundedAmountCents = p.total
	// What the refund takes back from the counts, on the sale's own key.
	p.key = counting.Key{ProgramID: in.ProgramID, Hour: counting.HourOf(deref(st.SaleDate)), PartnerID: deref(st.PartnerID),
		Currency: deref(st.Currency)}
	p.counts = counting.Refund(deref(st.SaleTest), p.amount, p.effect.ReversedNowCents+p.effect.ClawbackCents)
	switch {
	case p.res.Commission == nil:
		p.res.Status = RefundNoCommission
	case full:
		p.res.Status = RefundReversed
	default:
		p.res.Status = RefundPartial
	}
	return p, nil
}

// recordRefunds records the refunds of jobs, setting each job's res or err. A round writes one refund of
// each sale (the others wait for the next round); maxRounds more rounds are for refunds whose sale changed
// meanwhile.
func recordRefunds(ctx context.Context, db *sqlx.DB, log *slog.Logger, now func() time.Time, jobs []*refundJob) {
	for _, j := range jobs {
		if j.in.Reason == "" {
			j.in.Reason = ReasonRefund
		}
	}
	rounds.Run(ctx, log, "refunds", jobs, maxRounds, func(ctx context.Context, jobs []*refundJob) ([]*refundJob, error) {
		return refundRound(ctx, db, now(), jobs)
	}, func(j *refundJob, err error) { j.res, j.err = RefundResult{}, err })
}

// refundRound reads, decides and writes the jobs once; it returns those to decide again.
func refundRound(ctx context.Context, db *sqlx.DB, now time.Time, jobs []*refundJob) ([]*refundJob, error) {
	in := make([]refundStateInput, len(jobs))
	for i, j := range jobs {
		in[i] = refundStateInput{ProgramID: j.in.ProgramID, TransactionID: j.in.TransactionID,
			ProcessorRefundID: refundNull(j.in.ProcessorRefundID)}
	}
	var states []refundState
	if err := refundStateCall.Select(ctx, db, &states, in, refundNow{Now: now}); err != nil {
		return nil, fmt.Errorf("read refunds: %w", err)
	}
	if len(states) != len(jobs) {
		return nil, fmt.Errorf("read refunds: %d rows for %d refunds", len(states), len(jobs))
	}
	var (
		again  []*refundJob
		writes []*refundJob
		plans  []refundPlan
		taken  = map[int64]bool{}
	)
	for i, j := range jobs {
		j.res, j.err = RefundResult{}, nil // an earlier attempt's answer does not stand
		p, err := decideRefund(j.in, states[i])
		switch {
		case err != nil:
			j.err = err
		case p.skip:
			j.res = p.res
		case taken[p.res.SaleID]:
			again = append(again, j) // one refund per sale in a statement: the second rests on the first
		default:
			taken[p.res.SaleID] = true
			writes, plans = append(writes, j), append(plans, p)
		}
	}
	if len(writes) == 0 {
		return again, nil
	}
	out, err := writeRefunds(ctx, db, now, writes, plans)
	if err != nil {
		return nil, err
	}
	for i, j := range writes {
		w := out[i]
		if !w.Written {
			again = append(again, j) // its sale changed meanwhile
			continue
		}
		j.res = plans[i].res
		if w.CommissionID != nil {
			j.res.Commission = &Commission{ID: *w.CommissionID, AmountCents: *w.AmountCents,
				ReversedAmountCents: *w.ReversedAmountCents, Currency: *w.Currency, Status: *w.Status,
				ClawbackCents: *w.ClawbackCents}
		}
	}
	return again, nil
}

// refundStateCall reads the refunds' state through refunds_state (pkg/sales/sql/refunds_state.sql),
// one row per refund in the refunds' order.
var refundStateCall = pgcall.New[refundStateInput, refundNow](salessql.RefundsState)

// refundNow is the time the refund's commission is read and written at (its effective status).
type refundNow struct {
	Now time.Time `pg:"p_now"`
}

// refundStateInput is one refund as refunds_state takes it; nil is a value not given.
type refundStateInput struct {
	ProgramID         int64   `pg:"p_program"`
	TransactionID     string  `pg:"p_txn"`
	ProcessorRefundID *string `pg:"p_processor_refund_id"`
}

// refundWriteCall writes the planned refunds through sales_refund (pkg/sales/sql/sales_refund.sql),
// one row per refund in order.
var refundWriteCall = pgcall.New[refundWriteInput, refundNow](salessql.Refund)

// refundWriteInput is one planned refund as sales_refund takes it; nil is a value not given. Without
// a commission, CommissionID, CommissionVersion, ReversedCents, CommissionStatus and ClawbackCents are nil.
type refundWriteInput struct {
	SaleID            int64   `pg:"p_sale"`
	Version           string  `pg:"p_version"` // the sale's row version the plan rested on
	ProgramID         int64   `pg:"p_program"`
	Reason            string  `pg:"p_reason"`
	RefundReason      *string `pg:"p_refund_reason"`
	AmountCents       int64   `pg:"p_amount"`       // refunded now
	ReversedNowCents  int64   `pg:"p_reversed_now"` // of the commission, by this refund (0 without one)
	CommissionID      *int64  `pg:"p_commission"`
	CommissionVersion *string `pg:"p_commission_version"` // the commission's row version the plan rested on
	ReversedCents     *int64  `pg:"p_reversed"`           // the commission's reversed total after it
	CommissionStatus  *string `pg:"p_commission_status"`
	ClawbackCents     *int64  `pg:"p_clawback"` // a clawback to record (0: none)
	TotalCents        int64   `pg:"p_total"`    // the sale's refunded total after it
	PaymentStatus     string  `pg:"p_payment_status"`
	ProcessorRefundID *string `pg:"p_processor_refund_id"`
	Source            string  `pg:"p_source"`
	// What it takes back of the counts (pkg/counting), and where they are kept (the sale's).
	CountHour       time.Time `pg:"p_count_hour"`
	CountPartner    int64     `pg:"p_count_partner"`
	CountCurrency   string    `pg:"p_count_currency"`
	CountRevenue    int64     `pg:"p_count_revenue"`
	CountCommission int64     `pg:"p_count_commission"`
}

func refundWriteInputOf(in RefundInput, p refundPlan) refundWriteInput {
	w := refundWriteInput{SaleID: p.res.SaleID, Version: p.version, ProgramID: in.ProgramID, Reason: in.Reason,
		RefundReason: refundNull(in.RefundReason), AmountCents: p.amount, ReversedNowCents: p.effect.ReversedNowCents,
		TotalCents: p.total, PaymentStatus: p.paymentStatus, ProcessorRefundID: refundNull(in.ProcessorRefundID),
		Source: in.Source, CountHour: p.key.Hour, CountPartner: p.key.PartnerID, CountCurrency: p.key.Currency,
		CountRevenue: p.counts.RevenueCents, CountCommission: p.counts.CommissionCents}
	if c := p.res.Commission; c != nil {
		e := p.effect
		w.CommissionID, w.CommissionVersion = &c.ID, &p.commissionVersion
		w.ReversedCents, w.CommissionStatus, w.ClawbackCents = &e.ReversedCents, &e.Status, &e.ClawbackCents
	}
	return w
}

// refundNull is s, or nil (NULL) when s is empty: not given.
func refundNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// refundWritten is what sales_refund answers for one refund.
type refundWritten struct {
	Ord                 int64   `db:"ord"`
	Written             bool    `db:"written"`
	CommissionID        *int64  `db:"commission_id"`
	AmountCents         *int64  `db:"commission_amount_cents"`
	ReversedAmountCents *int64  `db:"commission_reversed_cents"`
	Currency            *string `db:"commission_currency"`
	Status              *string `db:"commission_status"`
	ClawbackCents       *int64  `db:"commission_clawback_cents"`
}

func writeRefunds(ctx context.Context, db *sqlx.DB, now time.Time, jobs []*refundJob, plans []refundPlan) ([]refundWritten, error) {
	in := make([]refundWriteInput, len(jobs))
	for i, j := range jobs {
		in[i] = refundWriteInputOf(j.in, plans[i])
	}
	var out []refundWritten
	if err := refundWriteCall.Select(ctx, db, &out, in, refundNow{Now: now}); err != nil {
		return nil, fmt.Errorf("record refunds: %w", err)
	}
	if len(out) != len(jobs) {
		return nil, fmt.Errorf("record refunds: %d rows for %d refunds", len(out), len(jobs))
	}
	return out, nil
}
