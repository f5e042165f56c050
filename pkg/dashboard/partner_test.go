package dashboard_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// A partner's page, from their name in Partners: profile, the program's terms, their money, links,
// latest commissions, payouts and customers, as the API gives them for that partner and no other; an
// address of its own that a reload keeps and the back button leaves.
func TestPartnerPage(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	owner := []string{"Authorization", "Bearer " + r.AccountToken}
	base := fmt.Sprintf("/api/v1/programs/%d", r.ProgramID)
	must := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		res := env.Do(method, path, body, owner...)
		if res.Status != status {
			t.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
		}
		return res.JSON(t)
	}
	must(http.MethodPatch, base, map[string]any{"hold_days": 0, "commission_approval": "auto"}, http.StatusOK)
	grace := must(http.MethodPost, base+"/partners", map[string]any{"name": "Grace Hopper", "email": "grace@example.com"}, http.StatusCreated)["data"].(map[string]any)["id"].(float64)
	graceLink := must(http.MethodPost, base+"/links", map[string]any{"partner_id": grace}, http.StatusCreated)["data"].(map[string]any)["short_link"].(string)
	buy := func(key, txn string, cents int) {
		t.Helper()
		click := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "ua-"+key)
		for _, call := range []struct {
			path string
			body map[string]any
		}{
			{"/api/v1/track/lead", map[string]any{"click_id": click.JSON(t)["click_id"], "customer_key": key}},
			{"/api/v1/track/sale", map[string]any{"transaction_id": txn, "amount_cents": cents, "currency": "USD", "customer_key": key}},
		} {
			if res := env.Do(http.MethodPost, call.path, call.body, "Authorization", "Bearer "+r.APIKey); res.Status != http.StatusOK {
				t.Fatalf("%s: %d %s", call.path, res.Status, res.Body)
			}
		}
	}
	buy("ada-1", "inv-1", 4900)
	must(http.MethodPost, base+"/payouts", nil, http.StatusCreated)
	buy("ada-2", "inv-2", 2500)

	a := open(t, env)
	a.signIn(r.AccountEmail)
	a.view("partners")
	a.tab.Click(fmt.Sprintf(`#partners tr[data-partner="%d"] a.partner-link`, r.PartnerID))
	a.tab.WaitFor(fmt.Sprintf(`document.getElementById("partner-panel").getAttribute("data-partner") === "%d" && !document.getElementById("partner-panel").hidden`, r.PartnerID))
	var where struct{ Hash, Current string }
	a.tab.Eval(`({ hash: location.hash, current: document.querySelector('#views a[aria-current="page"]').dataset.view })`, &where)
	if want := fmt.Sprintf("#program=%d&view=partner&partner=%d", r.ProgramID, r.PartnerID); where.Hash != want || where.Current != "partners" {
		t.Errorf("the partner's page is at %q, navigation on %q; want %q under partners", where.Hash, where.Current, want)
	}
	if got := a.text("#pp-name"); got != "Seed partner" {
		t.Errorf("name %q", got)
	}
	profile := a.text("#pp-profile")
	if !strings.Contains(profile, seed.PartnerEmail(r.AccountEmail)) || !strings.Contains(profile, "approved") || !strings.Contains(profile, "2 sales") {
		t.Errorf("profile %q", profile)
	}
	terms := must(http.MethodGet, base, nil, http.StatusOK)["data"].(map[string]any)["terms"].(string)
	if got := a.text("#pp-terms"); got != terms {
		t.Errorf("terms %q, want the program's %q", got, terms)
	}
	// Money, as the balances route gives it for this partner.
	var balance map[string]any
	for _, b := range must(http.MethodGet, base+"/balances", nil, http.StatusOK)["data"].([]any) {
		if b.(map[string]any)["partner_id"] == float64(r.PartnerID) {
			balance = b.(map[string]any)
		}
	}
	cents := func(key string) string {
		n := int64(balance[key].(float64))
		return fmt.Sprintf("%d.%02d USD", n/100, n%100)
	}
	if got, want := rowsOf(a, "#pp-balances"), [][]string{{"USD", cents("pending_cents"), cents("approved_cents"), cents("in_payout_cents"), cents("paid_cents"), cents("clawback_owed_cents")}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("money %q, want %q", got, want)
	}
	links := rowsOf(a, "#pp-links")
	if len(links) != 1 || links[0][0] != r.ShortLink || !strings.Contains(links[0][1], r.AffiliateURL) || strings.Contains(a.text("#pp-links"), graceLink) {
		t.Errorf("links %q: want only %s", links, r.ShortLink)
	}
	if got := a.attr("#pp-links button.copy", "data-text"); got != r.AffiliateURL {
		t.Errorf("Copy copies %q", got)
	}
	if got := rowsOf(a, "#pp-commissions"); len(got) != 2 || got[0][1] != "inv-2" || got[1][1] != "inv-1" {
		t.Errorf("commissions %q", got)
	}
	if got := rowsOf(a, "#pp-payouts"); len(got) != 1 || got[0][1] != "9.80 USD" || got[0][2] != "processing" {
		t.Errorf("payouts %q", got)
	}
	if got := rowsOf(a, "#pp-customers"); len(got) != 2 || got[0][0] != "ada-2" || got[0][3] != "25.00 USD" {
		t.Errorf("customers %q", got)
	}
	a.noWordBroken("the partner's page at 1280 px")
	// The page, for docs/ (a.screenshot opens views from the navigation, where this page has no link).
	if dir := os.Getenv("REFTRACK_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "dashboard-partner.png"), a.tab.Screenshot("#partner-panel"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a.fitsAPhone("the partner's page") // ends at 390 px
	a.noWordBroken("the partner's page at 390 px")
	a.tab.Accessible("the partner's page", `main [data-view="partner"]`)

	// A reload keeps the page; the back button returns to Partners.
	if status := a.tab.Reload(); status != http.StatusOK {
		t.Fatalf("reload: %d", status)
	}
	a.tab.WaitFor(fmt.Sprintf(`document.getElementById("partner-panel").getAttribute("data-partner") === "%d" && !document.getElementById("partner-panel").hidden`, r.PartnerID))
	a.tab.Eval(`history.back()`, nil)
	a.tab.WaitFor(`!document.getElementById("partners-panel").hidden && document.getElementById("partner-panel").hidden`)

	// Another partner's page, by its address: their own, empty so far.
	a.tab.Eval(fmt.Sprintf(`location.hash = "#program=%d&view=partner&partner=%d"`, r.ProgramID, int64(grace)), nil)
	a.tab.WaitFor(`document.getElementById("pp-name").textContent === "Grace Hopper"`)
	for table, none := range map[string]string{"#pp-commissions": "No commissions yet.", "#pp-payouts": "No payouts yet.",
		"#pp-customers": "No customers yet.", "#pp-balances": "No money yet: it starts with the first commission."} {
		if got := a.text(table + " tbody"); got != none {
			t.Errorf("Grace's %s: %q", table, got)
		}
	}
	if links := rowsOf(a, "#pp-links"); len(links) != 1 || links[0][0] != graceLink {
		t.Errorf("Grace's links %q", links)
	}
	// A partner of no program of this one's: said so.
	a.tab.Eval(fmt.Sprintf(`location.hash = "#program=%d&view=partner&partner=999999"`, r.ProgramID), nil)
	a.tab.WaitFor(`document.getElementById("pp-name").textContent === "Partner not found"`)
	if !a.visible("#pp-missing") || a.visible("#pp-body") {
		t.Error("an unknown partner's page shows a body")
	}
	a.noPageErrors()
}

// rowsOf is a table's body as the page shows it: each row's cells' text.
func rowsOf(a *app, table string) [][]string {
	a.t.Helper()
	var out [][]string
	a.tab.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(function (tr) {
		return Array.from(tr.children).map(function (td) { return td.innerText.replace(/\s+/g, " ").trim(); }); })`, table+" tbody tr"), &out)
	return out
}
