package webhooks

import (
	"testing"
	"time"
)

// While the replica is busy, Run claims at most YieldClaim deliveries every YieldPause (by the worker's
// clock) and says how long until the next claim; once it is not, every free slot at once again.
func TestClaimableYieldsWhileBusy(t *testing.T) {
	busy := true
	w := &Worker{Busy: func() bool { return busy }, YieldClaim: 3, YieldPause: time.Second}
	w.init()
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	steps := []struct {
		after    time.Duration // since the start
		free     int
		busy     bool
		wantN    int
		wantWait time.Duration
	}{
		{0, 32, true, 3, time.Second},                                  // a claim of YieldClaim, then a pause
		{100 * time.Millisecond, 29, true, 0, 900 * time.Millisecond},  // within the pause: nothing
		{999 * time.Millisecond, 29, true, 0, time.Millisecond},        // still within it
		{time.Second, 29, true, 3, time.Second},                        // the pause is over: YieldClaim again
		{2 * time.Second, 2, true, 2, time.Second},                     // never more than the free slots
		{2100 * time.Millisecond, 30, false, 30, 0},                    // not busy: every free slot, no pause
		{2200 * time.Millisecond, 0, false, 0, 0},                      // no free slot
		{2300 * time.Millisecond, 30, true, 3, time.Second},            // busy again: the pause starts anew
		{2400 * time.Millisecond, 30, true, 0, 900 * time.Millisecond}, //
	}
	for i, s := range steps {
		busy = s.busy
		n, wait := w.claimable(s.free, at.Add(s.after))
		if n != s.wantN || wait != s.wantWait {
			t.Errorf("step %d (%v, %d free, busy %v): claimable = %d, %v; want %d, %v", i, s.after, s.free, s.busy, n, wait, s.wantN, s.wantWait)
		}
	}
	// Without a Busy function a worker never yields.
	idle := &Worker{}
	idle.init()
	if n, wait := idle.claimable(32, at); n != 32 || wait != 0 {
		t.Errorf("no Busy: claimable = %d, %v", n, wait)
	}
}
