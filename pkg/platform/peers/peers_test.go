package peers_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/platform/peers"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }

func TestAnnounce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	a := peers.Self{ID: "a", Hostname: "h1", SharedLimits: false, Started: t0}
	b := peers.Self{ID: "b", Hostname: "h2", SharedLimits: true, Started: t0}
	announce := func(s peers.Self, at time.Time) peers.Others {
		t.Helper()
		o, err := peers.Announce(ctx, d.DB, s, at)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := announce(a, t0); o != (peers.Others{}) {
		t.Errorf("alone: %+v", o)
	}
	if o := announce(b, t0.Add(time.Second)); o != (peers.Others{Serving: 1, Unshared: 1}) {
		t.Errorf("b beside a (in-process limits): %+v", o)
	}
	if o := announce(a, t0.Add(peers.Interval)); o != (peers.Others{Serving: 1}) {
		t.Errorf("a beside b (shared limits): %+v", o)
	}
	// b stops announcing: after Expiry it no longer counts, and its row goes.
	if o := announce(a, t0.Add(time.Second+peers.Expiry+time.Millisecond)); o != (peers.Others{}) {
		t.Errorf("after b went silent: %+v", o)
	}
	var rows int
	if err := d.Get(&rows, `SELECT count(*) FROM server_instances`); err != nil || rows != 1 {
		t.Errorf("%d rows (%v), want a's only", rows, err)
	}
	if err := peers.Leave(ctx, d.DB, "a"); err != nil {
		t.Fatal(err)
	}
	if err := d.Get(&rows, `SELECT count(*) FROM server_instances`); err != nil || rows != 0 {
		t.Errorf("%d rows after leaving (%v)", rows, err)
	}
}
