package batch

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Items queued while the writer is busy reach it together, in order; Close returns once every queued
// item has been handed over.
func TestBatchesFormWhileTheWriterIsBusy(t *testing.T) {
	t.Parallel()
	busy, release := make(chan struct{}), make(chan struct{})
	var got [][]int
	q := Start(1, 2, func(next func() ([]int, bool)) {
		for first := true; ; first = false {
			b, ok := next()
			if !ok {
				return
			}
			got = append(got, b)
			if first {
				close(busy)
				<-release
			}
		}
	})
	ctx := context.Background()
	if err := q.Put(ctx, 1); err != nil {
		t.Fatal(err)
	}
	<-busy // the writer holds the first batch: the next items queue up (writers × max of them)
	for i := 2; i <= 3; i++ {
		if err := q.Put(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	q.Close()
	want := [][]int{{1}, {2, 3}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("batches = %v, want %v", got, want)
	}
}

// Put gives up when the queue is full and its context ends.
func TestPutGivesUpWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	q := Start(1, 1, func(next func() ([]int, bool)) {
		<-release
		for {
			if _, ok := next(); !ok {
				return
			}
		}
	})
	// The queue holds writers × max = 1 item, and the writer takes nothing yet.
	if err := q.Put(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := q.Put(ended, 2); err == nil {
		t.Error("Put into a full queue with an ended context succeeded")
	}
	close(release)
	q.Close()
}

// A Runner answers a job once its batch is processed, even when the job's context ended after it was
// queued, and reports each batch's size.
func TestRunnerAnswersAfterProcessing(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var sizes []int
	r := NewRunner(8, time.Minute, func(_ context.Context, jobs []*int) {
		<-release
		for _, j := range jobs {
			*j *= 10
		}
	}, func(size int, _ time.Duration) { sizes = append(sizes, size) })
	ctx, cancel := context.WithCancel(context.Background())
	j := 4
	done := make(chan error)
	go func() { done <- r.Do(ctx, &j) }()
	cancel() // the job may already be queued: Do must still wait for its batch
	close(release)
	err := <-done
	r.Close()
	switch {
	case err == nil && j != 40:
		t.Errorf("Do returned before the batch was processed: job = %d", j)
	case err != nil && j != 4:
		t.Errorf("Do gave up (%v) but the job was processed", err)
	}
	if err == nil && !slices.Equal(sizes, []int{1}) {
		t.Errorf("batch sizes = %v, want [1]", sizes)
	}
}
