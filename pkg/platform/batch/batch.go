// Package batch gathers concurrent requests into batches for a few writer goroutines. A writer takes
// whatever is queued when it becomes free, up to a maximum: a lone request waits for nobody, and under
// load batches grow by themselves, so one statement and one commit serve many requests. The click and
// sale recorders are built on it.
package batch

import (
	"context"
	"sync"
)

// Queue feeds queued items to its writers in batches.
type Queue[J any] struct {
	ch   chan J
	max  int
	wg   sync.WaitGroup
	once sync.Once
}

// Start runs writers goroutines, each calling write once with its own next: next blocks until at least
// one item is queued and returns 1 to max of them, or false once the queue is closed and drained. A
// writer keeps what it needs between batches (a connection, say) in write's own variables.
func Start[J any](writers, max int, write func(next func() ([]J, bool))) *Queue[J] {
	q := &Queue[J]{ch: make(chan J, writers*max), max: max}
	for range writers {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			write(q.next)
		}()
	}
	return q
}

func (q *Queue[J]) next() ([]J, bool) {
	first, ok := <-q.ch
	if !ok {
		return nil, false
	}
	b := []J{first}
	for len(b) < q.max {
		select {
		case j, ok := <-q.ch:
			if !ok {
				return b, true
			}
			b = append(b, j)
		default:
			return b, true
		}
	}
	return b, true
}

// Put queues j, unless ctx ends first.
func (q *Queue[J]) Put(ctx context.Context, j J) error {
	select {
	case q.ch <- j:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the writers once everything queued has been handed to them and they have returned. Put
// must not be called after Close.
func (q *Queue[J]) Close() {
	q.once.Do(func() {
		close(q.ch)
		q.wg.Wait()
	})
}
