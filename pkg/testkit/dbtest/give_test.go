package dbtest

import (
	"context"
	"testing"
)

// The template is built anew while tests run: another checkout's build drops it as stale whenever nobody
// is copying it, and a new month names a new one. Copies of both builds are recycled, and a changed copy
// of either is still dropped: the builds' catalog rows were written by different transactions, so each
// database is compared with its own fingerprint, not with the first one the process saw.
func TestRecyclingOutlivesATemplateRebuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &pool{on: true}
	first, err := Create(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	// Another build of the same migrations, as ensureTemplate makes one.
	rebuilt, err := Create(ctx, false)
	if err != nil {
		first.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range p.free {
			d.DB.Close()
		}
		first.Close()
		rebuilt.Close()
	})
	if err := migrateDSN(ctx, rebuilt.URL); err != nil {
		t.Fatal(err)
	}
	rebuilt.template = first.template
	for _, d := range []*Database{first, rebuilt} {
		if err := p.learn(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if first.schema == rebuilt.schema {
		t.Fatalf("both builds have the fingerprint %s: this test shows nothing", first.schema)
	}

	for _, d := range []*Database{first, rebuilt} {
		if kept, err := p.give(d); !kept || err != nil {
			t.Fatalf("%s not recycled (%v)", d.Name, err)
		}
	}
	for range 2 {
		d := p.take()
		if _, err := d.Exec(`ALTER TABLE programs ALTER COLUMN status SET DEFAULT 'paused'`); err != nil {
			t.Fatal(err)
		}
		if kept, err := p.give(d); kept || err != nil {
			t.Errorf("%s, whose schema changed, recycled %v (%v), want dropped", d.Name, kept, err)
		}
	}
}

// A recycle that fails says why, rather than passing for a changed schema: a slow or failing server must
// not quietly turn recycling off (the database is dropped all the same).
func TestRecycleFailureIsReported(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := &pool{on: true}
	d, err := Create(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := p.learn(ctx, d); err != nil {
		t.Fatal(err)
	}
	reachable := d.URL
	if d.URL, err = WithDatabase(AdminURL(), d.Name+"_elsewhere"); err != nil { // no such database
		t.Fatal(err)
	}
	if kept, err := p.give(d); kept || err == nil {
		t.Errorf("recycling through an unreachable connection: kept %v, error %v; want not kept, an error", kept, err)
	}
	d.URL = reachable
}
