package main

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
)

// The webhook worker yields while the replica handles four requests per core or more: requestsInFlight
// counts them from their start to their answer.
func TestRequestsInFlightMakeTheReplicaBusy(t *testing.T) {
	t.Parallel()
	limit := 4 * runtime.GOMAXPROCS(0)
	entered, release := make(chan struct{}), make(chan struct{})
	r := &requestsInFlight{next: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		entered <- struct{}{}
		<-release
	})}
	var wg sync.WaitGroup
	for i := range limit {
		if r.busy() {
			t.Fatalf("busy with %d requests in flight", i)
		}
		wg.Go(func() { r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) })
		<-entered
	}
	if !r.busy() {
		t.Fatalf("not busy with %d requests in flight", limit)
	}
	close(release)
	wg.Wait()
	if r.busy() || r.n.Load() != 0 {
		t.Fatalf("after the answers: busy %v, %d in flight", r.busy(), r.n.Load())
	}
}
