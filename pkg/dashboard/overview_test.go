package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The brand's first hour, from the dashboard alone (issue 30, "Done when"): a new account makes a
// program, a partner and a link, connects Stripe; a visitor clicks, signs up and pays (the tracker, the
// brand's server and Stripe, with the key and the secret the dashboard gave and took); the overview
// shows the revenue, the commission and the partner. Along the way each form shows the API's own
// refusal beside its field, the partners' table sorts and downloads, and the page fits a phone.
func TestRunAProgramFromTheDashboard(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := open(t, env)
	a.signIn("maker@example.com")
	if !a.visible("#new-program") {
		t.Fatalf("a new account is not offered a program: %q", a.text("main"))
	}

	// A program: the domain the API refuses is refused beside its field, and nothing is made.
	a.fill(`#new-program [name="name"]`, "Acme Shop")
	a.fill(`#new-program [name="domain"]`, "acme.example.com/shop")
	a.fill(`#new-program [name="commission_rate"]`, "20")
	a.fill(`#new-program [name="cookie_window_days"]`, "30")
	a.fill(`#new-program [name="allowed_origins"]`, "https://acme.example.com")
	a.click(`#new-program [type="submit"]`)
	a.tab.WaitFor(`document.getElementById("np-err-domain").textContent !== ""`)
	if got := a.text("#np-err-domain"); got != "Site must be a host name such as shop.example.com" {
		t.Errorf("the domain's refusal: %q", got)
	}
	a.fill(`#new-program [name="domain"]`, "acme.example.com")
	a.click(`#new-program [type="submit"]`)
	a.tab.WaitFor(`!document.getElementById("created-key").hidden && /^\d+$/.test(document.body.getAttribute("data-loaded") || "")`)
	var key string
	a.tab.Eval(`document.getElementById("created-key-value").value`, &key)
	if !strings.HasPrefix(key, "rt_") && len(key) < 20 {
		t.Fatalf("the new key: %q", key)
	}
	if terms := a.text("#program-terms"); terms != "Pays 20% of a customer's first sale. Commissions are held 30 days, then approved automatically. Payouts of any amount." {
		t.Errorf("terms: %q", terms)
	}

	// A partner and a link for them, with its URL to copy. The view says what Add and Invite each do, and
	// Add's notice that nothing was sent.
	if how := a.text("#partners-how"); !strings.Contains(how, "Invite by email sends the partner a mail") || !strings.Contains(how, "Add a partner records one at once, approved, and sends nothing unless you tick the box") {
		t.Errorf("the Partners view explains: %q", how)
	}
	a.fill(`#add-partner [name="name"]`, "Pat Partner")
	a.fill(`#add-partner [name="email"]`, "pat@example.com")
	a.click(`#add-partner [type="submit"]`)
	a.tab.WaitFor(`Array.from(document.querySelectorAll("#partners tbody td")).some(function (td) { return td.textContent.indexOf("Pat Partner") === 0 })`)
	if got, want := a.text("#notice"), "Pat Partner is a partner of this program; no mail was sent. Create a referral link for them under Links; they can sign in to "+
		a.base+"/partners with pat@example.com to see it."; got != want {
		t.Errorf("after Add: %q, want %q", got, want)
	}
	a.tab.WaitFor(`document.querySelector('#add-link [name="partner_id"]').selectedOptions[0].textContent.indexOf("Pat Partner") === 0`)
	a.fill(`#add-link [name="short_link"]`, "pat")
	a.click(`#add-link [type="submit"]`)
	a.tab.WaitFor(`!!document.querySelector('#links tr[data-link="pat"] button.copy')`)
	referral := a.text(`#links tr[data-link="pat"] .url`)
	if u, err := url.Parse(referral); err != nil || u.Host != "acme.example.com" || u.Query().Get("aff") != "pat" {
		t.Fatalf("referral URL %q", referral)
	}

	// Stripe: the URL to give it, and its signing secret pasted back (a malformed one refused first).
	var hook string
	a.tab.Eval(`document.getElementById("processor-url").value`, &hook)
	a.fill(`#processor [name="webhook_secret"]`, "sk_live_oops")
	a.click(`#processor [type="submit"]`)
	a.tab.WaitFor(`document.querySelector("#processor .field-error").textContent !== ""`)
	const secret = "whsec_dashboardWalkThrough1"
	a.fill(`#processor [name="webhook_secret"]`, secret)
	a.click(`#processor [type="submit"]`)
	a.tab.WaitFor(`document.getElementById("processor-status").getAttribute("data-connected") === "true"`)

	// The visitor: a click from the partner's link (the tracker), a sign-up (the brand's server, with
	// the key the dashboard showed once) and a payment (Stripe, signed with the secret pasted).
	click := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": referral},
		"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36", "Origin", "https://acme.example.com")
	clickID, _ := click.JSON(t)["click_id"].(string)
	if click.Status != http.StatusOK || clickID == "" {
		t.Fatalf("click: %d %s", click.Status, click.Body)
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": clickID, "customer_key": "cus_acme_1", "email": "ada@example.com"},
		apitest.Bearer(key)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	// A headless browser's click (a bot by its User-Agent) is filtered, and the page says so.
	if res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": referral},
		"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"); res.Status != http.StatusOK {
		t.Fatalf("headless click: %d %s", res.Status, res.Body)
	}
	hookURL, err := url.Parse(hook)
	if err != nil {
		t.Fatal(err)
	}
	event, _ := json.Marshal(map[string]any{"id": "evt_1QxDashboardWalk", "object": "event", "api_version": "2025-03-31.basil",
		"created": time.Now().Unix(), "livemode": true, "pending_webhooks": 1, "type": "checkout.session.completed",
		"data": map[string]any{"object": map[string]any{"id": "cs_live_walk", "object": "checkout.session", "amount_total": 4900,
			"amount_subtotal": 4900, "currency": "usd", "customer": "cus_Q1walk", "livemode": true, "mode": "payment",
			"payment_intent": "pi_live_walk", "payment_status": "paid", "status": "complete",
			"metadata": map[string]any{"svc_click_id": clickID, "svc_customer_key": "cus_acme_1"}}}})
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: event, Secret: secret})
	if res := env.Do(http.MethodPost, hookURL.Path, event, "Stripe-Signature", signed.Header); res.Status != http.StatusOK || res.JSON(t)["outcome"] != "recorded" {
		t.Fatalf("Stripe's delivery to %s: %d %s", hookURL.Path, res.Status, res.Body)
	}

	// The same customer pays again (the brand's server): the program pays on the first sale only, and the
	// events table says who earned what, and why the second sale earned nothing.
	if res := env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "in_acme_2", "amount_cents": 2500, "customer_key": "cus_acme_1"},
		apitest.Bearer(key)...); res.Status != http.StatusOK {
		t.Fatalf("second sale: %d %s", res.Status, res.Body)
	}
	a.click("#filters button[type=submit]")
	// Read in the one expression waited for: a refresh redraws the table (opening the view refreshes it
	// too), and the annotations follow the rows a moment later.
	a.tab.WaitFor(`Array.from(document.querySelectorAll("#events tr[data-type=conversion] .earned")).map(function (s) { return s.textContent }).join("|") === ` +
		`" · no commission: this program pays on a customer's first referred sale only| · Pat Partner earned 9.80 USD (pending)"`)

	// The overview: the revenue, the commission (20 % of 49.00) and the partner, for this week.
	a.pick("#perf-period", "7d")
	a.tab.WaitFor(`document.querySelector('[data-kpi="revenue"] .value').textContent === "74.00 USD"`)
	for kpi, want := range map[string]string{"commission": "9.80 USD", "sales": "2", "leads": "1", "clicks": "1", "partners": "1",
		"conversion": "100.00 %", "lead-rate": "100.00 %"} {
		if got := a.text(fmt.Sprintf(`[data-kpi=%q] .value`, kpi)); got != want {
			t.Errorf("KPI %s = %q, want %q", kpi, got, want)
		}
	}
	if got := a.text(`[data-kpi="clicks"] .bots`); got != "+ 1 click from bots, filtered" {
		t.Errorf("the clicks' bots: %q", got)
	}
	if got := a.text("#bots-note"); !strings.HasPrefix(got, "Filtered as bots and not counted: 1 click in the period shown above") || !strings.Contains(got, "HeadlessChrome") {
		t.Errorf("the setup's note on bots: %q", got)
	}
	if got := a.text(`[data-kpi="revenue"] .change`); got != "new vs the previous 7 days" {
		t.Errorf("revenue's change: %q", got)
	}
	var row []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#perf-partners tbody tr:first-child td")).map(function (td) { return td.textContent })`, &row)
	if strings.Join(row, "|") != "Pat Partner|1|1|2|74.00 USD|9.80 USD|100.00 %" {
		t.Errorf("the partners' table: %q", row)
	}
	var ticks int
	a.tab.Eval(`document.querySelectorAll("#perf-money text.tick").length`, &ticks)
	if ticks < 3+7 {
		t.Errorf("the money chart has %d axis labels, want a scale and every day", ticks)
	}
	a.click(`#perf-partners th[data-sort="clicks"] button`)
	a.tab.WaitFor(`document.querySelector('#perf-partners th[data-sort="clicks"]').getAttribute("aria-sort") === "descending"`)
	csv := a.download("#perf-csv")
	if lines := strings.Split(strings.TrimSpace(string(csv.Body)), "\r\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "") ||
		!strings.Contains(lines[1], ",Pat Partner,pat@example.com,1,1,2,1,7400,980,USD,1,1,3700") || csv.Name != "partners-7d-USD.csv" {
		t.Errorf("CSV %s: %q", csv.Name, csv.Body)
	}
	a.tab.Eval(`document.getElementById("notice").hidden = true`, nil) // the sticky notice of the last action would cover the view
	a.screenshot("#performance-panel", "dashboard-overview")
	// Every view, each shown alone: no serious or critical accessibility finding.
	for _, v := range a.viewNames() {
		a.view(v)
		a.tab.Accessible("the "+v+" view with a sale, its partner and the settings", "header", "#views", `main [data-view="`+v+`"]`)
	}
	a.view("overview")

	// Settings: the API's refusal beside its field; then saved, and the terms say so.
	a.fill(`#settings [name="cookie_window_days"]`, "0")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("st-err-cookie_window_days").textContent !== ""`)
	if got := a.text("#st-err-cookie_window_days"); got != "Referral length must be between 1 and 3650" {
		t.Errorf("the window's refusal, in words: %q", got)
	}
	// The minimum payout is asked in major units: not an amount is refused before anything is sent.
	a.fill(`#settings [name="cookie_window_days"]`, "45")
	a.fill(`#settings [name="payout_minimum"]`, "12.345")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("st-err-payout_minimum_cents").textContent !== ""`)
	if got := a.text("#st-err-payout_minimum_cents"); got != "Minimum payout must be an amount such as 50.00" {
		t.Errorf("the minimum's refusal: %q", got)
	}
	a.fill(`#settings [name="payout_minimum"]`, "12.5")
	a.fill(`#settings [name="hold_days"]`, "14")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("program-terms").textContent.indexOf("Commissions are held 14 days") >= 0`)
	if got := a.text("#settings-notice"); got != "Settings saved: referral length, hold, minimum payout." {
		t.Errorf("saved: %q", got)
	}
	var shown string
	a.tab.Eval(`document.querySelector('#settings [name="payout_minimum"]').value`, &shown)
	if n := env.Count(`SELECT count(*) FROM programs WHERE payout_minimum_cents = 1250`); n != 1 || shown != "12.50" {
		t.Errorf("minimum payout stored in cents: %d programs at 1250, shown %q", n, shown)
	}
	a.tab.Eval(`document.getElementById("notice").hidden = true`, nil)
	a.screenshot("#settings-panel", "dashboard-settings")

	// The team: an analyst invited.
	a.fill(`#add-member [name="email"]`, "analyst@example.com")
	a.pick(`#add-member [name="role"]`, "analyst")
	a.click(`#add-member [type="submit"]`)
	a.tab.WaitFor(`!!document.querySelector('#members tr[data-member="analyst@example.com"]')`)
	// The refusals above were answers (400s the page showed), which the browser logs; nothing else may be.
	rec := a.tab.Record()
	if len(rec.Errors) > 0 {
		t.Errorf("page errors: %v", rec.Errors)
	}
	refused := 0
	for _, m := range rec.Console {
		if m.Type == "error" && m.Text == "Failed to load resource: the server responded with a status of 400 (Bad Request)" {
			refused++
		} else if m.Type == "error" {
			t.Errorf("console error: %s", m.Text)
		}
	}
	if refused != 3 {
		t.Errorf("%d refusals logged, want the 3 the test made", refused)
	}
	// No word or number broken across lines, at a desktop's width and a phone's, on every view.
	for _, width := range []int{1280, 390} {
		a.tab.Viewport(width, 900)
		for _, v := range a.viewNames() {
			a.view(v)
			a.noWordBroken(fmt.Sprintf("the %s view at %d px", v, width))
		}
	}
	for _, v := range a.viewNames() {
		a.view(v)
		a.fitsAPhone("the dashboard's " + v + " view")
		if v == "commissions" {
			a.queue("all")
			a.tab.Eval(`document.getElementById("notice").hidden = true`, nil)
			a.screenshot("#commissions-panel", "dashboard-phone-commissions") // the table as cards
		}
	}
	a.view("overview")
	// The header keeps to two lines (it wrapped to three, then four, as it grew).
	var header, line float64
	a.tab.Eval(`document.querySelector("header.top").getBoundingClientRect().height`, &header)
	a.tab.Eval(`parseFloat(getComputedStyle(document.body).lineHeight)`, &line)
	if header > 3*line+16 {
		t.Errorf("the header is %.0f px high at 390 px wide: more than two lines of %.0f px", header, line)
	}
	a.tab.Eval(`document.getElementById("notice").hidden = true`, nil)
	a.screenshot("", "dashboard-phone")
}
