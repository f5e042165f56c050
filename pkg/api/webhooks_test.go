package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/sdk"
)

// Outbound webhooks (docs/rules.md#webhooks), through the real server: the routes, and the events its changes
// write, delivered by the test's worker (env.Webhooks) to real receivers and verified with the independent
// Standard Webhooks library.

// hookReceiver is a real HTTP server that answers 204 and keeps every delivery.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []hookDelivery
}

type hookDelivery struct {
	header http.Header
	body   []byte
	event  struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := hookDelivery{header: r.Header.Clone()}
		d.body, _ = io.ReadAll(r.Body)
		if err := json.Unmarshal(d.body, &d.event); err != nil {
			t.Errorf("delivery body: %v: %s", err, d.body)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, d)
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *hookReceiver) deliveries() []hookDelivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// deliverAll runs the test's worker until nothing is due.
func deliverAll(t *testing.T, env *apitest.Env) {
	t.Helper()
	for {
		n, err := env.Webhooks.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// sameResource compares an event's data with the API's answer for the resource: every field the API
// shows, times as instants (the database writes its own RFC 3339 form).
func sameResource(t *testing.T, what string, data, api map[string]any) {
	t.Helper()
	for k, want := range api {
		got, ok := data[k]
		if !ok {
			t.Errorf("%s: data lacks %q", what, k)
			continue
		}
		if ws, ok := want.(string); ok {
			if wt, err := time.Parse(time.RFC3339Nano, ws); err == nil {
				gs, _ := got.(string)
				if gt, err := time.Parse(time.RFC3339Nano, gs); err != nil || !gt.Equal(wt) {
					t.Errorf("%s: %s = %v, the API shows %v", what, k, got, want)
				}
				continue
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %s = %v, the API shows %v", what, k, got, want)
		}
	}
}

// Every change a brand's systems hear of writes its event in the change's transaction: a partner
// joining, a lead, a sale and its commission, a refund, the commission's approval, its payout and
// payment, a failed payout, a partner's and a link's change. Each is delivered signed (the library
// verifies it), its data is the resource as the API shows it when first sent, with the status the event
// moved it to, and fits the spec's schema.
func TestWebhookEventsFromTheirChanges(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual"})
	rc := newHookReceiver(t)
	ep := f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": rc.srv.URL + "/hooks", "description": "all"}), http.StatusCreated)
	secret, _ := ep["secret"].(string)
	// A program without an endpoint writes no event.
	quiet := f.another()
	quiet.sale("quiet-1", 5000, "USD", "")

	partnerID, url := f.partner("Ann", "ann@example.com")
	c := f.sale("wh-1", 10000, "USD", url)
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "wh-1", "refund_amount_cents": 2000}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	f.data(f.do(http.MethodPost, commission(c["id"])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	po := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]
	paid := f.data(f.do(http.MethodPost, payout(po["id"])+"/paid", map[string]any{"external_reference": "REF-1"}), http.StatusOK)
	c2 := f.sale("wh-2", 5000, "USD", url)
	f.data(f.do(http.MethodPost, commission(c2["id"])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	po2 := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]
	failed := f.data(f.do(http.MethodPost, payout(po2["id"])+"/failed", map[string]any{"reason": "account closed"}), http.StatusOK)
	if _, err := f.env.DB.Exec(`UPDATE partners SET name = 'Ann B' WHERE id = $1`, partnerID); err != nil {
		t.Fatal(err)
	}
	var linkID int64
	if err := f.env.DB.Get(&linkID, `SELECT id FROM referral_links WHERE partner_id = $1`, partnerID); err != nil {
		t.Fatal(err)
	}
	link := f.data(f.do(http.MethodPatch, fmt.Sprintf("/api/v1/links/%d", linkID), map[string]any{"enabled": false}), http.StatusOK)
	deliverAll(t, f.env)

	got := rc.deliveries()
	// Delivery order is not promised: put them in the order things happened.
	sort.SliceStable(got, func(i, j int) bool { return got[i].event.Timestamp.Before(got[j].event.Timestamp) })
	var types []string
	last := map[string]hookDelivery{} // the last event of each type
	ids := map[string]bool{}
	for _, d := range got {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(d.body, d.header); err != nil {
			t.Errorf("%s: the Standard Webhooks library refuses it: %v", d.event.Type, err)
		}
		// The Go SDK verifies it too, and reads the same event.
		if ev, err := sdk.VerifyWebhook(secret, d.header, d.body); err != nil || ev.ID != d.header.Get("webhook-id") ||
			ev.Type != d.event.Type || !ev.Timestamp.Equal(d.event.Timestamp) {
			t.Errorf("%s: sdk.VerifyWebhook = %+v, %v", d.event.Type, ev, err)
		}
		if id := d.header.Get("webhook-id"); ids[id] || !strings.HasPrefix(id, "msg_") {
			t.Errorf("webhook-id %q repeated or malformed", id)
		} else {
			ids[id] = true
		}
		if d.event.Data["is_test"] != false {
			t.Errorf("%s: is_test %v", d.event.Type, d.event.Data["is_test"])
		}
		types = append(types, d.event.Type)
		last[d.event.Type] = d
	}
	sort.Strings(types)
	want := []string{"commission.created", "commission.created", "commission.updated", "commission.updated", "commission.updated",
		"commission.updated", "commission.updated", "commission.updated", "commission.updated", "lead.created", "lead.created", "link.updated",
		"partner.created", "partner.updated", "payout.created", "payout.created", "payout.failed", "payout.paid",
		"sale.created", "sale.created", "sale.refunded"}
	if !slices.Equal(types, want) {
		t.Fatalf("delivered %v\nwant      %v", types, want)
	}
	// The first commission's updates, in order: the refund's reversal, the approval, its payout, payment.
	var statuses []string
	for _, d := range got {
		if d.event.Type == "commission.updated" && d.event.Data["id"] == c["id"] {
			statuses = append(statuses, fmt.Sprintf("%v→%v", d.event.Data["previous_status"], d.event.Data["status"]))
		}
	}
	if w := []string{"pending→pending", "pending→approved", "approved→in_payout", "in_payout→paid"}; !slices.Equal(statuses, w) {
		t.Errorf("commission %v went %v, want %v", c["id"], statuses, w)
	}
	// Each body fits the spec's schema of its type (its data the API's schema of the resource).
	for _, d := range got {
		fitsWebhookSchema(t, d.event.Type, d.body)
	}
	// Data is the resource when the event is first sent (here, after everything: the partner's new name),
	// with the status the event moved it to.
	if paid["status"] != "paid" || failed["status"] != "failed" {
		t.Fatalf("payouts %v %v", paid["status"], failed["status"])
	}
	sameResource(t, "payout.paid", last["payout.paid"].event.Data, f.data(f.do(http.MethodGet, payout(po["id"]), nil), http.StatusOK))
	sameResource(t, "payout.failed", last["payout.failed"].event.Data, f.data(f.do(http.MethodGet, payout(po2["id"]), nil), http.StatusOK))
	for _, d := range got {
		if d.event.Type == "payout.created" && d.event.Data["status"] != "processing" {
			t.Errorf("payout.created with status %v", d.event.Data["status"])
		}
	}
	sameResource(t, "link.updated", last["link.updated"].event.Data, link)
	now := f.data(f.do(http.MethodGet, commission(c2["id"]), nil), http.StatusOK)
	sameResource(t, "commission.updated", last["commission.updated"].event.Data, now)
	if r := last["sale.refunded"].event.Data; r["refunded_amount_cents"] != float64(2000) || r["refund"].(map[string]any)["amount_cents"] != float64(2000) {
		t.Errorf("sale.refunded data %v", r)
	}
	if p := last["partner.updated"].event.Data; p["name"] != "Ann B" || p["id"] != float64(partnerID) {
		t.Errorf("partner.updated data %v", p)
	}
	// The metrics count what the worker did (the test's worker reports to the server's metrics).
	metrics := string(f.env.Do(http.MethodGet, "/metrics", nil).Body)
	for _, line := range []string{fmt.Sprintf(`reftrack_outbound_webhook_attempts_total{outcome="succeeded"} %d`, len(got)),
		fmt.Sprintf("reftrack_outbound_webhook_lag_seconds_count %d", len(got))} {
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	var quietEvents int
	if err := f.env.DB.Get(&quietEvents, `SELECT count(*) FROM webhook_events WHERE program_id = $1`, quiet.r.ProgramID); err != nil || quietEvents != 0 {
		t.Errorf("a program without endpoints has %d events (%v)", quietEvents, err)
	}
}

// The endpoint routes: create with the secret shown once, list and get without it, change, the limit
// of 10, the URL rule, rotate, delete; the log, resend, recover and test; each refusal in the platform
// envelope, changing nothing.
func TestWebhookEndpointRoutes(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	rc := newHookReceiver(t)
	hooks := f.base + "/webhook-endpoints"
	ep := f.data(f.do(http.MethodPost, hooks, map[string]any{"url": rc.srv.URL, "events": []string{"sale.created", "lead.created", "sale.created"}}), http.StatusCreated)
	if s, _ := ep["secret"].(string); !strings.HasPrefix(s, "whsec_") || len(s) != len("whsec_")+44 {
		t.Fatalf("secret %q", s)
	}
	if fmt.Sprint(ep["events"]) != "[lead.created sale.created]" || ep["enabled"] != true {
		t.Errorf("created %v", ep)
	}
	path := fmt.Sprintf("/api/v1/webhook-endpoints/%v", ep["id"])
	got := f.data(f.do(http.MethodGet, path, nil), http.StatusOK)
	if _, shown := got["secret"]; shown {
		t.Error("GET shows the secret")
	}
	for _, c := range []struct {
		body    map[string]any
		message string
	}{
		{map[string]any{"url": "http://10.0.0.1/hook"}, "url must be a public https URL"},
		{map[string]any{"url": "ftp://127.0.0.1/hook"}, "url must begin with https:// (a server in development also takes http://)"},
		{map[string]any{"url": "not a url"}, "url must be an absolute URL, such as https://hooks.example.com/reftrack"},
		{map[string]any{"url": "https://user:pw@hooks.example.com/h"}, "url must not hold a user name or password"},
		{map[string]any{"url": "https://hooks.example.com:0/h"}, "url's port must be between 1 and 65535"},
		{map[string]any{"url": "http://169.254.169.254/latest"}, "url must be a public https URL"},
		{map[string]any{"url": "https://no-such-host.invalid/hook"}, "url's host does not resolve: check its name"},
		{map[string]any{"url": rc.srv.URL, "description": strings.Repeat("é", 501)}, "Invalid request body: description: maximum string length is 500"},
	} {
		res := f.do(http.MethodPost, hooks, c.body)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), c.message) {
			t.Errorf("%v: %d %s, want 400 %q", c.body, res.Status, res.Body, c.message)
		}
	}
	// A URL once per program: added again, or another endpoint changed to it, is a conflict; nothing changes.
	dup := platformError(t, f.do(http.MethodPost, hooks, map[string]any{"url": ep["url"]}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Endpoint %v of this program already has this URL: every event would arrive twice. Choose its events, or remove it first.", ep["id"]))
	if dup["code"] != "conflict" {
		t.Errorf("code %v", dup["code"])
	}
	second := f.data(f.do(http.MethodPost, hooks, map[string]any{"url": rc.srv.URL + "/second"}), http.StatusCreated)
	secondPath := fmt.Sprintf("/api/v1/webhook-endpoints/%v", second["id"])
	platformError(t, f.do(http.MethodPatch, secondPath, map[string]any{"url": ep["url"]}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Endpoint %v of this program already has this URL: every event would arrive twice. Choose its events, or remove it first.", ep["id"]))
	if got := f.data(f.do(http.MethodPatch, secondPath, map[string]any{"url": rc.srv.URL + "/second", "description": "same URL"}), http.StatusOK); got["description"] != "same URL" {
		t.Errorf("an endpoint keeping its own URL: %v", got)
	}
	if n := f.env.Count(`SELECT count(*) FROM webhook_endpoints WHERE url = $1`, ep["url"]); n != 1 {
		t.Errorf("%d endpoints with the first URL", n)
	}
	for i := 2; i < 10; i++ {
		f.data(f.do(http.MethodPost, hooks, map[string]any{"url": fmt.Sprintf("%s/%d", rc.srv.URL, i)}), http.StatusCreated)
	}
	platformError(t, f.do(http.MethodPost, hooks, map[string]any{"url": rc.srv.URL}), http.StatusBadRequest, "BadRequestError",
		"a program has at most 10 webhook endpoints")
	if list := f.list(f.do(http.MethodGet, hooks, nil), http.StatusOK); len(list) != 10 || list[0]["id"] != ep["id"] {
		t.Errorf("list of %d, first %v", len(list), list[0]["id"])
	}
	// Changes: every type again, disabled by a member, enabled again.
	ch := f.data(f.do(http.MethodPatch, path, map[string]any{"events": []string{}, "enabled": false}), http.StatusOK)
	if ch["events"] != nil || ch["enabled"] != false || ch["disabled_reason"] != "disabled by a member" {
		t.Errorf("changed %v", ch)
	}
	ch = f.data(f.do(http.MethodPatch, path, map[string]any{"enabled": true, "description": "books"}), http.StatusOK)
	if ch["enabled"] != true || ch["disabled_reason"] != nil || ch["description"] != "books" {
		t.Errorf("enabled %v", ch)
	}
	rot := f.data(f.do(http.MethodPost, path+"/rotate-secret", nil), http.StatusOK)
	if rot["secret"] == ep["secret"] || rot["secret_rotating_until"] == nil {
		t.Errorf("rotated %v", rot)
	}
	// A test event, delivered; resent with the same webhook id; recovered (nothing failed: none queued).
	d := f.data(f.do(http.MethodPost, path+"/test", map[string]any{"event_type": "payout.paid"}), http.StatusAccepted)
	if d["status"] != "pending" || d["is_test"] != true || d["event_type"] != "payout.paid" {
		t.Errorf("test delivery %v", d)
	}
	deliverAll(t, f.env)
	deliveries := fmt.Sprintf("%s/deliveries", path)
	log := f.list(f.do(http.MethodGet, deliveries, nil), http.StatusOK)
	if len(log) != 1 || log[0]["status"] != "succeeded" || len(log[0]["attempts"].([]any)) != 1 {
		t.Fatalf("log %v", log)
	}
	resent := f.data(f.do(http.MethodPost, fmt.Sprintf("/api/v1/webhook-deliveries/%v/resend", d["id"]), nil), http.StatusAccepted)
	if resent["status"] != "pending" || resent["webhook_id"] != d["webhook_id"] {
		t.Errorf("resent %v", resent)
	}
	deliverAll(t, f.env)
	if r := rc.deliveries(); len(r) != 2 || r[0].header.Get("webhook-id") != r[1].header.Get("webhook-id") ||
		len(strings.Fields(r[1].header.Get("webhook-signature"))) != 2 {
		t.Errorf("deliveries after the resend: %d", len(r))
	}
	rec := f.data(f.do(http.MethodPost, path+"/recover", map[string]any{"since": f.clock.Now().Add(-time.Hour).Format(time.RFC3339)}), http.StatusAccepted)
	if rec["queued"] != float64(0) {
		t.Errorf("recover queued %v", rec["queued"])
	}
	platformError(t, f.do(http.MethodPost, path+"/recover", map[string]any{"since": f.clock.Now().Add(time.Hour).Format(time.RFC3339)}),
		http.StatusBadRequest, "BadRequestError", "since must not be in the future")
	if page := f.list(f.do(http.MethodGet, deliveries+"?status=failed", nil), http.StatusOK); len(page) != 0 {
		t.Errorf("failed deliveries %v", page)
	}
	platformError(t, f.do(http.MethodGet, deliveries+"?cursor=bm90", nil), http.StatusBadRequest, "BadRequestError", "cursor is not valid")
	// Another workspace's endpoint is not found, whatever the route.
	other := f.another()
	for _, r := range []struct{ method, path string }{{http.MethodGet, path}, {http.MethodDelete, path}, {http.MethodGet, deliveries},
		{http.MethodPost, path + "/rotate-secret"}, {http.MethodPost, fmt.Sprintf("/api/v1/webhook-deliveries/%v/resend", d["id"])}} {
		if res := other.do(r.method, r.path, nil); res.Status != http.StatusForbidden && res.Status != http.StatusNotFound {
			t.Errorf("another workspace's %s %s: %d %s", r.method, r.path, res.Status, res.Body)
		}
	}
	platformError(t, f.do(http.MethodGet, "/api/v1/webhook-endpoints/999999", nil), http.StatusNotFound, "NotFoundError", "Webhook endpoint not found")
	platformError(t, f.do(http.MethodPost, "/api/v1/webhook-deliveries/999999/resend", nil), http.StatusNotFound, "NotFoundError", "Webhook delivery not found")
	if res := f.do(http.MethodDelete, path, nil); res.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	platformError(t, f.do(http.MethodGet, path, nil), http.StatusNotFound, "NotFoundError", "Webhook endpoint not found")
}

// Owner and admin manage webhooks; billing and analyst are refused, each in the platform envelope.
func TestWebhookRoles(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	ep := f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": "http://127.0.0.1:9/h"}), http.StatusCreated)
	for _, role := range []string{"owner", "admin", "billing", "analyst"} {
		token := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, role))
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, f.base + "/webhook-endpoints", nil},
			{http.MethodGet, fmt.Sprintf("/api/v1/webhook-endpoints/%v/deliveries", ep["id"]), nil},
			{http.MethodPost, fmt.Sprintf("/api/v1/webhook-endpoints/%v/test", ep["id"]), map[string]any{"event_type": "lead.created"}},
		} {
			res := f.env.Do(r.method, r.path, r.body, token...)
			if role == "billing" || role == "analyst" {
				platformError(t, res, http.StatusForbidden, "ForbiddenError", "Your role ("+role+") does not allow this (webhooks:manage)")
			} else if res.Status >= 300 {
				t.Errorf("%s: %s %s: %d %s", role, r.method, r.path, res.Status, res.Body)
			}
		}
	}
}
