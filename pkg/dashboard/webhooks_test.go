package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/pkg/accounts"
)

// The Webhooks view (docs/architecture.md, "Outbound webhooks"), driven in Chromium against the real server: an
// endpoint pointing at a real receiver in this process, its deliveries made by the test running the
// server's worker (the server attempts nothing in tests), each checked with the independent Standard
// Webhooks library against the secret the page showed.

// hookReceiver is a webhook receiver: it answers every request with its current status and body and
// keeps what it received.
type hookReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	status int
	body   string
	got    []hookRequest
}

type hookRequest struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{status: http.StatusOK, body: "thanks"}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.got = append(h.got, hookRequest{r.Header.Clone(), b})
		w.WriteHeader(h.status)
		io.WriteString(w, h.body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// answer sets what the receiver answers from now on.
func (h *hookReceiver) answer(status int, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, body
}

// last is the request received last; n is how many were received.
func (h *hookReceiver) last() (r hookRequest, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) == 0 {
		return hookRequest{}, 0
	}
	return h.got[len(h.got)-1], len(h.got)
}

// deliver runs the server's webhook worker once: it must attempt want deliveries.
func (s *shop) deliver(want int) {
	s.t.Helper()
	n, err := s.env.Webhooks.RunOnce(context.Background())
	if err != nil || n != want {
		s.t.Fatalf("the worker attempted %d deliveries (%v), want %d", n, err, want)
	}
}

// verifyHook checks a received request's signature with the Standard Webhooks library and each secret,
// and returns its body.
func verifyHook(t *testing.T, r hookRequest, secrets ...string) map[string]any {
	t.Helper()
	for _, secret := range secrets {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatalf("the page's secret %q: %v", secret, err)
		}
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Fatalf("the Standard Webhooks library refuses the delivery with the secret %q: %v (headers %v)", secret, err, r.header)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

// waitFor waits until selector matches an element and the views are idle.
func (a *app) waitFor(selector string) {
	a.t.Helper()
	a.tab.WaitFor(fmt.Sprintf(`!!document.querySelector(%q) && %s`, selector, idle))
}

// waitContains waits until the element selector matches contains text and the views are idle.
func (a *app) waitContains(selector, text string) {
	a.t.Helper()
	a.tab.WaitFor(fmt.Sprintf(`((document.querySelector(%q) || {}).innerText || "").indexOf(%q) >= 0 && %s`, selector, text, idle))
}

// noPageErrorsBut is noPageErrors allowing console errors that contain expected (a refusal the test
// asked for, which the browser logs).
func (a *app) noPageErrorsBut(expected string) {
	a.t.Helper()
	rec := a.tab.Record()
	if len(rec.Errors) > 0 {
		a.t.Errorf("page errors: %v", rec.Errors)
	}
	for _, m := range rec.Console {
		if m.Type == "error" && !strings.Contains(m.Text, expected) {
			a.t.Errorf("console error: %s", m.Text)
		}
	}
}

// An owner adds an endpoint and sees its secret once; a test event is delivered and logged with the
// receiver's answer; a 500 leaves the next one pending with the 500 in its attempts, and Resend sends it
// again; the status filter; the secret rotated (deliveries signed with both); disabled, an event missed
// meanwhile, enabled and recovered; the log paged; the endpoint removed. What receivers send back and
// what members type is shown as text. An analyst is told the view is the owner's or an admin's.
func TestWebhooksOnThePage(t *testing.T) {
	t.Parallel()
	s := newShop(t, "Webhook shop", nil)
	started := time.Now().UTC()
	rc := newHookReceiver(t)
	hookURL := rc.srv.URL + "/hooks/reftrack"
	const hostile = `<img src=x onerror="document.body.dataset.pwned=1">`

	a := s.open(s.r.AccountEmail)
	a.waitText("#endpoints", "No endpoints yet: add one below to receive the program's events.")
	if a.visible("#wh-secret") {
		t.Error("a secret box is shown before any endpoint")
	}

	// Added with two event types and a description; the secret shown once.
	a.click("#wh-create-button")
	a.waitText("#wh-create-error", "URL is required.")
	a.fill("#wh-url", "https://10.0.0.1/hooks") // a private address: refused by the server
	a.click("#wh-create-button")
	a.waitText("#wh-create-error", "url must be a public https URL")
	if a.visible("#webhooks-notice") {
		t.Errorf("the refusal is said twice: the view's notice reads %q too", a.text("#webhooks-notice"))
	}
	// Each refusal in its own words, once; a long URL is sent whole and refused with the limit.
	for url, want := range map[string]string{
		"not a url":                 "url must be an absolute URL, such as https://hooks.example.com/reftrack",
		"ftp://hooks.example.com/h": "url must begin with https:// (a server in development also takes http://)",
		"https://" + strings.Repeat("a", 3000) + ".example.com/": "Invalid request body: url: maximum string length is 2048",
	} {
		a.fill("#wh-url", url)
		a.click("#wh-create-button")
		a.waitText("#wh-create-error", want)
		var sent int
		a.tab.Eval(`document.getElementById("wh-url").value.length`, &sent)
		if sent != len(url) {
			t.Errorf("the URL box holds %d of %d characters", sent, len(url))
		}
	}
	a.fill("#wh-url", hookURL)
	a.fill("#wh-description", "Books "+hostile)
	a.click(`#wh-events input[value="sale.created"]`)
	a.click(`#wh-events input[value="partner.created"]`)
	a.click("#wh-create-button")
	a.waitFor(`#endpoints li[data-endpoint][data-enabled="true"]`)
	a.tab.WaitFor(`!document.querySelector("#wh-secret").hidden`)
	var secret string
	a.tab.Eval(`document.querySelector("#wh-secret-value").value`, &secret)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret shown = %q", secret)
	}
	if got := a.text("#wh-secret-note"); !strings.Contains(got, "shown only now") || !strings.Contains(got, hookURL) {
		t.Errorf("secret note = %q", got)
	}
	var focused bool
	a.tab.Eval(`document.activeElement === document.querySelector("#wh-secret-value")`, &focused)
	if !focused {
		t.Error("the secret is not focused for copying")
	}
	if got := a.text("#wh-create-error"); got != "" {
		t.Errorf("the form still shows %q", got)
	}
	// Copy: on the clipboard, or (where the browser refuses) selected, with what to press.
	a.click("#wh-secret-copy")
	a.tab.WaitFor(`document.querySelector("#wh-secret-copied").innerText !== ""`)
	if got := a.text("#wh-secret-copied"); got != "Copied." && got != "The secret is selected: press Ctrl+C (⌘C) to copy it." {
		t.Errorf("after Copy: %q", got)
	}
	var id int64
	a.tab.Eval(`Number(document.querySelector("#endpoints li[data-endpoint]").dataset.endpoint)`, &id)
	card := fmt.Sprintf(`#endpoints li[data-endpoint="%d"]`, id)
	if got := a.text(card + " .endpoint-url"); got != hookURL {
		t.Errorf("url = %q", got)
	}
	if got := a.text(card + " .endpoint-meta"); !strings.HasPrefix(got, "Events: partner.created, sale.created · Books "+hostile+" · added ") {
		t.Errorf("endpoint = %q", got)
	}
	if got := a.text(card + " .endpoint-state"); got != "enabled" {
		t.Errorf("state = %q", got)
	}
	var typed string
	a.tab.Eval(`document.querySelector("#wh-url").value + document.querySelector("#wh-description").value`, &typed)
	if typed != "" || a.count("#wh-events input:checked") != 0 {
		t.Error("the form is not cleared after the endpoint was added")
	}
	// Shown only now: a reload of the page has no secret.
	if status := a.tab.Goto(a.base + "/dashboard"); status != http.StatusOK {
		t.Fatalf("reload: %d", status)
	}
	a.tab.WaitFor(`document.body.hasAttribute("data-loaded")`)
	a.waitFor(card)
	if a.visible("#wh-secret") || strings.Contains(a.text("main"), secret) {
		t.Error("the secret is shown again after a reload")
	}

	// A test event, delivered and logged with the receiver's answer.
	rows := card + " .log tbody tr[data-delivery]"
	a.pick(card+" .test-form select", "commission.created")
	a.click(card + " button.test")
	a.waitFor(card + ` .log:not([hidden]) tbody tr[data-delivery][data-status="pending"][data-attempts="0"]`)
	a.waitContains("#webhooks-notice", "Test event commission.created queued for "+hookURL)
	if got := a.text(rows + " td.attempts"); got != "none yet" {
		t.Errorf("attempts before the worker ran = %q", got)
	}
	s.deliver(1)
	a.click(card + " button.reload")
	a.waitFor(rows + `[data-status="succeeded"][data-attempts="1"]`)
	req, n := rc.last()
	if n != 1 {
		t.Fatalf("%d requests received, want 1", n)
	}
	body := verifyHook(t, req, secret)
	if body["type"] != "commission.created" || body["data"].(map[string]any)["is_test"] != true {
		t.Errorf("delivered = %v", body)
	}
	if got := a.text(rows + " td.webhook-id"); got != req.header.Get("webhook-id") || !strings.HasPrefix(got, "msg_") {
		t.Errorf("webhook id shown %q, sent %q", got, req.header.Get("webhook-id"))
	}
	if got := a.text(rows + " td.event"); got != "commission.created test" {
		t.Errorf("event = %q", got)
	}
	attempt := a.text(rows + " .attempt-list li")
	if !strings.Contains(attempt, " · HTTP 200 · ") || !strings.Contains(attempt, " ms") || !strings.HasSuffix(attempt, "thanks") {
		t.Errorf("attempt = %q", attempt)
	}

	// The receiver fails: the next test event stays pending, its 500 and body (shown as text) logged.
	rc.answer(http.StatusInternalServerError, hostile+" upstream down")
	a.pick(card+" .test-form select", "payout.failed")
	a.click(card + " button.test")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === 2 && %s`, rows, idle))
	s.deliver(1)
	a.click(card + " button.reload")
	first := rows + ":first-child"
	a.waitFor(first + `[data-status="pending"][data-attempts="1"]`)
	if got := a.text(first + " td.event"); got != "payout.failed test" {
		t.Errorf("event = %q", got)
	}
	if got := a.text(first + " td.status"); !strings.HasPrefix(got, "pending · next attempt ") {
		t.Errorf("status = %q", got)
	}
	if got := a.text(first + " .attempt-list li .attempt-line"); !strings.Contains(got, " · HTTP 500 · ") {
		t.Errorf("attempt = %q", got)
	}
	if got := a.text(first + " pre.response"); got != hostile+" upstream down" {
		t.Errorf("response body shown = %q", got)
	}
	if n := a.count("#webhooks-panel img"); n != 0 {
		t.Errorf("%d img elements in the view: a text was parsed as HTML", n)
	}
	failed, _ := rc.last()
	verifyHook(t, failed, secret)

	// Resend: queued again at once, sent with the same webhook id, now answered.
	var deliveryID int64
	a.tab.Eval(fmt.Sprintf(`Number(document.querySelector(%q).dataset.delivery)`, first), &deliveryID)
	a.click(first + " button.resend")
	a.waitContains("#webhooks-notice", fmt.Sprintf("Delivery %d (payout.failed) queued again", deliveryID))
	if got := a.text(first + " td.status"); got != "pending · next attempt now" {
		t.Errorf("status after Resend = %q", got)
	}
	rc.answer(http.StatusNoContent, "")
	s.deliver(1)
	a.click(card + " button.reload")
	a.waitFor(first + `[data-status="succeeded"][data-attempts="2"]`)
	resent, n := rc.last()
	if n != 3 || resent.header.Get("webhook-id") != failed.header.Get("webhook-id") {
		t.Errorf("%d requests; resent with webhook id %q, first sent with %q", n, resent.header.Get("webhook-id"), failed.header.Get("webhook-id"))
	}
	verifyHook(t, resent, secret)
	if got := a.text(first + " .attempt-list li:nth-child(2) .attempt-line"); !strings.Contains(got, " · HTTP 204 · ") {
		t.Errorf("second attempt = %q", got)
	}

	// The status filter.
	a.pick(card+" .log-filters select", "failed")
	a.click(card + " button.reload")
	a.waitText(card+" .log tbody", "No failed deliveries in the last 30 days.")
	a.pick(card+" .log-filters select", "succeeded")
	a.click(card + " button.reload")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === 2 && %s`, rows+`[data-status="succeeded"]`, idle))
	a.pick(card+" .log-filters select", "")
	a.click(card + " button.reload")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === 2 && %s`, rows, idle))
	a.noPageErrorsBut("400 (Bad Request)") // the private URL

	// The secret rotated: the new one shown once; deliveries carry both signatures for a day.
	a.click(card + " button.rotate")
	a.waitContains("#wh-secret-note", "New signing secret of "+hookURL+", shown only now")
	var rotated string
	a.tab.Eval(`document.querySelector("#wh-secret-value").value`, &rotated)
	if !strings.HasPrefix(rotated, "whsec_") || rotated == secret {
		t.Fatalf("rotated secret = %q (was %q)", rotated, secret)
	}
	a.waitContains(card+" .endpoint-meta", "signed with the previous secret too until ")
	a.tab.Accessible("the webhooks: a rotated secret shown, an endpoint's deliveries, one failed then resent",
		"#webhooks-panel") // the rest of the page: TestWatchAChainAndSwitchALinkOff
	a.click(card + " button.test") // payout.failed, still chosen
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === 3 && %s`, rows, idle))
	s.deliver(1)
	afterRotation, _ := rc.last()
	verifyHook(t, afterRotation, rotated, secret)

	// Disabled: an event meanwhile reaches no one. Enabled, then recovered since before it.
	a.click(card + " button.toggle")
	a.waitFor(card + `[data-enabled="false"]`)
	if got := a.text(card + " .endpoint-state"); got != "disabled — disabled by a member" {
		t.Errorf("state = %q", got)
	}
	if got := a.text(card + " button.toggle"); got != "Enable" {
		t.Errorf("toggle = %q", got)
	}
	partnerID, _ := s.partner("Ada's Reviews", "ada@example.com") // partner.created
	s.deliver(0)
	a.click(card + " button.toggle")
	a.waitFor(card + `[data-enabled="true"]`)
	a.waitContains("#webhooks-notice", hookURL+" is enabled again.")
	s.deliver(0)
	since := started.Add(-time.Minute).Format("2006-01-02T15:04")
	a.fill(card+" input[name=since]", since)
	a.click(card + " button.recover")
	a.waitText("#webhooks-notice", "1 delivery to "+hookURL+" queued again since "+strings.Replace(since, "T", " ", 1)+":00.")
	a.waitFor(first + `[data-status="pending"][data-attempts="0"]`)
	s.deliver(1)
	recovered, _ := rc.last()
	body = verifyHook(t, recovered, rotated, secret)
	if data := body["data"].(map[string]any); body["type"] != "partner.created" || data["id"] != float64(partnerID) || data["is_test"] != false {
		t.Errorf("recovered = %v", body)
	}
	a.click(card + " button.reload")
	a.waitFor(first + `[data-status="succeeded"][data-attempts="1"]`)
	if got := a.text(first + " td.event"); got != "partner.created" {
		t.Errorf("recovered event = %q", got)
	}

	// The log pages by cursor, newest first.
	for range 10 {
		s.owner(http.MethodPost, fmt.Sprintf("/api/v1/webhook-endpoints/%d/test", id), map[string]any{"event_type": "lead.created"}, http.StatusAccepted)
	}
	var want []int64
	if err := s.env.DB.Select(&want, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY id DESC`, id); err != nil {
		t.Fatal(err)
	}
	a.click(card + " button.reload")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === 10 && %s`, rows, idle))
	if !a.visible(card + " button.more") {
		t.Fatal("no More button under a full page")
	}
	a.click(card + " button.more")
	a.tab.WaitFor(fmt.Sprintf(`document.querySelectorAll(%q).length === %d && %s`, rows, len(want), idle))
	var shown []int64
	a.tab.Eval(fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(function (tr) { return Number(tr.dataset.delivery) })`, rows), &shown)
	if len(want) != 14 || !slices.Equal(shown, want) {
		t.Errorf("log shown = %v, want %v", shown, want)
	}
	if a.visible(card + " button.more") {
		t.Error("More is offered on the last page")
	}
	a.screenshot("#webhooks-panel", "webhooks")

	// Removed, once confirmed; its secret's box goes with it.
	a.click(card + " button.remove")
	a.waitText("#endpoints", "No endpoints yet: add one below to receive the program's events.")
	if d := a.tab.Record().Dialogs; len(d) != 1 || !strings.HasPrefix(d[0], "Remove the endpoint "+hookURL+"?") {
		t.Errorf("dialogs = %v", d)
	}
	if n := s.env.Count(`SELECT count(*) FROM webhook_endpoints WHERE program_id = $1`, s.r.ProgramID); n != 0 {
		t.Errorf("%d endpoints left", n)
	}
	if a.visible("#wh-secret") {
		t.Error("the removed endpoint's secret is still shown")
	}
	var pwned bool
	a.tab.Eval(`"pwned" in document.body.dataset`, &pwned)
	if pwned {
		t.Error("a receiver's answer or a description ran as HTML")
	}
	var audited []string
	for _, action := range s.audited(fmt.Sprintf("program:%d", s.r.ProgramID), s.r.AccountEmail) {
		if strings.HasPrefix(action, "webhook_") {
			audited = append(audited, action)
		}
	}
	wantAudit := []string{"webhook_endpoint.create", "webhook_endpoint.test", "webhook_endpoint.test", "webhook_delivery.resend",
		"webhook_endpoint.rotate_secret", "webhook_endpoint.test", "webhook_endpoint.update", "webhook_endpoint.update", "webhook_endpoint.recover"}
	for range 10 {
		wantAudit = append(wantAudit, "webhook_endpoint.test")
	}
	if wantAudit = append(wantAudit, "webhook_endpoint.delete"); !slices.Equal(audited, wantAudit) {
		t.Errorf("audit = %v, want %v", audited, wantAudit)
	}
	a.noPageErrorsBut("400 (Bad Request)") // the private URL

	// An analyst is told the view is the owner's or an admin's, and the page asks the API nothing of it.
	analyst := fmt.Sprintf("analyst-%d@example.com", time.Now().UnixNano())
	if _, err := accounts.Invite(context.Background(), s.env.DB, s.r.AdvertiserID, analyst, accounts.RoleAnalyst, accounts.RoleOwner); err != nil {
		t.Fatal(err)
	}
	b := open(t, s.env)
	b.signIn(analyst)
	b.view("webhooks")
	if got := b.text("#webhooks-denied"); got != "Webhooks are managed by the workspace's owner or admin. Your role (analyst) cannot see or change them: ask an owner or admin." {
		t.Errorf("analyst sees %q", got)
	}
	if b.visible("#webhooks-body") || b.visible("#wh-create") {
		t.Error("the analyst is offered the endpoints")
	}
	for _, q := range b.tab.Record().Requests {
		if strings.Contains(q.URL, "webhook-") {
			t.Errorf("the analyst's page asked %s %s", q.Method, q.URL)
		}
	}
	b.noPageErrors()
}
