package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// A new brand runs its program through the dashboard's views alone, as issue 44 asks: it signs in as a
// new account, creates a program, sets approval by hand, reads the tracker tag from Install and puts it
// on its site, invites a partner who accepts in the portal and makes a link; a visitor's click through the
// tag, the brand's lead, sale and partial refund (its backend, with the key the dashboard showed); the
// commission approved from To approve once its hold has ended, paid out and marked paid; and the brand's
// screens and the partner's show the same terms and the same totals.
func TestANewBrandRunsItsProgramThroughTheViews(t *testing.T) {
	t.Parallel()
	ledgerTurn <- struct{}{}
	t.Cleanup(func() { <-ledgerTurn })
	clock := apitest.NewClock(time.Now())
	env := apitest.Start(t, apitest.Options{Clock: clock.Now})

	// The brand's site: one page, with the tag pasted from the Install view once it is read.
	var mu sync.Mutex
	var tag string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><title>Newbrand</title><h1>Newbrand</h1>\n"+tag+"\n") //nolint:errcheck // a test page
	}))
	t.Cleanup(site.Close)

	// A new account creates its program.
	brand := open(t, env)
	brand.signIn("founder@newbrand.example")
	brand.fill(`#new-program [name="name"]`, "Newbrand")
	brand.fill(`#new-program [name="domain"]`, "newbrand.example.com")
	brand.fill(`#new-program [name="commission_rate"]`, "20")
	brand.fill(`#new-program [name="allowed_origins"]`, site.URL)
	brand.click(`#new-program [type="submit"]`)
	brand.tab.WaitFor(`!document.getElementById("created-key").hidden && /^\d+$/.test(document.body.getAttribute("data-loaded") || "")`)
	var key, programID string
	brand.tab.Eval(`document.getElementById("created-key-value").value`, &key)
	brand.tab.Eval(`document.body.getAttribute("data-loaded")`, &programID)
	brand.click("#created-key-hide")

	// Settings: commissions approved by hand (held 30 days, the default).
	brand.pick(`#settings [name="commission_approval"]`, "manual")
	brand.click("#settings-save")
	brand.tab.WaitFor(`document.getElementById("settings-notice").textContent.indexOf("Settings saved") === 0`)
	brand.view("overview")
	terms := brand.text("#program-terms")

	// Install: the tag, on the site.
	brand.view("install")
	mu.Lock()
	tag = brand.text("#install-tag")
	mu.Unlock()
	if !strings.Contains(tag, `data-svc-program-id="`+programID+`"`) {
		t.Fatalf("the tag %q does not name program %s", tag, programID)
	}

	// Partners: an invitation by email, which the partner accepts in the portal.
	brand.view("partners")
	brand.fill("#invite-email", "ada@partners.example")
	brand.fill("#invite-name", "Ada Lovelace")
	brand.click("#invite button[type=submit]")
	brand.tab.WaitFor(`!!document.querySelector('#invitations tr[data-status="sent"]')`)
	if err := env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	var invitation *url.URL
	for _, m := range env.Mailbox.Messages() {
		if m.To == "ada@partners.example" {
			if !strings.Contains(m.Text, "The terms: "+terms+"\n") {
				t.Errorf("the invitation mail does not state the dashboard's terms %q:\n%s", terms, m.Text)
			}
			invitation, _ = url.Parse(regexp.MustCompile(`https?://\S+/partners/invitations/\S+`).FindString(m.Text))
		}
	}
	if invitation == nil {
		t.Fatal("no invitation mail to the partner")
	}
	partner := open(t, env)
	partner.tab.Goto(partner.base + invitation.Path)
	partner.fill("#email", "ada@partners.example")
	partner.click("button[type=submit]")
	partner.tab.WaitFor(fmt.Sprintf(`location.pathname === %q && !!document.querySelector("form button")`, invitation.Path))
	if page := partner.text("body"); !strings.Contains(page, terms) {
		t.Errorf("the invitation's page does not state the terms %q: %q", terms, page)
	}
	partner.click("form button[type=submit]")
	partner.tab.WaitFor(fmt.Sprintf(`location.pathname === "/partners" && document.body.getAttribute("data-loaded") === %q`, programID))
	partner.fill("#link-code", "ada")
	partner.click("#new-link button[type=submit]")
	partner.tab.WaitFor(`!!document.querySelector('#links tr[data-link="ada"]')`)
	if got, want := partner.text("#program-terms"), "Newbrand (newbrand.example.com): "+terms; got != want {
		t.Errorf("the portal's terms %q, want the dashboard's %q", got, want)
	}

	// A visitor lands on the site through the partner's link: the tag records the click.
	visitor := open(t, env)
	visitor.tab.Goto(site.URL + "/?aff=ada")
	visitor.tab.WaitFor(`!!(window.svc && window.svc.getClickId && window.svc.getClickId())`)
	var clickID string
	visitor.tab.Eval(`svc.getClickId()`, &clickID)

	// The brand's backend: the sign-up, the sale and a partial refund, with the key the dashboard showed.
	for _, call := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/track/lead", map[string]any{"click_id": clickID, "customer_key": "cus_1"}},
		{"/api/v1/track/sale", map[string]any{"transaction_id": "order_1", "amount_cents": 12000, "currency": "USD", "customer_key": "cus_1"}},
		{"/api/v1/track/refund", map[string]any{"transaction_id": "order_1", "refund_amount_cents": 3000}},
	} {
		if res := env.Do(http.MethodPost, call.path, call.body, apitest.Bearer(key)...); res.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", call.path, res.Status, res.Body)
		}
	}
	// 20 % of 120.00, less the refund's share: 24.00 - 6.00.
	const revenue, earned = "90.00 USD", "18.00 USD"

	// To approve, once the hold has ended; then a payout, paid.
	clock.Advance(31 * 24 * time.Hour)
	brand.view("commissions")
	brand.tab.WaitFor(`document.querySelectorAll('#commissions[data-queue="to_approve"] tbody tr[data-commission]').length === 1`)
	row := `#commissions tbody tr[data-commission]`
	if got := brand.text(row + " button.approve"); got != "Approve" {
		t.Errorf("the commission out of its hold offers %q", got)
	}
	brand.click(row + " button.approve")
	brand.waitText("#commissions tbody", "Nothing to approve: no pending commission has come out of its hold.")
	brand.view("payouts")
	brand.click("#p-create-button")
	brand.tab.WaitFor(`document.querySelectorAll("#payouts tbody tr[data-payout]").length === 1`)
	payout := `#payouts tbody tr[data-payout]`
	brand.click(payout + " button.paid")
	form := payout + " + tr.form-row form"
	brand.fill(form+" input[name=external_reference]", "PAYPAL-1")
	brand.click(form + " button[type=submit]")
	brand.waitStatus(payout, "paid")

	// The same terms and totals on both sides: the brand's overview (all time) and the partner's page, the
	// partner's portal (90 days).
	brand.view("overview")
	brand.pick("#perf-period", "all")
	brand.tab.WaitFor(fmt.Sprintf(`(document.querySelector('#kpis [data-kpi="revenue"] .value') || {}).textContent === %q`, revenue))
	if got := brand.text(`#kpis [data-kpi="commission"] .value`); got != earned {
		t.Errorf("the brand's commission %q, want %s", got, earned)
	}
	// Counted events, as the brand's overview counts them (Chromium's headless visitor is a bot, whose
	// click both sides leave out).
	count := func(kpi, one, many string) string {
		n := brand.text(`#kpis [data-kpi="` + kpi + `"] .value`)
		if n == "1" {
			return n + " " + one
		}
		return n + " " + many
	}
	events := count("clicks", "click", "clicks") + ", " + count("leads", "lead", "leads") + ", " + count("sales", "sale", "sales")
	if !strings.HasSuffix(events, "1 lead, 1 sale") {
		t.Errorf("the brand's overview counts %s", events)
	}
	brand.view("partners")
	brand.click(`#partners a.partner-link`)
	brand.tab.WaitFor(`document.getElementById("partner-panel").hasAttribute("data-partner") && !document.getElementById("partner-panel").hidden`)
	if got := brand.text("#pp-terms"); got != terms {
		t.Errorf("the partner's page says the terms %q, want %q", got, terms)
	}
	brandMoney := rowsOf(brand, "#pp-balances")
	if len(brandMoney) != 1 || brandMoney[0][4] != earned {
		t.Errorf("the brand's page of the partner: money %q, want %s paid", brandMoney, earned)
	}

	// A month on, the partner's session has ended: they sign in again.
	partner.tab.Goto(partner.base + "/partners?program=" + programID)
	var path string
	partner.tab.Eval("location.pathname", &path)
	if path == "/login" {
		partner.fill("#email", "ada@partners.example")
		partner.click("button[type=submit]")
	}
	partner.tab.WaitFor(fmt.Sprintf(`location.pathname === "/partners" && document.body.getAttribute("data-loaded") === %q`, programID))
	partner.click(`button[data-days="90"]`)
	partner.tab.WaitFor(`document.getElementById("stats-totals").textContent.indexOf("in 90 days") >= 0`)
	if got, want := partner.text("#stats-totals"), events+" in 90 days; commission "+earned+"."; got != want {
		t.Errorf("the portal's totals %q, want the brand's %q", got, want)
	}
	portalMoney := rowsOf(partner, "#balances")
	if len(portalMoney) != 1 || fmt.Sprint(portalMoney[0]) != fmt.Sprint(brandMoney[0]) {
		t.Errorf("the portal's balance %q, the brand's %q", portalMoney, brandMoney)
	}
	if got := partner.text("#commissions tbody"); !strings.Contains(got, earned) || !strings.Contains(got, "paid") {
		t.Errorf("the portal's commission %q", got)
	}
	brand.noPageErrors()
	partner.noPageErrors()
}
