package sales

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/platform/batch"
)

// Sale batching, measured in docs/performance.md: one writer, batches of up to MaxBatch sales. One writer
// gave larger batches (so less database work per sale) and a steadier p99 than two, or than a pipeline
// that reads the next batch while the last is written.
const MaxBatch = 64

// Recorder records the sale route's sales in batches: sales that arrive together are read by one
// statement and written by another, with one commit, instead of each paying its own round trips and
// commit. Every sale is answered only after the statement holding it has committed, and its answer is
// the one it would have had alone (see record).
type Recorder struct {
	run *batch.Runner[*job]
}

// NewRecorder starts the writer, taking batches of up to maxBatch sales; now is the clock commissions
// are read by (their effective status). observe, when not nil, learns
// each batch's size and duration (for metrics).
func NewRecorder(db *sqlx.DB, log *slog.Logger, now func() time.Time, maxBatch int, observe func(size int, took time.Duration)) *Recorder {
	return &Recorder{run: batch.NewRunner(maxBatch, 10*time.Second, func(ctx context.Context, jobs []*job) {
		record(ctx, db, log, now, jobs)
	}, observe)}
}

// Record checks and records a sale and its commission in the next batch.
func (r *Recorder) Record(ctx context.Context, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	if err := r.run.Do(ctx, j); err != nil {
		return Result{}, err
	}
	return j.res, j.err
}

// Close stops the writer once every queued sale is recorded. Call it after the HTTP server stopped.
func (r *Recorder) Close() { r.run.Close() }

// RefundRecorder records the refund route's refunds in batches, as Recorder does sales: one read, one
// write and one commit for the refunds that arrive together, each answered once it is committed.
type RefundRecorder struct {
	run *batch.Runner[*refundJob]
}

// NewRefundRecorder starts the writer, taking batches of up to maxBatch refunds. observe, when not nil,
// learns each batch's size and duration (for metrics).
func NewRefundRecorder(db *sqlx.DB, log *slog.Logger, now func() time.Time, maxBatch int, observe func(size int, took time.Duration)) *RefundRecorder {
	return &RefundRecorder{run: batch.NewRunner(maxBatch, 10*time.Second, func(ctx context.Context, jobs []*refundJob) {
		recordRefunds(ctx, db, log, now, jobs)
	}, observe)}
}

// Refund records a refund in the next batch.
func (r *RefundRecorder) Refund(ctx context.Context, in RefundInput) (RefundResult, error) {
	j := &refundJob{in: in}
	if err := r.run.Do(ctx, j); err != nil {
		return RefundResult{}, err
	}
	return j.res, j.err
}

// Close stops the writer once every queued refund is recorded. Call it after the HTTP server stopped.
func (r *RefundRecorder) Close() { r.run.Close() }
