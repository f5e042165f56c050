package leads

import (
	"context"
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/platform/batch"
)

// Lead batching, as the sale's (docs/performance.md): one writer, batches of up to MaxBatch leads. Each
// lead written alone in its own transaction made concurrent leads share their program's and partner's
// rows (every foreign-key check locks the parent row) and pay a commit each.
const MaxBatch = 64

// Recorder records the lead route's leads in batches: leads that arrive together are read by one
// statement and written by another, with one commit. Every lead is answered only after the statement
// holding it has committed, and its answer is the one it would have had alone (see record).
type Recorder struct {
	run *batch.Runner[*job]
}

// NewRecorder starts the writer, taking batches of up to maxBatch leads. observe, when not nil, learns
// each batch's size and duration (for metrics).
func NewRecorder(db *sqlx.DB, log *slog.Logger, maxBatch int, observe func(size int, took time.Duration)) *Recorder {
	return &Recorder{run: batch.NewRunner(maxBatch, 10*time.Second, func(ctx context.Context, jobs []*job) {
		record(ctx, db, log, jobs)
	}, observe)}
}

// Record checks and records a lead in the next batch.
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

// Close stops the writer once every queued lead is recorded. Call it after the HTTP server stopped.
func (r *Recorder) Close() { r.run.Close() }
