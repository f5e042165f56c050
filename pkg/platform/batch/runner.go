package batch

import (
	"context"
	"time"
)

// Runner is a Queue with one writer that processes each batch as a whole and then answers every job of
// it: the sale, refund and lead recorders are built on it.
type Runner[J any] struct {
	q *Queue[queued[J]]
}

type queued[J any] struct {
	job  J
	done chan struct{}
}

// NewRunner starts one writer calling process on batches of up to max jobs, each batch with a context
// that ends after timeout (never a request's: once queued a job is decided). observe, when not nil,
// learns each batch's size and duration (for metrics).
func NewRunner[J any](max int, timeout time.Duration, process func(context.Context, []J), observe func(size int, took time.Duration)) *Runner[J] {
	return &Runner[J]{q: Start(1, max, func(next func() ([]queued[J], bool)) {
		for {
			b, ok := next()
			if !ok {
				return
			}
			jobs := make([]J, len(b))
			for i, q := range b {
				jobs[i] = q.job
			}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			process(ctx, jobs)
			cancel()
			if observe != nil {
				observe(len(jobs), time.Since(start))
			}
			for _, q := range b {
				close(q.done)
			}
		}
	})}
}

// Do queues j and returns once the batch holding it is processed, even if ctx ends meanwhile: a client
// that went away and retries must find what was stored. It gives up only if ctx ends before j is queued.
func (r *Runner[J]) Do(ctx context.Context, j J) error {
	q := queued[J]{job: j, done: make(chan struct{})}
	if err := r.q.Put(ctx, q); err != nil {
		return err
	}
	<-q.done
	return nil
}

// Close stops the writer once every queued job is processed. Put no job after Close.
func (r *Runner[J]) Close() { r.q.Close() }
