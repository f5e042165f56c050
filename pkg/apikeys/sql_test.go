package apikeys_test

import (
	"context"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/secret"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The calls this package makes take exactly the inputs its functions declare.
func TestCallsMatchTheirFunctions(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if err := pgcall.Check(context.Background(), d.DB, apikeys.LookupCall); err != nil {
		t.Error(err)
	}
}

// apikeys_lookup, called directly: which hashes find a key, and whether its program's owner is
// suspended (accounts_suspended_owners).
func TestLookupFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	active, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	suspended, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := accounts.Suspend(ctx, d.DB, suspended.AccountEmail); err != nil {
		t.Fatal(err)
	}
	// A suspended admin (not an owner) of the active program's workspace suspends nothing.
	admin, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "admin@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO workspace_members (workspace_id, account_id, email, role) VALUES ($1, $2, 'admin@example.com', 'admin')`,
		active.AdvertiserID, admin); err != nil {
		t.Fatal(err)
	}
	if err := accounts.Suspend(ctx, d.DB, "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	revoked, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`UPDATE api_keys SET revoked_at = now() WHERE program_id = $1`, revoked.ProgramID); err != nil {
		t.Fatal(err)
	}

	type found struct {
		Program   int64 `db:"program_id"`
		Suspended bool  `db:"owner_suspended"`
	}
	for _, tc := range []struct {
		name   string
		tokens []string
		want   []found
	}{
		{"an active key", []string{active.APIKey}, []found{{active.ProgramID, false}}},
		{"a suspended owner's key", []string{suspended.APIKey}, []found{{suspended.ProgramID, true}}},
		{"a revoked key", []string{revoked.APIKey}, nil},
		{"an unknown key", []string{"rt_unknown"}, nil},
		{"a batch", []string{"rt_unknown", suspended.APIKey, revoked.APIKey, active.APIKey},
			[]found{{active.ProgramID, false}, {suspended.ProgramID, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make([]apikeys.LookupInput, len(tc.tokens))
			for i, tok := range tc.tokens {
				in[i].Hash = secret.Hash(tok)
			}
			var got []found
			if err := d.SelectContext(ctx, &got, `SELECT program_id, owner_suspended FROM (`+apikeys.LookupCall.Query()+`) k ORDER BY program_id`,
				apikeys.LookupCall.Args(in, pgcall.None{})...); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("found %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("found %+v, want %+v", got, tc.want)
				}
			}
		})
	}
}
