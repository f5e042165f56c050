package batch

import (
	"context"
	"slices"
	"testing"
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
