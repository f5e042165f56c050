package main

import (
	"context"
	"time"
)

// every runs fn every interval (and at once too when now is set), in the background, until the returned
// stop is called (stop waits for a run in progress). fn's context outlives ctx's cancellation: the
// server's own ends at SIGTERM, before its work is done.
func every(ctx context.Context, interval time.Duration, now bool, fn func(context.Context)) (stop func()) {
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if now {
			fn(loopCtx)
		}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
				fn(loopCtx)
			}
		}
	}()
	return func() { cancel(); <-done }
}
