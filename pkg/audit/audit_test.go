package audit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Do writes the record with the action's work, or neither: an action's error, or a record that cannot
// be written (no actor), rolls the work back.
func TestDoRecordsInTheActionsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	// The work: an account created in the action's transaction.
	made := 0
	work := func(tx *sqlx.Tx) error {
		made++
		_, err := accounts.Create(ctx, tx, accounts.NewAccount{Email: fmt.Sprintf("a%d@example.com", made)})
		return err
	}
	ok := func(at time.Time, target string) func(tx *sqlx.Tx) (audit.Entry, error) {
		return func(tx *sqlx.Tx) (audit.Entry, error) {
			return audit.Entry{At: at, Actor: audit.Operator("alice"), Action: audit.ActionAccountSuspend, Target: target,
				Detail: map[string]any{"email": "ada@example.com"}}, work(tx)
		}
	}
	if err := audit.Do(ctx, d.DB, ok(t0, "account:1")); err != nil {
		t.Fatal(err)
	}
	if err := audit.Do(ctx, d.DB, ok(t0.Add(time.Hour), "account:2")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := audit.Do(ctx, d.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		return audit.Entry{}, errors.Join(work(tx), boom)
	}); !errors.Is(err, boom) {
		t.Errorf("failed action: %v", err)
	}
	if err := audit.Do(ctx, d.DB, func(tx *sqlx.Tx) (audit.Entry, error) {
		return audit.Entry{Action: audit.ActionAccountSuspend, Target: "account:3"}, work(tx)
	}); !errors.Is(err, audit.ErrNoActor) {
		t.Errorf("anonymous action: %v", err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM accounts`); err != nil || n != 2 {
		t.Errorf("accounts = %d, %v; want 2 (the failed actions' work rolled back)", n, err)
	}
	got, err := audit.List(ctx, d.DB, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Target != "account:2" || got[1].Target != "account:1" {
		t.Fatalf("records (newest first) = %+v", got)
	}
	if g := got[1]; g.Actor != "alice" || g.ActorAccountID != nil || g.Action != "account.suspend" || !g.At.Equal(t0) ||
		string(g.Detail) != `{"email": "ada@example.com"}` {
		t.Errorf("record = %+v (detail %s)", g, g.Detail)
	}
	if got, err := audit.List(ctx, d.DB, 1); err != nil || len(got) != 1 || got[0].Target != "account:2" {
		t.Errorf("limit 1: %+v, %v", got, err)
	}
}
