package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/dashboard"
)

// The dashboard's Commissions and Payouts views call the ledger's routes with the session cookie
// (x-reftrack-auth account-or-session, as the page's other routes): reads need only the cookie; every
// action needs the page's CSRF token too, and without it (or with another session's) is refused with 403
// before anything changes. The actions also take the session's Idempotency-Key.
func TestLedgerBySession(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"commission_approval": "manual"})
	b := newBrowserLike(t, f.env)
	csrf := b.signIn(f.r.AccountEmail)
	session := []string{"Cookie", dashboard.SessionCookie + "=" + b.cookie(dashboard.SessionCookie)}
	withToken := append([]string{"X-CSRF-Token", csrf}, session...)
	ids := []any{f.sale("ses-1", 5000, "USD", "")["id"], f.sale("ses-2", 5000, "USD", "")["id"], f.sale("ses-3", 5000, "USD", "")["id"]}

	// Reads: the cookie alone.
	for _, path := range []string{f.base + "/commissions", commission(ids[0]), f.base + "/balances", f.base + "/payouts", f.base + "/payouts.csv",
		f.base + "/payouts.csv?status=processing&format=paypal"} {
		if res := f.env.Do(http.MethodGet, path, nil, session...); res.Status != http.StatusOK {
			t.Errorf("GET %s by session: %d %s", path, res.Status, res.Body)
		}
	}

	audited := func() int {
		return f.env.Count(`SELECT count(*) FROM audit_log WHERE action LIKE 'commission.%' OR action LIKE 'payout.%'`)
	}
	const msg = "Missing or invalid CSRF token — reload the dashboard"
	// act sends an action refused without the token and with another session's, then sent with the
	// page's (and an Idempotency-Key): it answers status, and only then is anything audited.
	act := func(path string, body any, status int) map[string]any {
		t.Helper()
		before := audited()
		platformError(t, f.env.Do(http.MethodPost, path, body, session...), http.StatusForbidden, "ForbiddenError", msg)
		platformError(t, f.env.Do(http.MethodPost, path, body, append([]string{"X-CSRF-Token", dashboard.CSRFToken("rtu_other")}, session...)...),
			http.StatusForbidden, "ForbiddenError", msg)
		if n := audited(); n != before {
			t.Fatalf("POST %s without the CSRF token changed something: %d audit records, were %d", path, n, before)
		}
		res := f.env.Do(http.MethodPost, path, body, append([]string{"Idempotency-Key", "page-" + strings.ReplaceAll(path, "/", "-")}, withToken...)...)
		if res.Status != status {
			t.Fatalf("POST %s by session: %d %s", path, res.Status, res.Body)
		}
		if audited() == before {
			t.Fatalf("POST %s by session changed nothing", path)
		}
		return res.JSON(t)
	}
	act(commission(ids[0])+"/approve", map[string]any{"release_hold": true}, http.StatusOK)
	act(f.base+"/commissions/approve", map[string]any{"ids": []any{ids[1]}, "release_hold": true}, http.StatusOK)
	act(commission(ids[2])+"/reject", map[string]any{"reason": "Self-referral"}, http.StatusOK)
	run := act(f.base+"/payouts", map[string]any{}, http.StatusCreated)["data"].([]any)
	if len(run) != 1 || run[0].(map[string]any)["commission_count"] != 2.0 {
		t.Fatalf("payouts = %v", run)
	}
	paid := act(payout(run[0].(map[string]any)["id"])+"/paid", map[string]any{"external_reference": "PP-1"}, http.StatusOK)["data"].(map[string]any)
	if paid["status"] != "paid" {
		t.Errorf("paid = %v", paid)
	}

	next := f.sale("ses-4", 5000, "USD", "")["id"]
	f.data(f.do(http.MethodPost, commission(next)+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	again := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	failed := act(payout(again[0]["id"])+"/failed", map[string]any{"reason": "Recipient account closed"}, http.StatusOK)["data"].(map[string]any)
	if failed["status"] != "failed" {
		t.Errorf("failed = %v", failed)
	}
	// The page's actions are its signed-in member's.
	var actors []string
	if err := f.env.DB.Select(&actors, `SELECT DISTINCT actor FROM audit_log WHERE action LIKE 'commission.%' OR action LIKE 'payout.%'`); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(actors) != "["+f.r.AccountEmail+"]" {
		t.Errorf("actors = %v", actors)
	}
}
