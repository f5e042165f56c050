package browsertest

import (
	"testing"
	"time"
)

// deadlined is a test with the deadline go test -timeout would give it.
type deadlined struct {
	testing.TB
	deadline time.Time
	ok       bool
}

func (d deadlined) Deadline() (time.Time, bool) { return d.deadline, d.ok }

func TestLimitsFollowTheTestsDeadline(t *testing.T) {
	t.Parallel()
	near := func(got, want time.Duration) bool { return got <= want && got > want-5*time.Second }

	bridge, call := limits(deadlined{TB: t, deadline: time.Now().Add(10 * time.Minute), ok: true})
	if !near(bridge, 10*time.Minute-bridgeMargin) || !near(call, 10*time.Minute-callMargin) || bridge >= call {
		t.Errorf("ten minutes left: bridge %v, call %v", bridge, call)
	}
	// The bridge answers (saying what it waited for) before Call stops waiting, even at the very end.
	bridge, call = limits(deadlined{TB: t, deadline: time.Now().Add(time.Second), ok: true})
	if bridge != time.Second || call != 2*time.Second {
		t.Errorf("a second left: bridge %v, call %v", bridge, call)
	}
	// go test -timeout 0: no deadline, no limit.
	if bridge, call := limits(deadlined{TB: t}); bridge != 0 || call != 0 {
		t.Errorf("no deadline: bridge %v, call %v", bridge, call)
	}
	// A testing.TB that cannot tell its deadline (a benchmark's): no limit either.
	var b testing.TB = &testing.B{}
	if bridge, call := limits(b); bridge != 0 || call != 0 {
		t.Errorf("no Deadline method: bridge %v, call %v", bridge, call)
	}
}
