package apikeys_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Issue adds a program's key; a program has one active key, so a second key comes only by Regenerate.
func TestIssueAndRegenerate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := apikeys.Authenticate(ctx, d.DB, r.APIKey)
	if err != nil || first.ProgramID != r.ProgramID || first.Last4 != r.APIKey[len(r.APIKey)-4:] {
		t.Fatalf("the seeded key: %+v, %v", first, err)
	}
	owner, err := accounts.Authenticate(ctx, d.DB, r.AccountToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := apikeys.Issue(ctx, d.DB, r.ProgramID, owner.ID); err == nil {
		t.Error("a second active key was issued")
	}
	k, plain, err := apikeys.Regenerate(ctx, d.DB, r.ProgramID, audit.Account(owner.ID, owner.Email), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if k.ProgramID != r.ProgramID || k.Masked() != "rt_…"+plain[len(plain)-4:] || plain == r.APIKey {
		t.Errorf("regenerated key %+v, %q", k, plain)
	}
	if _, err := apikeys.Authenticate(ctx, d.DB, r.APIKey); !errors.Is(err, apikeys.ErrUnknown) {
		t.Errorf("old key: %v, want ErrUnknown", err)
	}
	if got, err := apikeys.Authenticate(ctx, d.DB, plain); err != nil || got.ID != k.ID {
		t.Errorf("new key: %+v, %v", got, err)
	}
}

// A regeneration is recorded once, by the account, at the clock's time, in its transaction; a failed
// one (no such program) records nothing.
func TestRegenerateIsAudited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	r, err := seed.Run(ctx, d.DB, seed.Options{Email: "owner@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := accounts.Authenticate(ctx, d.DB, r.AccountToken)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	k, _, err := apikeys.Regenerate(ctx, d.DB, r.ProgramID, audit.Account(owner.ID, owner.Email), at)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := apikeys.Regenerate(ctx, d.DB, r.ProgramID+1000, audit.Account(owner.ID, owner.Email), at); !errors.Is(err, apikeys.ErrNoProgram) {
		t.Errorf("unknown program: %v", err)
	}
	got, err := audit.List(ctx, d.DB, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("records = %+v, want 1", got)
	}
	g := got[0]
	if g.Actor != "owner@example.com" || g.ActorAccountID == nil || *g.ActorAccountID != owner.ID ||
		g.Action != audit.ActionKeyRegenerate || g.Target != audit.ProgramTarget(r.ProgramID) || !g.At.Equal(at) {
		t.Errorf("record = %+v", g)
	}
	want := `{"new_key": "` + k.Masked() + `", "old_key": "rt_…` + r.APIKey[len(r.APIKey)-4:] + `"}`
	if string(g.Detail) != want {
		t.Errorf("detail = %s, want %s", g.Detail, want)
	}
}
