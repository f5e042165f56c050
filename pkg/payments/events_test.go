package payments

import (
	"testing"
	"time"
)

// An event's time is its created field; without one, the caller's clock (never the wall clock).
func TestEventCreated(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	if got := (stripeEvent{}).created(now); !got.Equal(clock) {
		t.Errorf("no created: %v, want the clock's %v", got, clock)
	}
	if got := (stripeEvent{Created: 1_700_000_000}).created(now); !got.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("created 1700000000: %v", got)
	}
}
