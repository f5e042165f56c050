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
	db      *sqlx.DB
	log     *slog.Logger
	queue   *batch.Queue[*job]
	observe func(size int, took time.Duration)
}

// NewRecorder starts the writer, taking batches of up to maxBatch sales. observe, when not nil, learns
// each batch's size and duration (for metrics).
func NewRecorder(db *sqlx.DB, log *slog.Logger, maxBatch int, observe func(size int, took time.Duration)) *Recorder {
	r := &Recorder{db: db, log: log, observe: observe}
	r.queue = batch.Start(1, maxBatch, r.run)
	return r
}

// Record checks and records a sale and its commission in the next batch.
func (r *Recorder) Record(ctx context.Context, in Input) (Result, error) {
	j, err := newJob(in)
	if err != nil {
		return Result{}, err
	}
	j.done = make(chan struct{})
	if err := r.queue.Put(ctx, j); err != nil {
		return Result{}, err
	}
	// Once queued the sale will be decided; wait for it even if the client goes away, so that a retry
	// finds what was stored.
	<-j.done
	return j.res, j.err
}

// Close stops the writers once every queued sale is recorded. Call it after the HTTP server stopped.
func (r *Recorder) Close() { r.queue.Close() }

func (r *Recorder) run(next func() ([]*job, bool)) {
	for {
		jobs, ok := next()
		if !ok {
			return
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		record(ctx, r.db, r.log, jobs)
		cancel()
		if r.observe != nil {
			r.observe(len(jobs), time.Since(start))
		}
		for _, j := range jobs {
			close(j.done)
		}
	}
}

// RefundRecorder records the refund route's refunds in batches, as Recorder does sales: one read, one
// write and one commit for the refunds that arrive together, each answered once it is committed.
type RefundRecorder struct {
	db      *sqlx.DB
	queue   *batch.Queue[*refundJob]
	observe func(size int, took time.Duration)
}

// NewRefundRecorder starts the writer, taking batches of up to maxBatch refunds. observe, when not nil,
// learns each batch's size and duration (for metrics).
func NewRefundRecorder(db *sqlx.DB, maxBatch int, observe func(size int, took time.Duration)) *RefundRecorder {
	r := &RefundRecorder{db: db, observe: observe}
	r.queue = batch.Start(1, maxBatch, r.run)
	return r
}

// Refund records a refund in the next batch.
func (r *RefundRecorder) Refund(ctx context.Context, in RefundInput) (RefundResult, error) {
	j := &refundJob{in: in, done: make(chan struct{})}
	if err := r.queue.Put(ctx, j); err != nil {
		return RefundResult{}, err
	}
	<-j.done // once queued it will be decided: wait even if the client goes away, so a retry finds it
	return j.res, j.err
}

// Close stops the writer once every queued refund is recorded. Call it after the HTTP server stopped.
func (r *RefundRecorder) Close() { r.queue.Close() }

func (r *RefundRecorder) run(next func() ([]*refundJob, bool)) {
	for {
		jobs, ok := next()
		if !ok {
			return
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		recordRefunds(ctx, r.db, jobs)
		cancel()
		if r.observe != nil {
			r.observe(len(jobs), time.Since(start))
		}
		for _, j := range jobs {
			close(j.done)
		}
	}
}
