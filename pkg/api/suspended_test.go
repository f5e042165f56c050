package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

const suspendedMessage = "Your account has been suspended."

// tables is every table a refused request could write to, with its row count: a refusal leaves it equal.
func tables(t *testing.T, env *apitest.Env) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"clicks", "leads", "customers", "sales", "commissions", "refunds", "processor_events", "performance_deltas"} {
		out[table] = env.Count(`SELECT count(*) FROM ` + table)
	}
	return out
}

// suspendedError checks a platform-envelope refusal of a suspended account.
func suspendedError(t *testing.T, what string, res *apitest.Response) {
	t.Helper()
	if res.Status != http.StatusForbidden {
		t.Errorf("%s: %d %s, want 403", what, res.Status, res.Body)
		return
	}
	e := platformError(t, res, 403, "ForbiddenError", suspendedMessage)
	if e["code"] != "account_suspended" || e["details"].(map[string]any)["code"] != "ACCOUNT_BLOCKED" {
		t.Errorf("%s: code = %v, details = %v", what, e["code"], e["details"])
	}
}

// A suspended account is refused everywhere (docs/rules.md#bad-input-abuse-and-faults): its programs' key on
// sale, refund, lead and readiness, keyless clicks and leads on its programs, its login token and its
// dashboard session; its payment webhooks are verified and answered 200 but not applied. Nothing is recorded,
// another brand is unaffected, and unsuspending restores everything.
func TestSuspendedAccountRefusedEverywhere(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{LeadAuth: "browser_allowed"})
	env, r := f.env, f.prog
	other := env.Seed(seed.Options{Email: "other@brand.example", Slug: "otherbrand"})
	b := newBrowserLike(t, env)
	b.signIn(r.AccountEmail)
	session := "reftrack_session=" + b.cookie(dashboard.SessionCookie)
	key := apitest.Bearer(r.APIKey)
	account := apitest.Bearer(r.AccountToken)

	if err := accounts.Suspend(t.Context(), env.DB, r.AccountEmail); err != nil {
		t.Fatal(err)
	}
	before := tables(t, env)

	saleBody := map[string]any{"transaction_id": "in_susp_1", "amount_cents": 4900, "currency": "USD", "customer_key": "cus_key_1"}
	suspendedError(t, "sale", sale(env, r.APIKey, saleBody))
	suspendedError(t, "refund", refund(env, r.APIKey, map[string]any{"transaction_id": "in_susp_1"}))
	suspendedError(t, "server lead", lead(env, map[string]any{"click_id": f.clickID, "customer_key": "cus_key_2"}, key...))
	suspendedError(t, "keyless lead", lead(env, map[string]any{"click_id": f.clickID, "customer_key": "cus_key_3"}))
	suspendedError(t, "keyless click", env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL},
		"User-Agent", "Mozilla/5.0 Chrome/131.0 another"))
	suspendedError(t, "test click with key", env.Do(http.MethodPost, "/api/v1/track/click",
		map[string]any{"affiliate_url": r.AffiliateURL, "additional_data": map[string]any{"test": true}}, key...))
	suspendedError(t, "events list", env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID), nil, account...))
	suspendedError(t, "CLI programs", env.Do(http.MethodGet, "/api/v1/cli/programs", nil, account...))
	suspendedError(t, "dashboard session", env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", session))

	res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...)
	want := map[string]any{"error": map[string]any{"code": "account_suspended", "message": suspendedMessage}}
	if diff := cmp.Diff(want, res.JSON(t)); res.Status != http.StatusForbidden || diff != "" {
		t.Errorf("readiness: %d (-want +got):\n%s", res.Status, diff)
	}

	// The webhook: verified (a bad signature is still refused), answered 200 ignored, nothing applied.
	payload := f.event("checkout.session.completed", checkoutSession("cs_live_susp", "payment", 4900, f.meta(), true), true)
	if res := env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(r.ProgramID), payload, "Stripe-Signature", "t=1,v1=00"); res.Status != http.StatusBadRequest {
		t.Errorf("unsigned webhook: %d %s", res.Status, res.Body)
	}
	ack := f.ack(payload, "ignored")
	if ack["reason"] != payments.ReasonSuspended || ack["sale_id"] != nil {
		t.Errorf("webhook ack = %v", ack)
	}
	if logs := env.Logs.String(); !strings.Contains(logs, "stripe event not applied: account suspended") || !strings.Contains(logs, `"event_id":"evt_`) {
		t.Errorf("withheld webhook event not logged:\n%s", logs)
	}

	if diff := cmp.Diff(before, tables(t, env)); diff != "" {
		t.Errorf("refused requests changed the database (-before +after):\n%s", diff)
	}

	// Another brand is unaffected.
	if res := sale(env, other.APIKey, map[string]any{"transaction_id": "in_other", "amount_cents": 100}); res.Status == http.StatusForbidden {
		t.Errorf("other brand's sale: %d %s", res.Status, res.Body)
	}
	click(t, env, other)

	// Unsuspended: everything works again, and the withheld webhook event applies when resent.
	if err := accounts.Unsuspend(t.Context(), env.DB, r.AccountEmail); err != nil {
		t.Fatal(err)
	}
	f.ack(payload, "recorded")
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "in_susp_2", "amount_cents": 4900, "customer_key": "cus_key_1"}); res.Status != http.StatusOK {
		t.Errorf("sale after unsuspend: %d %s", res.Status, res.Body)
	}
	for _, c := range []struct {
		what string
		res  *apitest.Response
	}{
		{"readiness", env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...)},
		{"events list", env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID), nil, account...)},
		{"CLI programs", env.Do(http.MethodGet, "/api/v1/cli/programs", nil, account...)},
		{"dashboard session", env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", session)},
		{"keyless lead", lead(env, map[string]any{"click_id": click(t, env, r)["click_id"], "customer_key": "cus_key_after"})},
	} {
		if c.res.Status != http.StatusOK {
			t.Errorf("%s after unsuspend: %d %s", c.what, c.res.Status, c.res.Body)
		}
	}
}

// Any suspended owner of a workspace suspends its programs (a second owner does not keep them running);
// a suspended member who is not an owner does not.
func TestSuspendedOwnerOfSharedWorkspace(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	for _, m := range []struct{ email, role string }{{"co-owner@brand.example", "owner"}, {"analyst@brand.example", "analyst"}} {
		if _, err := env.DB.Exec(`WITH a AS (INSERT INTO accounts (email) VALUES ($1) RETURNING id)
			INSERT INTO workspace_members (workspace_id, account_id, email, role) SELECT $2, id, $1, $3 FROM a`,
			m.email, r.AdvertiserID, m.role); err != nil {
			t.Fatal(err)
		}
	}
	readiness := func() int {
		return env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...).Status
	}
	if err := accounts.Suspend(t.Context(), env.DB, "analyst@brand.example"); err != nil {
		t.Fatal(err)
	}
	if s := readiness(); s != http.StatusOK {
		t.Errorf("suspended analyst: readiness %d, want 200", s)
	}
	if err := accounts.Suspend(t.Context(), env.DB, "co-owner@brand.example"); err != nil {
		t.Fatal(err)
	}
	if s := readiness(); s != http.StatusForbidden {
		t.Errorf("suspended co-owner: readiness %d, want 403", s)
	}
}
