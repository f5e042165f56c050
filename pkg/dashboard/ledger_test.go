package dashboard_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The Commissions and Payouts views (docs/rules.md#the-ledger-and-payouts), driven in Chromium against the
// real server. Sales come in through the tracking routes with the program's key; everything a member does,
// the test does by clicking in the page.

// shop is a program on a server whose clock the test moves (the ledger's holds are read at the server's
// clock), and the program's owner as the API knows it, for what happens outside the page.
type shop struct {
	t     *testing.T
	env   *apitest.Env
	clock *apitest.Clock
	r     seed.Result
	name  string
	base  string // the program's API path
}

// ledgerTurn lets two of this file's tests at a time run: each signs in and reloads its views many times,
// and beside the other browser tests, on a loaded machine (make test runs packages side by side on two
// cores), all of them at once starved each other's page waits (15 s sign-ins).
var ledgerTurn = make(chan struct{}, 2)

// newShop seeds a program named name with settings (a PATCH body); its attribution window is long, so
// that sales after the clock moved on are still attributed. The test waits for its turn first.
func newShop(t *testing.T, name string, settings map[string]any) *shop {
	t.Helper()
	ledgerTurn <- struct{}{}
	t.Cleanup(func() { <-ledgerTurn })
	clock := apitest.NewClock(time.Now())
	env := apitest.Start(t, apitest.Options{Clock: clock.Now})
	r := env.Seed(seed.Options{ProgramName: name})
	s := &shop{t: t, env: env, clock: clock, r: r, name: name, base: fmt.Sprintf("/api/v1/programs/%d", r.ProgramID)}
	body := map[string]any{"attribution_window_days": 3650}
	maps.Copy(body, settings)
	s.owner(http.MethodPatch, s.base, body, http.StatusOK)
	return s
}

// owner sends a request with the owner's login token and checks its status.
func (s *shop) owner(method, path string, body any, status int) map[string]any {
	s.t.Helper()
	res := s.env.Do(method, path, body, apitest.Bearer(s.r.AccountToken)...)
	if res.Status != status {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, res.Status, status, res.Body)
	}
	return res.JSON(s.t)
}

// partner adds a partner with a referral link and returns its id and referral URL.
func (s *shop) partner(name, email string) (int64, string) {
	s.t.Helper()
	p := s.owner(http.MethodPost, s.base+"/partners", map[string]any{"name": name, "email": email}, http.StatusCreated)["data"].(map[string]any)
	id := int64(p["id"].(float64))
	l := s.owner(http.MethodPost, s.base+"/links", map[string]any{"partner_id": id}, http.StatusCreated)["data"].(map[string]any)
	return id, l["referral_url"].(string)
}

// sale records a sale as a shop does: a click on the referral URL (the seeded partner's when ""), the
// customer's lead and the sale, both with the program key. It returns the sale's commission id.
func (s *shop) sale(txn string, amountCents int64, currency, referralURL string) int64 {
	s.t.Helper()
	if referralURL == "" {
		referralURL = s.r.AffiliateURL
	}
	click := s.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": referralURL}, "User-Agent", "ua-"+txn)
	clickID, _ := click.JSON(s.t)["click_id"].(string)
	if click.Status != http.StatusOK || clickID == "" {
		s.t.Fatalf("click: %d %s", click.Status, click.Body)
	}
	key := apitest.Bearer(s.r.APIKey)
	if res := s.env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": clickID, "customer_key": "cust-" + txn}, key...); res.Status != http.StatusOK {
		s.t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	res := s.env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": txn, "amount_cents": amountCents, "currency": currency,
		"customer_key": "cust-" + txn}, key...)
	c, ok := res.JSON(s.t)["commission"].(map[string]any)
	if res.Status != http.StatusOK || !ok {
		s.t.Fatalf("sale %s: %d %s", txn, res.Status, res.Body)
	}
	return int64(c["id"].(float64))
}

// payouts are the program's payouts of status as the API answers them, newest first.
func (s *shop) payouts(status string) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for _, p := range s.owner(http.MethodGet, s.base+"/payouts?status="+status, nil, http.StatusOK)["data"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// audited is the audit log's actions on target by actor, oldest first.
func (s *shop) audited(target, actor string) []string {
	s.t.Helper()
	var actions []string
	if err := s.env.DB.Select(&actions, `SELECT action FROM audit_log WHERE target = $1 AND actor = $2 ORDER BY id`, target, actor); err != nil {
		s.t.Fatal(err)
	}
	return actions
}

// open signs a tab in as email and waits for the ledger's views.
func (s *shop) open(email string) *app {
	s.t.Helper()
	a := open(s.t, s.env)
	a.signIn(email)
	a.view("commissions")
	a.queue("all") // the tests read every commission; TestToApproveIsTheInbox reads the queues
	return a
}

// queue shows one of the commissions' queues (to_approve, in_hold, all) and waits for its rows.
func (a *app) queue(name string) {
	a.t.Helper()
	a.click(fmt.Sprintf(`#c-queues button[data-queue=%q]`, name))
	a.tab.WaitFor(fmt.Sprintf(`document.querySelector("#commissions").dataset.queue === %q && %s`, name, idle))
}

func commissionRow(id int64) string { return fmt.Sprintf(`#commissions tr[data-commission="%d"]`, id) }
func payoutRow(id any) string       { return fmt.Sprintf(`#payouts tr[data-payout="%v"]`, id) }

// idle is true in the page when no action of the ledger's views is under way: an action marks its view
// aria-busy until its answer is shown and both views are reloaded.
const idle = `!document.querySelector("main [aria-busy]")`

// waitStatus waits until the row selector matches shows status (its data-status) and the views are
// idle.
func (a *app) waitStatus(row, status string) {
	a.t.Helper()
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector(%q) || {dataset: {}}).dataset.status === %q && %s`, row, status, idle))
}

// waitText waits until the element selector matches reads exactly text and the views are idle.
func (a *app) waitText(selector, text string) {
	a.t.Helper()
	a.on(selector)
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText === %q && %s`, selector, text, idle))
}

// commissionIDs are the ids of the commissions table's rows, top to bottom.
func (a *app) commissionIDs() []int64 {
	a.t.Helper()
	var ids []int64
	a.tab.Eval(`Array.from(document.querySelectorAll("#commissions tbody tr[data-commission]")).map(function (tr) { return Number(tr.dataset.commission) })`, &ids)
	return ids
}

// balance is the balances table's row of a partner and currency, bucket by bucket as shown.
func (a *app) balance(partnerID int64, currency string) map[string]string {
	a.t.Helper()
	out := map[string]string{}
	a.tab.Eval(fmt.Sprintf(`(function () { var out = {}; document.querySelectorAll('#balances tr[data-balance="%d %s"] td[data-bucket]').forEach(function (td) {
		out[td.dataset.bucket] = td.innerText }); return out })()`, partnerID, currency), &out)
	return out
}

func buckets(pending, approved, inPayout, paid, owed string) map[string]string {
	return map[string]string{"pending": pending, "approved": approved, "in_payout": inPayout, "paid": paid, "clawback_owed": owed}
}

func (a *app) count(selector string) int {
	a.t.Helper()
	var n int
	a.tab.Eval(fmt.Sprintf(`document.querySelectorAll(%q).length`, selector), &n)
	return n
}

// A sale's commission from the sale route to a paid payout, through the page: the commissions pending
// in their hold (manual approval), one approved, two approved at once, one rejected with its reason;
// the filters; a payout created, both exports downloaded by the browser with the session cookie, byte for
// byte, and the payout marked paid; then a payout that fails, returning its commission to approved; a
// form submitted twice acting once (the Idempotency-Key); and the server's 409 shown in the page when
// the page was out of date.
func TestCommissionsToAPaidPayout(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Ledger shop", map[string]any{"commission_approval": "manual"}) // hold 30 days
	ada, adaURL := s.partner("Ada's Reviews", "ada@example.com")
	seedPartner := s.r.PartnerID
	c1 := s.sale("inv-1", 6250, "USD", "")     // 20%: 12.50
	c2 := s.sale("inv-2", 5000, "USD", "")     // 10.00
	c3 := s.sale("inv-3", 2535, "USD", "")     // 5.07
	c4 := s.sale("inv-4", 10000, "USD", "")    // 20.00
	c5 := s.sale("inv-5", 4000, "EUR", adaURL) // 8.00 EUR

	a := s.open(s.r.AccountEmail)
	if got := a.commissionIDs(); !slices.Equal(got, []int64{c5, c4, c3, c2, c1}) {
		t.Fatalf("commissions shown = %v, want newest first", got)
	}
	for id, want := range map[int64]string{c1: "12.50 USD", c3: "5.07 USD", c5: "8.00 EUR"} {
		if got := a.text(commissionRow(id) + " td.amount"); got != want {
			t.Errorf("commission %d's amount = %q, want %q", id, got, want)
		}
	}
	row1 := a.text(commissionRow(c1))
	if !strings.Contains(row1, "Seed partner") || !strings.Contains(row1, "inv-1") || !strings.Contains(row1, "pending payable from ") {
		t.Errorf("commission row = %q", row1)
	}
	if got := a.text(commissionRow(c5) + " td:nth-child(4)"); got != "Ada's Reviews" {
		t.Errorf("partner = %q", got)
	}
	if got := a.balance(seedPartner, "USD"); !maps.Equal(got, buckets("47.57 USD", "0.00 USD", "0.00 USD", "0.00 USD", "0.00 USD")) {
		t.Errorf("balance in hold = %v", got)
	}
	if got := a.text("#payouts tbody"); got != "No payouts yet." {
		t.Errorf("payouts = %q", got)
	}

	// One approved by its button, before its hold ends: the button says so, and so does the notice.
	if got := a.text(commissionRow(c1) + " button.approve"); got != "Approve early" {
		t.Errorf("the approve button of a commission in its hold reads %q", got)
	}
	a.click(commissionRow(c1) + " button.approve")
	a.waitStatus(commissionRow(c1), "approved")
	a.waitText("#commissions-notice", fmt.Sprintf("Commission %d approved before its hold ended: the next payout pays it.", c1))
	if n := s.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND hold_released_at IS NOT NULL`, c1); n != 1 {
		t.Error("approving early did not release the hold")
	}
	if a.count(commissionRow(c1)+" button.approve") != 0 || a.count(commissionRow(c1)+" .pick input") != 0 {
		t.Error("an approved commission still offers approval")
	}

	// Two approved at once.
	a.click(commissionRow(c2) + " .pick input")
	a.click(commissionRow(c3) + " .pick input")
	a.waitText("#c-approve-selected", "Approve selected (2)")
	a.waitText("#c-selected", "2 commissions selected, 2 in their hold: approving releases it")
	a.click("#c-approve-selected")
	a.waitStatus(commissionRow(c3), "approved")
	a.waitStatus(commissionRow(c2), "approved")
	a.waitText("#commissions-notice", fmt.Sprintf("2 commissions approved: %d, %d. 2 before their hold ended: the next payout pays them.", c2, c3))
	if got := a.text("#c-approve-selected"); got != "Approve selected" {
		t.Errorf("after the bulk approval the button reads %q", got)
	}

	// One rejected: the reason is required (nothing is sent without it), then shown.
	a.click(commissionRow(c4) + " button.reject")
	form := commissionRow(c4) + " + tr.form-row form"
	a.click(form + " button[type=submit]")
	a.waitText(form+" .form-error", "Reason is required: 1 to 500 characters.")
	a.fill(form+" input[name=reason]", "   ")
	a.click(form + " button[type=submit]")
	a.waitText(form+" .form-error", "Reason is required: 1 to 500 characters.")
	a.fill(form+" input[name=reason]", strings.Repeat("é", 501))
	a.click(form + " button[type=submit]")
	a.waitText(form+" .form-error", "Reason is required: 1 to 500 characters.")
	if n := s.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'pending'`, c4); n != 1 {
		t.Fatal("an invalid reason changed the commission")
	}
	a.fill(form+" input[name=reason]", "Self-referral by the partner")
	a.click(form + " button[type=submit]")
	a.waitStatus(commissionRow(c4), "rejected")
	if got := a.text(commissionRow(c4) + " td.status"); got != "rejected — Self-referral by the partner" {
		t.Errorf("rejected = %q", got)
	}
	if got := a.text(commissionRow(c4) + " td.amount"); got != "0.00 USD\nof 20.00 USD" {
		t.Errorf("a rejected commission's amount = %q", got)
	}
	if a.count("#commissions tr.form-row") != 0 {
		t.Error("the reason's form stays open")
	}
	if got := a.balance(seedPartner, "USD"); !maps.Equal(got, buckets("0.00 USD", "27.57 USD", "0.00 USD", "0.00 USD", "0.00 USD")) {
		t.Errorf("balance approved = %v", got)
	}
	if got := a.balance(ada, "EUR"); got["pending"] != "8.00 EUR" {
		t.Errorf("Ada's balance = %v", got)
	}

	// The filters: status, partner, creation day (UTC).
	a.pick("#c-status", "approved")
	a.click("#c-filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#commissions tbody tr[data-commission]").length === 3`)
	if got := a.commissionIDs(); !slices.Equal(got, []int64{c3, c2, c1}) {
		t.Errorf("approved = %v", got)
	}
	a.pick("#c-status", "")
	a.pick("#c-partner", fmt.Sprint(ada))
	a.click("#c-filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#commissions tbody tr[data-commission]").length === 1`)
	if got := a.commissionIDs(); !slices.Equal(got, []int64{c5}) {
		t.Errorf("Ada's = %v", got)
	}
	var created string
	if err := s.env.DB.Get(&created, `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM commissions WHERE id = $1`, c1); err != nil {
		t.Fatal(err)
	}
	day, _ := time.Parse(time.DateOnly, created)
	a.pick("#c-partner", "")
	a.fill("#c-from", day.AddDate(0, 0, 1).Format(time.DateOnly))
	a.click("#c-filters button[type=submit]")
	a.waitText("#commissions tbody", "No commissions match these filters.")
	a.fill("#c-from", created)
	a.fill("#c-to", created)
	a.click("#c-filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#commissions tbody tr[data-commission]").length === 5`)
	a.fill("#c-from", "")
	a.fill("#c-to", "")
	a.click("#c-filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#commissions tbody tr[data-commission]").length === 5`)
	a.noPageErrors()

	// A payout of the approved commissions (Ada's is still pending: none for her).
	a.click("#p-create-button")
	a.tab.WaitFor(`document.querySelectorAll("#payouts tbody tr[data-payout]").length === 1`)
	a.waitText("#payouts-notice", "Created 1 payout: 27.57 USD to Seed partner.")
	run := s.payouts("processing")
	if len(run) != 1 || run[0]["amount_cents"] != 2757.0 || run[0]["commission_count"] != 3.0 {
		t.Fatalf("payouts = %v", run)
	}
	p1 := run[0]
	if got := a.text(payoutRow(p1["id"])); !strings.Contains(got, "Seed partner <"+p1["partner_email"].(string)+">") ||
		!strings.Contains(got, "27.57 USD") || !strings.Contains(got, "processing") {
		t.Errorf("payout row = %q", got)
	}
	for _, id := range []int64{c1, c2, c3} {
		a.waitStatus(commissionRow(id), "in_payout")
	}
	if got := a.text(commissionRow(c1) + " td.status"); got != fmt.Sprintf("in payout · payout %v", p1["id"]) {
		t.Errorf("in payout = %q", got)
	}
	if got := a.balance(seedPartner, "USD"); !maps.Equal(got, buckets("0.00 USD", "0.00 USD", "27.57 USD", "0.00 USD", "0.00 USD")) {
		t.Errorf("balance in payout = %v", got)
	}

	// Both exports, as the browser downloads them with the session cookie.
	at, err := time.Parse(time.RFC3339Nano, p1["created_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	email := p1["partner_email"].(string)
	csv := a.download("#p-csv")
	want := "payout_id,partner_id,partner_name,partner_email,payout_email,amount,currency,commission_count,created_at\r\n" +
		fmt.Sprintf("%v,%d,Seed partner,%s,%s,27.57,USD,3,%s\r\n", p1["id"], seedPartner, email, email, at.UTC().Format(time.RFC3339))
	if string(csv.Body) != want || csv.Name != fmt.Sprintf("payouts-%d-processing.csv", s.r.ProgramID) ||
		csv.URL != fmt.Sprintf("%s%s/payouts.csv?status=processing", a.base, s.base) {
		t.Errorf("CSV %s from %s:\n%q\nwant\n%q", csv.Name, csv.URL, csv.Body, want)
	}
	paypal := a.download("#p-paypal")
	want = fmt.Sprintf("%s,27.57,USD,payout_%v,Commission payout %v from Ledger shop\r\n", email, p1["id"], p1["id"])
	if string(paypal.Body) != want || paypal.URL != fmt.Sprintf("%s%s/payouts.csv?status=processing&format=paypal", a.base, s.base) {
		t.Errorf("PayPal file from %s:\n%q\nwant\n%q", paypal.URL, paypal.Body, want)
	}

	// Paid, under the payment's reference.
	a.click(payoutRow(p1["id"]) + " button.paid")
	form = payoutRow(p1["id"]) + " + tr.form-row form"
	a.click(form + " button[type=submit]")
	a.waitText(form+" .form-error", "External reference is required: 1 to 255 characters.")
	a.tab.Accessible("the ledger: commissions pending, rejected and in payout, a payout's paid form refused",
		"#commissions-panel", "#payouts-panel") // the rest of the page: TestWatchAChainAndSwitchALinkOff
	a.fill(form+" input[name=external_reference]", "PAYPAL-BATCH-8XK2")
	a.click(form + " button[type=submit]")
	a.waitStatus(payoutRow(p1["id"]), "paid")
	a.waitText("#payouts-notice", fmt.Sprintf("Payout %v is paid (PAYPAL-BATCH-8XK2).", p1["id"]))
	if got := a.text(payoutRow(p1["id"]) + " td.status"); !strings.HasPrefix(got, "paid · PAYPAL-BATCH-8XK2 · ") {
		t.Errorf("paid = %q", got)
	}
	if a.count(payoutRow(p1["id"])+" button") != 0 {
		t.Error("a paid payout still offers actions")
	}
	for _, id := range []int64{c1, c2, c3} {
		a.waitStatus(commissionRow(id), "paid")
	}
	if got := a.balance(seedPartner, "USD"); !maps.Equal(got, buckets("0.00 USD", "0.00 USD", "0.00 USD", "27.57 USD", "0.00 USD")) {
		t.Errorf("balance paid = %v", got)
	}
	// The CSV of processing payouts is now only its header; the paid ones are a filter away.
	if got := string(a.download("#p-csv").Body); !strings.HasPrefix(got, "payout_id,") || strings.Count(got, "\r\n") != 1 {
		t.Errorf("processing CSV after payment = %q", got)
	}
	a.pick("#p-status", "paid")
	a.click("#p-filters button[type=submit]")
	a.waitText("#p-export-status", "paid")
	if got := a.download("#p-csv"); got.Name != fmt.Sprintf("payouts-%d-paid.csv", s.r.ProgramID) || !strings.Contains(string(got.Body), fmt.Sprintf("\r\n%v,", p1["id"])) {
		t.Errorf("paid CSV %s = %q", got.Name, got.Body)
	}
	a.pick("#p-status", "")
	a.click("#p-filters button[type=submit]")
	a.waitText("#p-export-status", "processing")

	// A payout that fails: its commission is approved again, payable later.
	c6 := s.sale("inv-6", 3000, "USD", "") // 6.00
	a.click("#c-filters button[type=submit]")
	a.waitStatus(commissionRow(c6), "pending")
	a.click(commissionRow(c6) + " button.approve")
	a.waitStatus(commissionRow(c6), "approved")
	a.pick("#p-currency", "USD")
	a.click("#p-create-button")
	a.waitText("#payouts-notice", "Created 1 payout: 6.00 USD to Seed partner.")
	p2 := s.payouts("processing")[0]
	a.waitStatus(payoutRow(p2["id"]), "processing")
	a.click(payoutRow(p2["id"]) + " button.failed")
	form = payoutRow(p2["id"]) + " + tr.form-row form"
	a.fill(form+" input[name=reason]", "Recipient account closed")
	a.click(form + " button[type=submit]")
	a.waitStatus(payoutRow(p2["id"]), "failed")
	if got := a.text(payoutRow(p2["id"]) + " td.status"); got != "failed — Recipient account closed" {
		t.Errorf("failed = %q", got)
	}
	a.waitStatus(commissionRow(c6), "approved")
	if got := a.balance(seedPartner, "USD"); !maps.Equal(got, buckets("0.00 USD", "6.00 USD", "0.00 USD", "27.57 USD", "0.00 USD")) {
		t.Errorf("balance after the failure = %v", got)
	}

	// Everything the page did is in the audit log, by the signed-in owner.
	me := s.r.AccountEmail
	for target, want := range map[string][]string{
		fmt.Sprintf("commission:%d", c1):   {"commission.approve"},
		fmt.Sprintf("commission:%d", c2):   {"commission.approve"},
		fmt.Sprintf("commission:%d", c3):   {"commission.approve"},
		fmt.Sprintf("commission:%d", c4):   {"commission.reject"},
		fmt.Sprintf("commission:%d", c6):   {"commission.approve"},
		fmt.Sprintf("payout:%v", p1["id"]): {"payout.create", "payout.paid"},
		fmt.Sprintf("payout:%v", p2["id"]): {"payout.create", "payout.failed"},
	} {
		if got := s.audited(target, me); !slices.Equal(got, want) {
			t.Errorf("audit of %s = %v, want %v", target, got, want)
		}
	}
	a.noPageErrors()

	// A form sent twice before its answer (a double submit) acts once: both requests carry the action's
	// Idempotency-Key, and the second gets the first's answer.
	s.owner(http.MethodPost, s.base+"/payouts", map[string]any{}, http.StatusCreated)
	p3 := s.payouts("processing")[0]
	a.click("#p-filters button[type=submit]")
	a.waitStatus(payoutRow(p3["id"]), "processing")
	a.click(payoutRow(p3["id"]) + " button.failed")
	form = payoutRow(p3["id"]) + " + tr.form-row form"
	a.fill(form+" input[name=reason]", "Bank holiday")
	seen := len(a.tab.Record().Requests)
	a.tab.Eval(fmt.Sprintf(`(function () { var f = document.querySelector(%q); f.requestSubmit(); f.requestSubmit(); return true })()`, form), nil)
	a.waitStatus(payoutRow(p3["id"]), "failed")
	a.tab.WaitFor(idle) // both answered
	var posts int
	for _, q := range a.tab.Record().Requests[seen:] {
		if q.Method == http.MethodPost && strings.HasSuffix(q.URL, fmt.Sprintf("/api/v1/payouts/%v/failed", p3["id"])) {
			posts++
		}
	}
	if posts != 2 {
		t.Errorf("the double submit sent %d requests, want 2", posts)
	}
	if got := s.audited(fmt.Sprintf("payout:%v", p3["id"]), me); !slices.Equal(got, []string{"payout.create", "payout.failed"}) {
		t.Errorf("audit of the double submit = %v, want one failure", got)
	}
	var refused bool
	a.tab.Eval(`document.querySelector("#payouts-notice").classList.contains("error")`, &refused)
	if got := a.text("#payouts-notice"); refused || !strings.HasPrefix(got, fmt.Sprintf("Payout %v failed", p3["id"])) {
		t.Errorf("notice = %q (an error: %v)", got, refused)
	}
	a.noPageErrors()

	// The page is out of date: the Commissions view, read when it opened, shows the commission approved;
	// meanwhile it went into a payout through the API. Rejecting it answers 409, whose message the page
	// shows; the list then shows the commission as it is.
	a.tab.Eval(`document.getElementById("commissions").removeAttribute("data-queue")`, nil) // set again when the rows are read
	a.view("commissions")
	a.tab.WaitFor(`document.getElementById("commissions").hasAttribute("data-queue")`)
	if a.count(commissionRow(c6)+" button.reject") != 1 {
		t.Fatalf("the approved commission %d offers no Reject", c6)
	}
	s.owner(http.MethodPost, s.base+"/payouts", map[string]any{}, http.StatusCreated)
	a.click(commissionRow(c6) + " button.reject")
	form = commissionRow(c6) + " + tr.form-row form"
	a.fill(form+" input[name=reason]", "Too late")
	a.click(form + " button[type=submit]")
	a.waitText("#commissions-notice", fmt.Sprintf("Commission %d is in a payout", c6))
	var isError bool
	a.tab.Eval(`document.querySelector("#commissions-notice").classList.contains("error")`, &isError)
	if !isError {
		t.Error("the 409 is not shown as an error")
	}
	a.waitStatus(commissionRow(c6), "in_payout")
	if n := s.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'in_payout' AND rejected_reason IS NULL`, c6); n != 1 {
		t.Error("the refused rejection changed the commission")
	}
	rec := a.tab.Record()
	if len(rec.Errors) > 0 {
		t.Errorf("page errors: %v", rec.Errors)
	}
	for _, m := range rec.Console {
		if m.Type == "error" && !strings.Contains(m.Text, "409 (Conflict)") {
			t.Errorf("console error: %s", m.Text)
		}
	}
	a.screenshot("", "ledger")
}

// With automatic approval a commission becomes approved once its hold has passed, at the server's clock:
// the page shows it pending, then approved after the clock moved on. A payout of one currency leaves
// the others approved. Amounts are in each currency's major units: 2 digits for USD, none for VND.
// The Commissions view opens on To approve: the pending commissions whose hold has ended, and nothing
// else; In hold holds the others, All every one. Approving empties the inbox, which says so.
func TestToApproveIsTheInbox(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Inbox shop", map[string]any{"commission_approval": "manual"}) // hold 30 days
	due := s.sale("inbox-1", 5000, "USD", "")
	s.clock.Advance(31 * 24 * time.Hour)
	held := s.sale("inbox-2", 7000, "USD", "")

	a := open(t, s.env)
	a.signIn(s.r.AccountEmail)
	a.view("commissions")
	a.tab.WaitFor(`document.querySelector("#commissions").dataset.queue === "to_approve"`)
	if got := a.attr(`#c-queues [aria-pressed="true"]`, "data-queue"); got != "to_approve" {
		t.Errorf("the view opens on %q", got)
	}
	if got := a.commissionIDs(); !slices.Equal(got, []int64{due}) {
		t.Errorf("to approve = %v, want only %d (its hold ended)", got, due)
	}
	if got := a.text(commissionRow(due) + " button.approve"); got != "Approve" {
		t.Errorf("a commission out of its hold offers %q", got)
	}
	a.queue("in_hold")
	if got := a.commissionIDs(); !slices.Equal(got, []int64{held}) {
		t.Errorf("in hold = %v, want %d", got, held)
	}
	if got := a.text(commissionRow(held) + " button.approve"); got != "Approve early" {
		t.Errorf("a commission in its hold offers %q", got)
	}
	a.queue("all")
	if got := a.commissionIDs(); !slices.Equal(got, []int64{held, due}) {
		t.Errorf("all = %v", got)
	}
	a.queue("to_approve")
	a.click(commissionRow(due) + " button.approve")
	a.waitText("#commissions tbody", "Nothing to approve: no pending commission has come out of its hold.")
	if n := s.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'approved' AND hold_released_at IS NULL`, due); n != 1 {
		t.Error("the commission out of its hold was not approved as such")
	}
	a.noPageErrors()
}

func TestCommissionApprovedAfterItsHold(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Hold shop", nil) // hold 30 days, auto approval
	deals, dealsURL := s.partner("Deals", "deals@example.com")
	usd := s.sale("hold-usd", 6250, "USD", "")
	vnd := s.sale("hold-vnd", 625000, "VND", dealsURL)

	a := s.open(s.r.AccountEmail)
	a.waitStatus(commissionRow(usd), "pending")
	a.waitStatus(commissionRow(vnd), "pending")
	if got := a.text(commissionRow(vnd) + " td.amount"); got != "125000 VND" {
		t.Errorf("VND amount = %q", got)
	}
	if got := a.balance(deals, "VND"); got["pending"] != "125000 VND" {
		t.Errorf("VND balance = %v", got)
	}

	s.clock.Advance(31 * 24 * time.Hour)
	a.click("#c-filters button[type=submit]")
	a.waitStatus(commissionRow(usd), "approved")
	a.waitStatus(commissionRow(vnd), "approved")
	a.click("#p-filters button[type=submit]")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelector('#balances tr[data-balance="%d VND"] td[data-bucket=approved]').innerText === "125000 VND"`, deals))
	if got := a.balance(s.r.PartnerID, "USD"); !maps.Equal(got, buckets("0.00 USD", "12.50 USD", "0.00 USD", "0.00 USD", "0.00 USD")) {
		t.Errorf("USD balance = %v", got)
	}

	// A payout in VND only.
	a.pick("#p-currency", "VND")
	a.click("#p-create-button")
	a.waitText("#payouts-notice", "Created 1 payout: 125000 VND to Deals.")
	p := s.payouts("processing")
	if len(p) != 1 || p[0]["currency"] != "VND" {
		t.Fatalf("payouts = %v", p)
	}
	a.waitStatus(commissionRow(vnd), "in_payout")
	a.waitStatus(commissionRow(usd), "approved")
	if got := a.balance(deals, "VND"); got["in_payout"] != "125000 VND" || got["approved"] != "0 VND" {
		t.Errorf("VND balance = %v", got)
	}
	want := fmt.Sprintf("deals@example.com,125000,VND,payout_%v,Commission payout %v from Hold shop\r\n", p[0]["id"], p[0]["id"])
	if got := a.download("#p-paypal"); string(got.Body) != want {
		t.Errorf("PayPal file = %q, want %q", got.Body, want)
	}
	// Nothing left in VND: the page says so.
	a.click("#p-create-button")
	a.waitText("#payouts-notice", "No payout due in VND: no partner's approved total, less any clawback owed, reaches the program's payout minimum.")
	a.noPageErrors()
}

// The commissions list pages by cursor, newest first, never repeating or skipping one; ticking the
// header selects the page's commissions, and they are approved at once.
func TestCommissionsPaging(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Busy shop", map[string]any{"commission_approval": "manual"})
	var ids []int64 // newest first
	for i := range 27 {
		if i == 20 {
			s.clock.Advance(time.Minute) // the lead route takes 30 a minute from one IP
		}
		ids = append([]int64{s.sale(fmt.Sprintf("page-%02d", i), 1000, "USD", "")}, ids...)
	}
	a := s.open(s.r.AccountEmail)
	a.waitText("#c-page-info", "Page 1 · 25 commissions")
	first := a.commissionIDs()
	var prevDisabled bool
	a.tab.Eval(`document.querySelector("#c-prev").disabled`, &prevDisabled)
	if !prevDisabled {
		t.Error("Previous is enabled on the first page")
	}
	a.click("#c-next")
	a.waitText("#c-page-info", "Page 2 · 2 commissions · last page")
	second := a.commissionIDs()
	if got := append(first, second...); !slices.Equal(got, ids) {
		t.Errorf("pages = %v + %v, want %v", first, second, ids)
	}
	var nextDisabled bool
	a.tab.Eval(`document.querySelector("#c-next").disabled`, &nextDisabled)
	if !nextDisabled {
		t.Error("Next is enabled on the last page")
	}
	a.click("#c-prev")
	a.waitText("#c-page-info", "Page 1 · 25 commissions")
	if got := a.commissionIDs(); !slices.Equal(got, first) {
		t.Errorf("back on page 1: %v", got)
	}

	a.click("#c-all")
	a.waitText("#c-approve-selected", "Approve selected (25)")
	a.click("#c-approve-selected")
	var sorted []string
	for _, id := range slices.Sorted(slices.Values(first)) {
		sorted = append(sorted, fmt.Sprint(id))
	}
	a.waitText("#commissions-notice", "25 commissions approved: "+strings.Join(sorted, ", ")+". 25 before their hold ended: the next payout pays them.")
	a.tab.WaitFor(`document.querySelectorAll('#commissions tbody tr[data-status="approved"]').length === 25`)
	if n := s.env.Count(`SELECT count(*) FROM commissions WHERE program_id = $1 AND status = 'approved'`, s.r.ProgramID); n != 25 {
		t.Errorf("%d approved, want 25", n)
	}
	a.noPageErrors()
}

// Each role sees the ledger; only those that may act (owner, admin, billing) get its buttons. An analyst
// reads the lists and the balances and downloads the export, with no way to approve, reject, pay out or
// mark a payout. The page shows the buttons by whether the member may act; admin's rights on the ledger
// are the owner's, tested for every role at the API (pkg/api TestLedgerRoles), so the page is tested for
// the owner, billing (the role made for the ledger) and the analyst, each a browser sign-in of its own.
func TestLedgerRolesOnThePage(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Roles shop", map[string]any{"commission_approval": "manual"})
	pending := s.sale("role-1", 5000, "USD", "")
	approved := s.sale("role-2", 2500, "USD", "")
	s.owner(http.MethodPost, fmt.Sprintf("/api/v1/commissions/%d/approve", approved), map[string]any{"release_hold": true}, http.StatusOK)
	s.owner(http.MethodPost, s.base+"/payouts", map[string]any{}, http.StatusCreated)
	payout := s.payouts("processing")[0]["id"]
	invite := func(role string) string {
		email := role + "-" + fmt.Sprint(time.Now().UnixNano()) + "@example.com"
		if _, err := accounts.Invite(context.Background(), s.env.DB, s.r.AdvertiserID, email, role, accounts.RoleOwner); err != nil {
			t.Fatal(err)
		}
		return email
	}
	cases := []struct {
		role, email string
		act         bool
	}{
		{"owner", s.r.AccountEmail, true},
		{"analyst", invite("analyst"), false},
		{"billing", invite("billing"), true},
	}
	for _, c := range cases {
		t.Run(c.role, func(t *testing.T) {
			a := open(t, s.env)
			a.signIn(c.email)
			a.view("commissions")
			a.queue("all")
			a.waitStatus(commissionRow(pending), "pending")
			a.waitStatus(payoutRow(payout), "processing")
			if got := a.text(commissionRow(pending) + " td.amount"); got != "10.00 USD" {
				t.Errorf("amount = %q", got)
			}
			if got := a.balance(s.r.PartnerID, "USD"); got["pending"] != "10.00 USD" || got["in_payout"] != "5.00 USD" {
				t.Errorf("balance = %v", got)
			}
			for _, sel := range []string{
				commissionRow(pending) + " .pick input", commissionRow(pending) + " button.approve", commissionRow(pending) + " button.reject",
				"#c-all", "#c-approve-selected", "#p-create-button", payoutRow(payout) + " button.paid", payoutRow(payout) + " button.failed",
			} {
				a.on(sel)
				if a.visible(sel) != c.act {
					t.Errorf("%s shown = %v, want %v", sel, a.visible(sel), c.act)
				}
			}
			a.view("payouts")
			if !a.visible("#p-csv") || !a.visible("#p-paypal") {
				t.Error("the exports are not offered")
			}
			if got := a.download("#p-csv"); !strings.HasPrefix(string(got.Body), "payout_id,") || !strings.Contains(string(got.Body), fmt.Sprintf("\r\n%v,", payout)) {
				t.Errorf("CSV = %q", got.Body)
			}
			a.noPageErrors()
		})
	}
}

// A payout run says what it paid and what it carried over to a later run, and why.
func TestPayoutRunSaysWhatItCarriesOver(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Minimum shop", map[string]any{"hold_days": 0, "payout_minimum_cents": 1000})
	_, adaURL := s.partner("Ada's Reviews", "ada@example.com")
	s.sale("min-1", 2500, "USD", "")      // 5.00 to the seed partner: under the minimum
	s.sale("min-2", 10000, "USD", adaURL) // 20.00 to Ada
	a := s.open(s.r.AccountEmail)
	a.click("#p-create-button")
	a.waitText("#payouts-notice", "Created 1 payout: 20.00 USD to Ada's Reviews. "+
		"Carried over to a later payout: 5.00 USD to Seed partner (under the program's minimum payout).")
	a.noPageErrors()
}
