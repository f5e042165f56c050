package apikeys_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
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
	k, plain, err := apikeys.Regenerate(ctx, d.DB, r.ProgramID, owner.ID)
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
