package origins_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func allow(t *testing.T, d *dbtest.Database, origin string) {
	t.Helper()
	if _, err := d.Exec(`UPDATE programs SET allowed_origins = array_append(allowed_origins, $1)`, origin); err != nil {
		t.Fatal(err)
	}
}

func TestCacheAgesByTheInjectedClock(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if _, err := d.Exec(`INSERT INTO workspaces (name) VALUES ('w');
		INSERT INTO programs (workspace_id, name, domain, slug, commission_type, commission_rate, allowed_origins)
		VALUES ((SELECT id FROM workspaces), 'p', 'shop.example.com', 'p', 'percent', 10, '{https://a.example}')`); err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	c := origins.New(d.DB, clk.now)
	ctx := context.Background()
	if !c.Known(ctx, "https://a.example") || c.Known(ctx, "https://b.example") {
		t.Fatal("first load: want a known, b unknown")
	}

	allow(t, d, "https://b.example")
	clk.add(origins.TTL)
	if c.Known(ctx, "https://b.example") {
		t.Error("b known before the TTL passed")
	}
	clk.add(time.Second)
	if !c.Known(ctx, "https://b.example") {
		t.Error("b unknown after the TTL passed")
	}

	allow(t, d, "https://c.example")
	c.Forget()
	if !c.Known(ctx, "https://c.example") {
		t.Error("c unknown right after Forget")
	}

	// A failed reload keeps the last good set.
	d.DB.Close()
	clk.add(origins.TTL + time.Second)
	if !c.Known(ctx, "https://c.example") {
		t.Error("the last good set was dropped when the database failed")
	}
}

// Many requests at once reload the set once and all get the answer.
func TestConcurrentLookups(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if _, err := d.Exec(`INSERT INTO workspaces (name) VALUES ('w');
		INSERT INTO programs (workspace_id, name, domain, slug, commission_type, commission_rate, allowed_origins)
		VALUES ((SELECT id FROM workspaces), 'p', 'shop.example.com', 'p', 'percent', 10, '{https://a.example}')`); err != nil {
		t.Fatal(err)
	}
	c := origins.New(d.DB, time.Now)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if !c.Known(context.Background(), "https://a.example") {
				t.Error("a unknown")
			}
		})
	}
	wg.Wait()
}
