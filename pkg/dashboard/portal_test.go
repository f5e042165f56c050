package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The partner portal (docs/rules.md#partners), walked in Chromium against the real server: the brand invites
// by email, the mail is read at /dev/mail, the partner signs in through its link and accepts, makes a link of
// their own, and watches a click, a lead and a sale through it become a commission pending, approved by the
// brand, then paid by the brand's payout; they give their payout details and download their payouts.

// portalReload opens the portal on programID and waits until its views are shown.
func (a *app) portalReload(programID int64) {
	a.t.Helper()
	if status := a.tab.Goto(fmt.Sprintf("%s/partners?program=%d", a.base, programID)); status != http.StatusOK {
		a.t.Fatalf("GET /partners: %d", status)
	}
	a.tab.WaitFor(fmt.Sprintf(`document.body.getAttribute("data-loaded") === "%d"`, programID))
}

// attr is an attribute of the element selector matches ("" when there is none).
func (a *app) attr(selector, name string) string {
	a.t.Helper()
	var s string
	a.tab.Eval(fmt.Sprintf(`(function () { var e = document.querySelector(%q); return e ? e.getAttribute(%q) || "" : "" })()`, selector, name), &s)
	return s
}

func TestPartnerPortalWalkThrough(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Portal shop", map[string]any{"commission_approval": "manual", "hold_days": 0, "enrollment": "open"})

	// The brand invites a partner; the courier sends the mail into the development mailbox.
	inv := s.owner(http.MethodPost, s.base+"/invitations", map[string]any{"email": "ada@example.com", "name": "Ada Lovelace",
		"message": "We would love to have you."}, http.StatusCreated)["data"].([]any)[0].(map[string]any)
	if inv["status"] != "sent" {
		t.Fatalf("invitation = %v", inv)
	}
	if err := s.env.Mail.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}

	a := open(t, s.env)
	if status := a.tab.Goto(a.base + "/dev/mail"); status != http.StatusOK {
		t.Fatalf("GET /dev/mail: %d", status)
	}
	if to := a.text("article .to"); to != "ada@example.com" {
		t.Fatalf("the mailbox's newest mail is to %q: %s", to, a.text("body"))
	}
	if body := a.text("article pre"); !strings.Contains(body, "We would love to have you.") || !strings.Contains(body, "Portal shop") {
		t.Errorf("the mail reads %q", body)
	}
	var href string
	a.tab.Eval(`document.querySelector("article pre a").href`, &href)
	link, err := url.Parse(href)
	if err != nil || !strings.HasPrefix(link.Path, "/partners/invitations/") {
		t.Fatalf("the mail's link is %q", href)
	}

	// The link (through the checking proxy) sends the signed-out person to sign in, then back to accept.
	a.tab.Goto(a.base + link.Path)
	var path string
	a.tab.Eval("location.pathname", &path)
	if path != "/login" {
		t.Fatalf("signed out, the invitation went to %s, not the login page", path)
	}
	a.fill("#email", "ada@example.com")
	a.click("button[type=submit]")
	a.tab.WaitFor(fmt.Sprintf(`location.pathname === %q && !!document.querySelector("form button")`, link.Path))
	if msg := a.text("body"); !strings.Contains(msg, "Portal shop") || !strings.Contains(msg, "ada@example.com") {
		t.Errorf("the invitation page reads %q", msg)
	}
	a.click("form button[type=submit]")
	a.tab.WaitFor(fmt.Sprintf(`location.pathname === "/partners" && document.body.getAttribute("data-loaded") === "%d"`, s.r.ProgramID))
	if n := s.env.Count(`SELECT count(*) FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id
		WHERE pp.program_id = $1 AND pa.email = 'ada@example.com' AND pp.status = 'approved'`, s.r.ProgramID); n != 1 {
		t.Fatal("accepting did not approve the enrollment")
	}

	// A link of their own: the code's rule is said before typing; a code against it gets the server's
	// answer (not the browser's), and nothing is made.
	if got := a.text("#link-code-rule"); got != "3 to 32 characters: lower-case letters a–z, digits 0–9 and -." {
		t.Errorf("the code's rule reads %q", got)
	}
	a.fill("#link-code", "ada reviews")
	a.click("#new-link button[type=submit]")
	a.tab.WaitFor(`document.querySelector("#notice").innerText === "code must be 3 to 32 characters of a-z, 0-9 and -"`)
	a.fill("#link-code", "ada-reviews")
	a.click("#new-link button[type=submit]")
	a.tab.WaitFor(`!!document.querySelector('#links tr[data-link="ada-reviews"]')`)
	var referral string
	a.tab.Eval(`document.querySelector('#links tr[data-link="ada-reviews"] td.url').innerText`, &referral)
	if !strings.HasSuffix(referral, "?aff=ada-reviews") {
		t.Fatalf("the new link's referral URL is %q", referral)
	}
	if got := a.attr(`#links tr[data-link="ada-reviews"] button.copy`, "data-text"); got != referral {
		t.Errorf("the link's Copy copies %q, want %q", got, referral)
	}
	a.click(`#links tr[data-link="ada-reviews"] button.copy`)
	a.tab.WaitFor(`document.querySelector('#links tr[data-link="ada-reviews"] button.copy').textContent === "Copied" || document.querySelector("#notice").innerText.indexOf("Copy it by hand") === 0`)

	// A click, a lead and a sale through it: the commission is pending (manual approval), its customer masked.
	commissionID := s.sale("portal-1", 5000, "USD", referral)
	c := s.owner(http.MethodGet, fmt.Sprintf("/api/v1/commissions/%d", commissionID), nil, http.StatusOK)["data"].(map[string]any)
	payable := fmt.Sprintf("%.2f USD", c["payable_cents"].(float64)/100)
	row := fmt.Sprintf(`#commissions tr[data-commission="%d"]`, commissionID)
	a.portalReload(s.r.ProgramID)
	if got := a.attr(row, "data-status"); got != "pending" {
		t.Fatalf("the commission shows %q, want pending", got)
	}
	if text := a.text(row); !strings.Contains(text, "***-1") || strings.Contains(text, "cust-portal-1") || !strings.Contains(text, payable) {
		t.Errorf("the commission's row reads %q (want the customer masked and %s)", text, payable)
	}
	if got := a.attr("#stats-totals", "data-totals"); got != "1 1 1" {
		t.Errorf("stats totals %q, want 1 click, 1 lead, 1 sale", got)
	}
	if a.count("#chart rect") != 3*30 {
		t.Errorf("the chart has %d bars, want 3 a day for 30 days", a.count("#chart rect"))
	}

	// Approved by the brand, then paid out.
	s.owner(http.MethodPost, fmt.Sprintf("/api/v1/commissions/%d/approve", commissionID), nil, http.StatusOK)
	a.portalReload(s.r.ProgramID)
	if got := a.attr(row, "data-status"); got != "approved" {
		t.Fatalf("after approval the commission shows %q", got)
	}
	if text := a.text("#balances tbody"); !strings.Contains(text, payable) {
		t.Errorf("balances read %q, want %s approved", text, payable)
	}
	payout := s.owner(http.MethodPost, s.base+"/payouts", map[string]any{}, http.StatusCreated)["data"].([]any)[0].(map[string]any)
	s.owner(http.MethodPost, fmt.Sprintf("/api/v1/payouts/%v/paid", payout["id"]), map[string]any{"external_reference": "pp_portal_1"}, http.StatusOK)
	a.portalReload(s.r.ProgramID)
	if got := a.attr(row, "data-status"); got != "paid" {
		t.Fatalf("after the payout the commission shows %q", got)
	}
	if got := a.attr(fmt.Sprintf(`#payouts tr[data-payout="%v"]`, payout["id"]), "data-status"); got != "paid" {
		t.Errorf("the payout shows %q", got)
	}
	d := a.download("#payouts-csv")
	if want := fmt.Sprintf("%v,%s,USD,1,paid,pp_portal_1,", payout["id"], strings.TrimSuffix(payable, " USD")); !strings.Contains(string(d.Body), want) ||
		!strings.HasPrefix(string(d.Body), "payout_id,amount,currency,commission_count,status,external_reference,created_at,paid_at\r\n") {
		t.Errorf("payouts.csv = %q, want a row with %q", d.Body, want)
	}

	// Payout details, stored sealed.
	a.fill("#details-paypal", "ada.pay@example.com")
	a.click("#details button[type=submit]")
	a.tab.WaitFor(`document.querySelector("#details-saved").innerText === "Saved"`)
	a.tab.Accessible("the partner portal with a paid commission and payout details saved")
	a.tabFrom("#details-paypal", "#details button[type=submit]")
	if n := s.env.Count(`SELECT count(*) FROM partners WHERE email = 'ada@example.com' AND payout_method = 'paypal'
		AND payout_details IS NOT NULL AND position(convert_to('ada.pay', 'UTF8') in payout_details) = 0`); n != 1 {
		t.Error("the payout details are not stored sealed")
	}
	var back struct {
		Data struct {
			PaypalEmail string `json:"paypal_email"`
		}
	}
	a.tab.Eval(fmt.Sprintf(`fetch("/api/v1/partner/programs/%d/payout-details", {credentials: "same-origin"}).then(function (r) { return r.json() })`,
		s.r.ProgramID), &back)
	if back.Data.PaypalEmail != "ada.pay@example.com" {
		t.Errorf("the details read back %q", back.Data.PaypalEmail)
	}
	// The brand's payouts file pays them there.
	res := s.env.Do(http.MethodGet, s.base+"/payouts.csv?status=paid", nil, apitest.Bearer(s.r.AccountToken)...)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), ",ada@example.com,ada.pay@example.com,") {
		t.Errorf("the brand's payouts.csv = %d %q, want the PayPal address as payout_email", res.Status, res.Body)
	}
	if dir := os.Getenv("REFTRACK_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "partner-portal.png"), a.tab.Screenshot(""), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// On a phone (390 CSS pixels wide) the portal does not scroll sideways; at a desktop's width and a
	// phone's no word or number is set on two lines.
	a.noWordBroken("the partner portal at 1280 px")
	a.fitsAPhone("the partner portal")
	a.noWordBroken("the partner portal at 390 px")
	a.noPageErrorsBut("the server responded with a status of 400") // the refused link code, which the browser logs

	// The program's public page, where a signed-in person applies.
	slug := s.owner(http.MethodGet, s.base, nil, http.StatusOK)["data"].(map[string]any)["slug"].(string)
	if status := a.tab.Goto(a.base + "/p/" + slug); status != http.StatusOK {
		t.Fatalf("GET /p/%s: %d", slug, status)
	}
	a.tab.Accessible("the application page")
}

// The brand's side of partners in the dashboard: invite by the form, resend and cancel the invitation,
// approve an application, reject another with its reason, ban an approved partner (asked first): their
// link goes off and their pending commission is rejected. (What each role sees: TestRolesOnThePage.)
func TestPartnersOnTheDashboard(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Partner view shop", map[string]any{"commission_approval": "manual"})
	a := s.open(s.r.AccountEmail)
	a.view("partners")
	a.tab.WaitFor(`!document.querySelector("#invite").hidden`)

	// Invite, resend, cancel.
	a.fill("#invite-email", "grace@example.com")
	a.fill("#invite-name", "Grace Hopper")
	a.click("#invite button[type=submit]")
	a.tab.WaitFor(`!!document.querySelector('#invitations tr[data-status="sent"]')`)
	invRow := `#invitations tr[data-status="sent"]`
	if text := a.text(invRow); !strings.Contains(text, "grace@example.com") || !strings.Contains(text, "1 time") {
		t.Fatalf("the invitation reads %q", text)
	}
	if text := a.text(`#partners tbody`); !strings.Contains(text, "Grace Hopper <grace@example.com>") || !strings.Contains(text, "invited") {
		t.Errorf("the partners read %q", text)
	}
	a.click(invRow + ` button[data-action="resend"]`)
	a.tab.WaitFor(`(document.querySelector('#invitations tr[data-status="sent"]') || {}).innerText.indexOf("2 times") >= 0`)
	a.click(invRow + ` button[data-action="cancel"]`)
	a.tab.WaitFor(`!!document.querySelector('#invitations tr[data-status="canceled"]')`)
	if n := s.env.Count(`SELECT count(*) FROM mail_outbox WHERE to_address = 'grace@example.com'`); n != 2 {
		t.Errorf("%d mails to grace, want 2 (sent, sent again)", n)
	}

	// Add, with the box ticked: approved at once and mailed the terms and the portal's address.
	a.fill(`#add-partner [name="name"]`, "Sam Lee")
	a.fill(`#add-partner [name="email"]`, "sam@example.com")
	a.click(`#add-partner [name="send_portal_invitation"]`)
	a.click(`#add-partner [type="submit"]`)
	a.tab.WaitFor(`document.getElementById("notice").textContent.indexOf("Sam Lee is a partner") === 0`)
	if got, want := a.text("#notice"), "Sam Lee is a partner of this program, and was mailed the terms and the portal's address ("+a.base+
		"/partners). Create a referral link for them under Links."; got != want {
		t.Errorf("after Add with the mail: %q, want %q", got, want)
	}
	if n := s.env.Count(`SELECT count(*) FROM mail_outbox WHERE to_address = 'sam@example.com' AND subject LIKE '% added you to its partner program'`); n != 1 {
		t.Errorf("%d mails to sam, want 1", n)
	}
	var ticked bool
	a.tab.Eval(`document.querySelector('#add-partner [name="send_portal_invitation"]').checked`, &ticked)
	if ticked {
		t.Error("the box stays ticked for the next partner")
	}

	// Two applications (made pending as the public page would), one approved, one rejected with its reason.
	applicant := func(name, email string) int64 {
		id, _ := s.partner(name, email)
		if _, err := s.env.DB.Exec(`UPDATE partner_programs SET status = 'pending' WHERE partner_id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	ann, bob := applicant("Ann", "ann@example.com"), applicant("Bob", "bob@example.com")
	a.portalDashboardReload()
	row := func(id int64) string { return fmt.Sprintf(`#partners tr[data-partner="%d"]`, id) }
	a.click(row(ann) + ` button[data-action="approve"]`)
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.status === "approved"`, row(ann)))
	a.fill(row(bob)+" input.reason", "Not our audience")
	a.click(row(bob) + ` button[data-action="reject"]`)
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.status === "rejected"`, row(bob)))
	if text := a.text(row(bob)); !strings.Contains(text, "Not our audience") {
		t.Errorf("the rejected partner's row reads %q", text)
	}

	// Ban the seeded partner, who has a pending commission: asked first, then links off and commission rejected.
	commission := s.sale("view-1", 5000, "USD", "")
	a.fill(row(s.r.PartnerID)+" input.reason", "Cookie stuffing")
	a.click(row(s.r.PartnerID) + ` button[data-action="ban"]`)
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.status === "banned"`, row(s.r.PartnerID)))
	if d := a.tab.Record().Dialogs; len(d) != 1 || !strings.HasPrefix(d[0], "Ban Seed partner?") {
		t.Errorf("dialogs = %q", d)
	}
	c := s.owner(http.MethodGet, fmt.Sprintf("/api/v1/commissions/%d", commission), nil, http.StatusOK)["data"].(map[string]any)
	if c["status"] != "rejected" || c["rejected_reason"] != "partner banned" {
		t.Errorf("the banned partner's commission is %v (%v)", c["status"], c["rejected_reason"])
	}
	a.tab.WaitFor(`Array.from(document.querySelectorAll("#links tbody tr")).some(function (tr) { return tr.innerText.indexOf("Seed partner") >= 0 && tr.innerText.indexOf(" off") >= 0 })`)
	a.noPageErrors()
}

// portalDashboardReload reloads the dashboard and waits until the program's views are loaded again.
func (a *app) portalDashboardReload() {
	a.t.Helper()
	a.tab.Eval(`document.body.removeAttribute("data-loaded"); location.reload(); true`, nil)
	a.tab.WaitFor(`document.body.hasAttribute("data-loaded")`)
}

// Issue 30's first hour, in the page: counts in words ("1 lead", not "1 leads"), the readiness state in
// words (not live_verified), sales called sales, a From date after the To date refused with a notice
// rather than an empty table under a stale chart, the notice kept in view however far down the page, the
// program's terms in words, and no sideways scroll on a phone.
func TestDashboardSaysWhatItMeans(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Words shop", nil)
	s.sale("words-1", 5000, "USD", "")
	a := s.open(s.r.AccountEmail)
	a.tab.WaitFor(`document.querySelector("#counts-24h").innerText !== ""`)
	if got := a.text("#counts-24h"); got != "1 click, 1 lead, 1 sale" {
		t.Errorf("last 24 hours: %q", got)
	}
	a.tab.WaitFor(`document.querySelector("#program-terms").innerText !== ""`)
	if got, want := a.text("#program-terms"), "Pays 20% of a customer's first sale. Commissions are held 30 days, then approved automatically. Payouts of any amount."; got != want {
		t.Errorf("terms: %q, want %q", got, want)
	}
	if got := a.text("#readiness-state"); strings.Contains(got, "_") || got == "" {
		t.Errorf("readiness state shown as %q (%s)", got, a.attr("#readiness-state", "data-state"))
	}
	if got := a.text(`#f-type option[value="conversion"]`); got != "Sales" {
		t.Errorf("the type filter says %q for sales", got)
	}
	a.tab.WaitFor(`!!document.querySelector('#events tbody tr[data-type="conversion"]')`)
	if got := a.text(`#events tbody tr[data-type="conversion"] td.type`); got != "sale" {
		t.Errorf("the events table calls a sale %q", got)
	}
	rows := a.count("#events tbody tr")
	a.fill("#f-from", "2026-03-10")
	a.fill("#f-to", "2026-03-01")
	a.click(`#filters button[type=submit]`)
	a.tab.WaitFor(`document.querySelector("#notice").innerText.indexOf("From date must be on or before the To date") >= 0`)
	if a.count("#events tbody tr") != rows {
		t.Errorf("the events table changed (%d rows, was %d) for a refused range", a.count("#events tbody tr"), rows)
	}
	var position string
	a.tab.Eval(`getComputedStyle(document.querySelector("#notice")).position`, &position)
	if position != "sticky" {
		t.Errorf("the notice is %s, not kept in view", position)
	}
	// On a phone (390 CSS pixels wide) the dashboard does not scroll sideways: wide tables scroll inside
	// their panels.
	a.fitsAPhone("the dashboard")
	a.noPageErrors()
}

// noWordBroken fails the test for each word or number of the main part of the page that is set on more than
// one line. Allowed: a URL and an identifier of 24 characters or more (click ids, tokens: longer than a
// narrow column, they have nowhere else to break), and a hyphenated word (User-Agent), which breaks at a
// hyphen; a number or a date may not break.
func (a *app) noWordBroken(what string) {
	a.t.Helper()
	var broken []string
	a.tab.Eval(`(function () { var out = [], w = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
		for (var n = w.nextNode(); n; n = w.nextNode()) {
			if (!n.parentElement || !n.parentElement.getClientRects().length || n.parentElement.closest("pre")) continue;
			var re = /\S+/g, m;
			while ((m = re.exec(n.data))) {
				var word = m[0];
				if (word.indexOf("://") >= 0 || word.length >= 24 || (word.indexOf("-") > 0 && !/^[\d\-:.,()]+$/.test(word))) continue;
				var r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
				if (Array.from(r.getClientRects()).filter(function (x) { return x.width > 0 }).length > 1) out.push(m[0]);
			}
		}
		return out.slice(0, 12) })()`, &broken)
	if len(broken) > 0 {
		a.t.Errorf("%s: words broken across lines: %q", what, broken)
	}
}

// fitsAPhone narrows the tab to a phone's 390 CSS pixels and fails the test when the page is wider.
func (a *app) fitsAPhone(what string) {
	a.t.Helper()
	a.tab.Viewport(390, 844)
	var width int
	a.tab.Eval(`document.documentElement.scrollWidth`, &width)
	if width > 390 {
		a.t.Errorf("%s is %d px wide at 390", what, width)
	}
	// Element boxes, not only the page's width: a table wider than its panel scrolled inside it, where
	// the page's width did not show it. (Code boxes scroll inside themselves, by design.)
	var wide []string
	a.tab.Eval(`Array.from(document.querySelectorAll("body *")).filter(function (e) {
		if (!e.getClientRects().length || (e.closest("pre.code") && e.tagName !== "PRE") || e.closest(".offscreen")) return false;
		var r = e.getBoundingClientRect(); return r.right > window.innerWidth + 0.5 || r.left < -0.5;
	}).slice(0, 8).map(function (e) { return e.tagName + "#" + e.id + "." + e.className + " " + Math.round(e.getBoundingClientRect().right) })`, &wide)
	if len(wide) > 0 {
		a.t.Errorf("%s at 390 px: elements wider than the screen: %v", what, wide)
	}
}
