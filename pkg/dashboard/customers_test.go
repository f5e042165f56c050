package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The Customers view: each customer with their partner, how far they went, when, and their money as the
// ledger's routes give it; filtered by status.
func TestCustomersView(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	lead := func(key string) {
		t.Helper()
		click := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "ua-"+key)
		res := env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": click.JSON(t)["click_id"], "customer_key": key},
			"Authorization", "Bearer "+r.APIKey)
		if res.Status != http.StatusOK {
			t.Fatalf("lead %s: %d %s", key, res.Status, res.Body)
		}
	}
	lead("only-signed-up")
	lead("buyer-7")
	sale := env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "inv-7", "amount_cents": 4900, "currency": "USD",
		"customer_key": "buyer-7"}, "Authorization", "Bearer "+r.APIKey)
	if sale.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", sale.Status, sale.Body)
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/refund", map[string]any{"transaction_id": "inv-7", "refund_amount_cents": 900},
		"Authorization", "Bearer "+r.APIKey); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	c := env.Do(http.MethodGet, fmt.Sprintf("/api/v1/commissions/%v", sale.JSON(t)["commission_id"]), nil, "Authorization", "Bearer "+r.AccountToken)
	earned := c.JSON(t)["data"].(map[string]any)["payable_cents"].(float64)

	a := open(t, env)
	a.signIn(r.AccountEmail)
	a.view("customers")
	a.tab.WaitFor(`document.querySelectorAll("#customers tbody tr[data-customer]").length === 2`)
	rows := func() [][]string {
		var out [][]string
		a.tab.Eval(`Array.from(document.querySelectorAll("#customers tbody tr")).map(function (tr) {
			return Array.from(tr.children).map(function (td) { return td.innerText.replace(/\s+/g, " ").trim(); }); })`, &out)
		return out
	}
	got := rows()
	buyer, signedUp := got[0], got[1]
	wantMoney := fmt.Sprintf("%d.%02d USD", int64(earned)/100, int64(earned)%100)
	if buyer[0] != "buyer-7" || buyer[1] != "Seed partner" || buyer[2] != "bought" || buyer[4] != "40.00 USD" || buyer[5] != wantMoney ||
		!strings.Contains(buyer[3], "Click ") || !strings.Contains(buyer[3], "Signed up ") || !strings.Contains(buyer[3], "First sale ") {
		t.Errorf("the buyer's row = %q, want revenue 40.00 USD and commission %s", buyer, wantMoney)
	}
	if signedUp[0] != "only-signed-up" || signedUp[2] != "signed up" || signedUp[4] != "none" || strings.Contains(signedUp[3], "First sale") {
		t.Errorf("the lead's row = %q", signedUp)
	}
	a.noWordBroken("the Customers view at 1280 px")
	a.screenshot("#customers-panel", "dashboard-customers")
	a.fitsAPhone("the Customers view") // ends at 390 px
	a.noWordBroken("the Customers view at 390 px")

	a.pick("#cu-status", "lead")
	a.click(`#cu-filters [type="submit"]`)
	a.tab.WaitFor(`document.querySelectorAll("#customers tbody tr[data-customer]").length === 1`)
	if got := rows(); got[0][0] != "only-signed-up" {
		t.Errorf("signed up only: %q", got)
	}
	a.pick("#cu-status", "visitor")
	a.click(`#cu-filters [type="submit"]`)
	a.tab.WaitFor(`document.querySelectorAll("#customers tbody tr[data-customer]").length === 0`)
	if got := a.text("#customers tbody"); got != "No customers match these filters." {
		t.Errorf("no visitors: %q", got)
	}
	a.tab.Accessible("the Customers view", `main [data-view="customers"]`)
	a.noPageErrors()
}
