package api_test

import (
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Members are invited by email and join with their role when they log in.
func TestWorkspaceMembers(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{Email: "owner@brand.example"})
	path := "/api/v1/workspaces/" + itoa(r.AdvertiserID) + "/members"
	owner := apitest.Bearer(r.AccountToken)
	admin := apitest.Bearer(member(t, env, r.AdvertiserID, "admin"))
	analyst := apitest.Bearer(member(t, env, r.AdvertiserID, "analyst"))

	// 201: an admin invites an analyst; the invitation has no account yet.
	res := env.Do(http.MethodPost, path, map[string]any{"email": "new.analyst@brand.example", "role": "analyst"}, admin...)
	if res.Status != http.StatusCreated {
		t.Fatalf("invite: %d %s", res.Status, res.Body)
	}
	if d := res.JSON(t)["data"].(map[string]any); d["account_id"] != nil || d["role"] != "analyst" || d["email"] != "new.analyst@brand.example" {
		t.Errorf("invited = %v", d)
	}
	// 403, 409, 400
	platformError(t, env.Do(http.MethodPost, path, map[string]any{"email": "boss@brand.example", "role": "owner"}, admin...),
		403, "ForbiddenError", "Only an owner can grant the owner role")
	platformError(t, env.Do(http.MethodPost, path, map[string]any{"email": "x@brand.example", "role": "billing"}, analyst...),
		403, "ForbiddenError", "Your role (analyst) does not allow this (members:write)")
	platformError(t, env.Do(http.MethodPost, path, map[string]any{"email": "NEW.analyst@brand.example", "role": "billing"}, owner...),
		409, "ConflictError", "This email is already a member of the workspace")
	if res := env.Do(http.MethodPost, path, map[string]any{"email": "not-an-email", "role": "billing"}, owner...); res.Status != http.StatusBadRequest {
		t.Errorf("bad email: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodPost, path, map[string]any{"email": "boss@brand.example", "role": "owner"}, owner...); res.Status != http.StatusCreated {
		t.Errorf("owner grants owner: %d %s", res.Status, res.Body)
	}

	// 200: any member lists; the list shows every member and invitation.
	list := env.Do(http.MethodGet, path, nil, analyst...)
	if n := len(list.JSON(t)["data"].([]any)); list.Status != http.StatusOK || n != 5 {
		t.Errorf("list: %d, %d members, want 5: %s", list.Status, n, list.Body)
	}

	// The invited analyst logs in: the invitation is linked, and the role applies.
	token := cliLogin(t, env, "new.analyst@brand.example")["token"].(string)
	if n := env.Count(`SELECT count(*) FROM workspace_members WHERE email = 'new.analyst@brand.example' AND account_id IS NOT NULL AND workspace_id = $1`, r.AdvertiserID); n != 1 {
		t.Error("invitation not linked at login")
	}
	program := "/api/v1/programs/" + itoa(r.ProgramID)
	if res := env.Do(http.MethodGet, program, nil, apitest.Bearer(token)...); res.Status != http.StatusOK {
		t.Errorf("invited analyst reads the program: %d", res.Status)
	}
	if res := env.Do(http.MethodPatch, program, map[string]any{"name": "x"}, apitest.Bearer(token)...); res.Status != http.StatusForbidden {
		t.Errorf("invited analyst changes the program: %d", res.Status)
	}

	// 401, 403, 404
	if res := env.Do(http.MethodGet, path, nil); res.Status != http.StatusUnauthorized {
		t.Errorf("no token: %d", res.Status)
	}
	stranger := env.Seed(seed.Options{})
	platformError(t, env.Do(http.MethodGet, path, nil, apitest.Bearer(stranger.AccountToken)...), 403, "ForbiddenError", "You are not a member of this workspace")
	platformError(t, env.Do(http.MethodGet, "/api/v1/workspaces/999999/members", nil, owner...), 404, "NotFoundError", "Workspace not found")
}
