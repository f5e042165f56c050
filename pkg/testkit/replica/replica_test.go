package replica_test

import (
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/replica"
)

// The standby is a migrated, read-only copy that catches up with Sync and stands still while paused.
func TestPair(t *testing.T) {
	t.Parallel()
	p := replica.Start(t)
	count := func() int {
		t.Helper()
		var n int
		if err := p.Replica.Get(&n, `SELECT count(*) FROM accounts`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	insert := func(email string) {
		t.Helper()
		if _, err := p.Primary.Exec(`INSERT INTO accounts (email) VALUES ($1)`, email); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Replica.Exec(`INSERT INTO accounts (email) VALUES ('no@example.com')`); err == nil {
		t.Fatal("the standby accepted a write")
	}
	insert("a@example.com")
	p.Sync()
	if n := count(); n != 1 {
		t.Fatalf("after Sync the standby has %d accounts, want 1", n)
	}
	p.Pause()
	insert("b@example.com")
	var onPrimary int
	if err := p.Primary.Get(&onPrimary, `SELECT count(*) FROM accounts`); err != nil || onPrimary != 2 {
		t.Fatalf("primary: %d accounts, %v", onPrimary, err)
	}
	if n := count(); n != 1 {
		t.Fatalf("paused, the standby has %d accounts, want 1", n)
	}
	p.Resume()
	p.Sync()
	if n := count(); n != 2 {
		t.Errorf("resumed, the standby has %d accounts, want 2", n)
	}
}
