package main

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The webhook worker yields while the replica handled four requests per core or more on average over the
// last window: requestsInFlight counts them from their start to their answer, by the injected clock. A
// moment with fewer in flight does not end the yielding, a window of fewer does.
func TestRequestsInFlightMakeTheReplicaBusy(t *testing.T) {
	t.Parallel()
	limit := 4 * runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	later := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	entered := make(chan struct{})
	r := &requestsInFlight{now: clock}
	var releases []chan struct{}
	var wg sync.WaitGroup
	hold := func(n int) { // n requests that stay in flight until released
		for range n {
			release := make(chan struct{})
			releases = append(releases, release)
			r.next = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { entered <- struct{}{}; <-release })
			wg.Go(func() { r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) })
			<-entered
		}
	}
	releaseAll := func() {
		for _, c := range releases {
			close(c)
		}
		releases = nil
		wg.Wait()
	}

	r.busy() // the first window starts
	hold(limit - 1)
	later(busyWindow)
	if r.busy() {
		t.Fatalf("busy after a window of %d requests in flight", limit-1)
	}
	hold(1)
	if r.busy() {
		t.Fatal("busy at once: the mean is of the last complete window")
	}
	later(busyWindow)
	if !r.busy() {
		t.Fatalf("not busy after a window of %d in flight", limit)
	}
	releaseAll()
	if !r.busy() || r.n != 0 {
		t.Fatalf("a moment with none in flight: busy %v, %d in flight; want busy until the window ends", r.busy(), r.n)
	}
	later(busyWindow)
	if r.busy() {
		t.Fatal("still busy after a window with none in flight")
	}
}
