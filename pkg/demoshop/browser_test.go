package demoshop_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/browsertest"
	"github.com/reftrack/reftrack/sdk"
)

var chromium browsertest.Suite

func TestMain(m *testing.M) {
	os.Exit(apitest.Main(func() int { return chromium.Run(m) }))
}

// The first hour, clicking only: the referral URL opens the demo shop, whose tracker records the click
// (shown with its partner); Sign up and Buy report a lead and a sale through the Go SDK; the dashboard
// lists the sale, and its commission is the partner's.
func TestReferralToCommissionInTheBrowser(t *testing.T) {
	t.Parallel()
	shop := &demoshop.Shop{}
	env := apitest.Start(t, apitest.Options{Demo: shop})
	base := env.Proxy()
	r := env.Seed(seed.Options{Origins: []string{base}, ProgramName: "Demo shop"})
	shop.DB, shop.ProgramID = env.DB.DB, r.ProgramID
	shop.Brand = sdk.New(r.APIKey, sdk.WithBaseURL(env.URL))

	tab := chromium.Open(t)
	if status := tab.Goto(base + "/?aff=" + r.ShortLink); status != http.StatusOK {
		t.Fatalf("referral URL: %d", status)
	}
	tab.WaitFor(`document.getElementById("referral").dataset.click`)
	var referral string
	tab.Eval(`document.getElementById("referral").innerText`, &referral)
	if !strings.HasPrefix(referral, "Referred by Seed partner (click ") {
		t.Errorf("the shop shows %q", referral)
	}
	tab.Click("#signup")
	tab.WaitFor(`document.getElementById("result").innerText.startsWith("Signed up as demo-customer-")`)
	tab.Click("#buy")
	tab.WaitFor(`document.getElementById("result").innerText.startsWith("Bought: sale")`)
	var result string
	tab.Eval(`document.getElementById("result").innerText`, &result)
	if !strings.Contains(result, "commission USD 9.80 for the partner") {
		t.Errorf("after buying: %q", result)
	}
	if dir := os.Getenv("REFTRACK_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "demo-shop.png"), tab.Screenshot(""), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id JOIN customers cu ON cu.id = s.customer_id
		JOIN clicks k ON k.id = s.click_ref
		WHERE s.program_id = $1 AND NOT s.is_test AND s.amount_cents = 4900 AND c.amount_cents = 980 AND c.partner_id = $2
		AND cu.customer_key LIKE 'demo-customer-%' AND cu.status = 'converted' AND k.converted`, r.ProgramID, r.PartnerID); n != 1 {
		t.Error("no attributed sale with the partner's commission stored")
	}
	if n := env.Count(`SELECT count(*) FROM leads WHERE program_id = $1 AND status = 'settled' AND source = 'server'`, r.ProgramID); n != 1 {
		t.Error("the sign-up is not a settled server-mode lead")
	}

	// The dashboard, signed in as the program's owner, lists the sale.
	if status := tab.Goto(base + "/dashboard"); status != http.StatusOK {
		t.Fatalf("GET /dashboard: %d", status)
	}
	tab.Fill("#email", r.AccountEmail)
	tab.Click("button[type=submit]")
	tab.WaitFor(`location.pathname === "/dashboard" && document.body.hasAttribute("data-loaded")`)
	tab.WaitFor(`document.querySelectorAll('#events tbody tr[data-type="conversion"]').length === 1`)
	var row string
	tab.Eval(`document.querySelector('#events tbody tr[data-type="conversion"]').innerText`, &row)
	if !strings.Contains(row, "49.00") {
		t.Errorf("the dashboard's sale row: %q", row)
	}
	if rec := tab.Record(); len(rec.Errors) > 0 {
		t.Errorf("the pages threw: %v", rec.Errors)
	}
}

// Outside development mode the demo routes do not exist, and / is the service's front page.
func TestNoShopOutsideDevelopment(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, path := range []string{"/demo/session", "/demo/signup", "/demo/buy"} {
		method := http.MethodPost
		if path == "/demo/session" {
			method = http.MethodGet
		}
		if res := env.Do(method, path, nil); res.Status != http.StatusNotFound {
			t.Errorf("%s %s: %d", method, path, res.Status)
		}
	}
	if home := env.Do(http.MethodGet, "/", nil); !strings.Contains(string(home.Body), "<h1>reftrack</h1>") {
		t.Errorf("front page: %s", home.Body)
	}
}
