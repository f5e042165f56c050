package accounts_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// accounts_suspended_owners, called directly: only a suspended owner of the workspace is listed.
func TestSuspendedOwnersFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	mustAccount := func(email string) int64 {
		t.Helper()
		id, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: email})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	owner, second, admin, other := mustAccount("owner@example.com"), mustAccount("second@example.com"),
		mustAccount("admin@example.com"), mustAccount("other@example.com")
	ws, err := accounts.CreateWorkspace(ctx, d.DB, "w", owner, "owner@example.com")
	if err != nil {
		t.Fatal(err)
	}
	otherWS, err := accounts.CreateWorkspace(ctx, d.DB, "o", other, "other@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO workspace_members (workspace_id, account_id, email, role) VALUES
		($1, $2, 'second@example.com', 'owner'), ($1, $3, 'admin@example.com', 'admin'), ($1, NULL, 'invited@example.com', 'owner')`,
		ws, second, admin); err != nil {
		t.Fatal(err)
	}
	suspendedOwners := func(workspace int64) []int64 {
		t.Helper()
		var ids []int64
		if err := d.Select(&ids, `SELECT id FROM accounts_suspended_owners($1) AS id ORDER BY id`, workspace); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for _, step := range []struct {
		name      string
		suspend   []string
		unsuspend []string
		want      []int64
	}{
		{"nobody suspended", nil, nil, nil},
		{"an admin suspended", []string{"admin@example.com"}, nil, nil},
		{"another workspace's owner suspended", []string{"other@example.com"}, nil, nil},
		{"a second owner suspended", []string{"second@example.com"}, nil, []int64{second}},
		{"both owners suspended", []string{"owner@example.com"}, nil, []int64{owner, second}},
		{"both unsuspended", nil, []string{"owner@example.com", "second@example.com"}, nil},
	} {
		for _, e := range step.suspend {
			if err := accounts.Suspend(ctx, d.DB, e); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range step.unsuspend {
			if err := accounts.Unsuspend(ctx, d.DB, e); err != nil {
				t.Fatal(err)
			}
		}
		if got := suspendedOwners(ws); !slices.Equal(got, step.want) {
			t.Errorf("%s: suspended owners = %v, want %v", step.name, got, step.want)
		}
	}
	if got := suspendedOwners(otherWS); !slices.Equal(got, []int64{other}) {
		t.Errorf("the other workspace's suspended owners = %v, want [%d]", got, other)
	}
}

// PostgreSQL inlines the rule into its callers' queries: no function call per row.
func TestSuspendedOwnersIsInlined(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	var plan []string
	if err := d.Select(&plan, `EXPLAIN (VERBOSE, COSTS OFF) SELECT EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id)) FROM programs p`); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "accounts_suspended_owners") || !strings.Contains(text, "workspace_members") {
		t.Errorf("accounts_suspended_owners is not inlined:\n%s", text)
	}
}
