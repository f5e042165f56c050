package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/reftrack/reftrack/sdk"
)

// The webhooks commands against the real server, as a program's owner runs them, delivering to a real
// receiver through the server's worker (env.Webhooks.RunOnce: the test decides when deliveries go out).

// receiver is a brand's webhook endpoint: it keeps every request and answers 202.
type receiver struct {
	url  string
	mu   sync.Mutex
	reqs []received
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, received{req.Header.Clone(), body})
		r.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "thanks")
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks/reftrack"
	return r
}

// verified is every request received since the first from, each verified with secret as a brand's
// receiver verifies it (the Go SDK).
func (r *receiver) verified(t *testing.T, from int, secret string) []sdk.WebhookEvent {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdk.WebhookEvent
	for _, req := range r.reqs[from:] {
		ev, err := sdk.VerifyWebhook(secret, req.header, req.body)
		if err != nil {
			t.Fatalf("a delivery does not verify with the secret the CLI printed: %v\n%v %s", err, req.header, req.body)
		}
		out = append(out, ev)
	}
	return out
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

func TestCLIWebhooks(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	rcv := newReceiver(t)
	deliver := func(want int) {
		t.Helper()
		if n, err := l.env.Webhooks.RunOnce(context.Background()); err != nil || n != want {
			t.Fatalf("the worker attempted %d deliveries (%v), want %d", n, err, want)
		}
	}
	secretRE := regexp.MustCompile(`Signing secret \(shown only now; it cannot be shown again\): (whsec_[A-Za-z0-9+/]{43}=)\n`)

	// add: the secret once, and how to verify with it.
	out := l.must("webhooks", "add", rcv.url, "--events", "sale.created,commission.created", "--description", "Books sales")
	m := regexp.MustCompile(`^Added webhook endpoint (\d+) to program (\d+): (\S+) \(commission\.created,sale\.created\)\.\n`).FindStringSubmatch(out)
	s := secretRE.FindStringSubmatch(out)
	if m == nil || s == nil || m[2] != l.programID() || m[3] != rcv.url ||
		!strings.Contains(out, "Standard Webhooks") || !strings.Contains(out, "sdk.VerifyWebhook(secret, r.Header, body)") ||
		!strings.Contains(out, "Next: `reftrack webhooks test "+m[1]+"`") {
		t.Fatalf("add printed\n%s", out)
	}
	id, secret := m[1], s[1]
	if n := l.env.Count(`SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND description = 'Books sales'`, id); n != 1 {
		t.Error("the endpoint was not added")
	}

	// list: a table, and the server's answer as JSON (never a secret).
	out = l.must("webhooks", "list")
	if !row("ID", "URL", "STATUS", "EVENTS", "DESCRIPTION").MatchString(out) ||
		!row(id, rcv.url, "enabled", "commission.created,sale.created", "Books sales").MatchString(out) {
		t.Errorf("list printed\n%s", out)
	}
	printed := l.must("webhooks", "list", "--json")
	l.sameJSON(printed, l.base+"/webhook-endpoints")
	if strings.Contains(printed, "whsec_") {
		t.Errorf("list --json shows a secret: %s", printed)
	}

	// test: queued, then delivered by the worker to the receiver, signed with the secret add printed.
	out = l.must("webhooks", "test", id)
	m = regexp.MustCompile(`^Queued a test sale\.created to endpoint ` + id + `: delivery (\d+), webhook-id (msg_\w+)\.\n` +
		"Next: `reftrack webhooks deliveries " + id + "` shows what your receiver answered.\n$").FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("test printed %q", out)
	}
	delivery, webhookID := m[1], m[2]
	out = l.must("webhooks", "deliveries", id)
	if !row("ID", "WEBHOOK ID", "EVENT", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "LAST RESPONSE").MatchString(out) ||
		!row(delivery, webhookID, "sale.created (test)", "pending", "0", "now", "-").MatchString(out) {
		t.Errorf("deliveries before the worker printed\n%s", out)
	}
	deliver(1)
	if evs := rcv.verified(t, 0, secret); len(evs) != 1 || evs[0].ID != webhookID || evs[0].Type != "sale.created" {
		t.Fatalf("the receiver got %+v", evs)
	}
	if out := l.must("webhooks", "deliveries", id); !row(delivery, webhookID, "sale.created (test)", "succeeded", "1", "-", "202").MatchString(out) {
		t.Errorf("deliveries after the worker printed\n%s", out)
	}

	// resend: the same webhook-id again.
	out = l.must("webhooks", "resend", delivery)
	if out != "Delivery "+delivery+" (sale.created, "+webhookID+") is queued again, at once, with the same webhook-id.\n"+
		"Next: `reftrack webhooks deliveries "+id+"` shows its attempts.\n" {
		t.Errorf("resend printed %q", out)
	}
	deliver(1)
	if evs := rcv.verified(t, 1, secret); len(evs) != 1 || evs[0].ID != webhookID {
		t.Fatalf("the resend reached the receiver as %+v", evs)
	}
	if out := l.must("webhooks", "deliveries", id); !row(delivery, webhookID, "sale.created (test)", "succeeded", "2", "-", "202").MatchString(out) {
		t.Errorf("deliveries after the resend printed\n%s", out)
	}

	// disable, a sale meanwhile (nothing delivered), enable, recover what was missed.
	if out := l.must("webhooks", "disable", id); !strings.HasPrefix(out, "Webhook endpoint "+id+" is disabled: it receives nothing") {
		t.Errorf("disable printed %q", out)
	}
	if out := l.must("webhooks", "list"); !row(id, rcv.url, "disabled", "commission.created,sale.created", "Books sales").MatchString(out) ||
		!strings.Contains(out, "Endpoint "+id+" is disabled (disabled by a member): `reftrack webhooks enable "+id+"`") {
		t.Errorf("list of a disabled endpoint printed\n%s", out)
	}
	l.sale("txn-hook", 10000, "USD")
	deliver(0)
	if out := l.must("webhooks", "enable", id); !strings.HasPrefix(out, "Webhook endpoint "+id+" is enabled") ||
		!strings.Contains(out, "`reftrack webhooks recover "+id+" --since 24h`") {
		t.Errorf("enable printed %q", out)
	}
	deliver(0)
	out = l.must("webhooks", "recover", id, "--since", "1h")
	if !regexp.MustCompile(`^Queued 2 deliveries to endpoint ` + id + `: the events since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ it did not get\.\n`).MatchString(out) {
		t.Errorf("recover printed %q", out)
	}
	deliver(2)
	types := map[string]bool{}
	for _, ev := range rcv.verified(t, 2, secret) {
		types[ev.Type] = true
	}
	if len(types) != 2 || !types["sale.created"] || !types["commission.created"] {
		t.Errorf("recovered events %v", types)
	}
	if out := l.must("webhooks", "recover", id, "--since", "1h"); !strings.HasPrefix(out, "Nothing to recover: endpoint "+id+" got every event of its types since ") {
		t.Errorf("recover again printed %q", out)
	}
	var recovered struct{ Data map[string]any }
	if err := json.Unmarshal([]byte(l.must("webhooks", "recover", id, "--since", "2026-01-01T00:00:00Z", "--json")), &recovered); err != nil ||
		recovered.Data["queued"] != float64(0) {
		t.Errorf("recover --json: %+v %v", recovered, err)
	}

	// deliveries: filters, pages, JSON.
	path := "/api/v1/webhook-endpoints/" + id + "/deliveries"
	l.sameJSON(l.must("webhooks", "deliveries", id, "--json"), path)
	printed = l.must("webhooks", "deliveries", id, "--json", "--status", "succeeded", "--event-type", "commission.created")
	l.sameJSON(printed, path+"?status=succeeded&event_type=commission.created")
	var page struct {
		Data []struct {
			EventType string `json:"event_type"`
			IsTest    bool   `json:"is_test"`
			Attempts  []struct {
				ResponseStatus int    `json:"response_status"`
				ResponseBody   string `json:"response_body"`
			} `json:"attempts"`
		} `json:"data"`
		Meta map[string]any `json:"meta"`
	}
	if err := json.Unmarshal([]byte(printed), &page); err != nil || len(page.Data) != 1 || page.Data[0].EventType != "commission.created" ||
		page.Data[0].IsTest || len(page.Data[0].Attempts) != 1 || page.Data[0].Attempts[0].ResponseStatus != 202 ||
		page.Data[0].Attempts[0].ResponseBody != "thanks" {
		t.Errorf("deliveries --json printed %s (%v)", printed, err)
	}
	if out := l.must("webhooks", "deliveries", id, "--status", "failed"); out != "No deliveries.\n" {
		t.Errorf("--status failed printed %q", out)
	}
	if out := l.must("webhooks", "deliveries", id, "--limit", "1"); strings.Count(out, "\n") != 3 || !strings.HasSuffix(out, "More deliveries: run it with --all to list every page.\n") {
		t.Errorf("--limit 1 printed\n%s", out)
	}
	sent := l.sent.count("GET " + path)
	out = l.must("webhooks", "deliveries", id, "--limit", "1", "--all")
	if n := l.sent.count("GET "+path) - sent; n != 3 || strings.Count(out, "succeeded") != 3 || strings.Contains(out, "More") {
		t.Errorf("--all sent %d requests and printed\n%s", n, out)
	}

	// rotate-secret: a new secret, once; deliveries verify with it (and with the previous one, for a day).
	out = l.must("webhooks", "rotate-secret", id)
	s = secretRE.FindStringSubmatch(out)
	if s == nil || s[1] == secret || !strings.HasPrefix(out, "New signing secret for webhook endpoint "+id+".\n") ||
		!regexp.MustCompile(`Until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ every delivery carries two signatures`).MatchString(out) {
		t.Fatalf("rotate-secret printed\n%s", out)
	}
	l.must("webhooks", "test", id, "--event-type", "payout.paid")
	deliver(1)
	if evs := rcv.verified(t, 4, s[1]); len(evs) != 1 || evs[0].Type != "payout.paid" {
		t.Errorf("after the rotation the receiver got %+v", evs)
	}
	rcv.verified(t, 4, secret)

	// Errors: the server's message once, the next step, a failed exit.
	for _, tc := range []struct {
		args []string
		want string // a pattern of the whole of standard error
	}{
		{[]string{"webhooks", "deliveries", "999999"}, "^Error: Webhook endpoint not found\n\\(request id [^)]+\\)\n" +
			"Next: `reftrack webhooks list` lists the program's endpoints with their ids \\(--program ID for another program's\\)\\.$"},
		{[]string{"webhooks", "test", "999999"}, "^Error: Webhook endpoint not found\n"},
		{[]string{"webhooks", "resend", "999999"}, "^Error: Webhook delivery not found\n\\(request id [^)]+\\)\n" +
			"Next: `reftrack webhooks deliveries ENDPOINT_ID` lists an endpoint's deliveries"},
		{[]string{"webhooks", "recover", id, "--since", "2999-01-01T00:00:00Z"}, "^Error: since must not be in the future\n"},
		{[]string{"webhooks", "add", "http://10.0.0.1/hook"}, "^Error: url must be a public https URL\n\\(request id [^)]+\\)\n" +
			"Next: a production server takes https:// URLs"},
		{[]string{"webhooks", "list", "--program", "999999"}, "\nNext: "},
	} {
		out, errOut, err := l.run(tc.args...)
		if err == nil || out != "" || strings.Count(errOut, "Error:") != 1 || !regexp.MustCompile(tc.want).MatchString(errOut) {
			t.Errorf("reftrack %q: %v, printed %q and %q", tc.args, err, out, errOut)
		}
	}

	// What the server would refuse is refused before anything is sent.
	allTypes := strings.Join([]string{"lead.created", "sale.created", "sale.refunded", "commission.created", "commission.updated",
		"payout.created", "payout.paid", "payout.failed", "partner.created", "partner.updated", "link.updated"}, ", ")
	for _, tc := range []struct {
		args []string
		want string // the whole of standard error; "" for a required flag
	}{
		{[]string{"webhooks", "test", id, "--event-type", "sale.deleted"}, `Error: event type "sale.deleted" is not one of ` + allTypes},
		{[]string{"webhooks", "add", rcv.url, "--events", "sale.created,sales.created"}, `Error: event type "sales.created" is not one of ` + allTypes},
		{[]string{"webhooks", "add", ""}, "Error: url is required"},
		{[]string{"webhooks", "add", "https://x.example/" + strings.Repeat("a", 2040)}, "Error: url must be at most 2048 characters"},
		{[]string{"webhooks", "add", rcv.url, "--description", strings.Repeat("d", 501)}, "Error: description must be at most 500 characters"},
		{[]string{"webhooks", "add", rcv.url, "--description", "a\x00b"}, "Error: description must not contain NUL characters"},
		{[]string{"webhooks", "deliveries", id, "--status", "done"}, "Error: status must be one of pending, succeeded, failed"},
		{[]string{"webhooks", "deliveries", id, "--event-type", "x"}, `Error: event type "x" is not one of ` + allTypes},
		{[]string{"webhooks", "deliveries", id, "--limit", "101"}, "Error: limit must be between 1 and 100"},
		{[]string{"webhooks", "deliveries", "hook_1"}, "Error: a webhook endpoint is named by its id, a positive integer, not \"hook_1\"\n" +
			"Next: `reftrack webhooks list` lists them with their ids."},
		{[]string{"webhooks", "resend", "0"}, "Error: a webhook delivery is named by its id, a positive integer, not \"0\"\n" +
			"Next: `reftrack webhooks deliveries ENDPOINT_ID` lists an endpoint's deliveries with their ids."},
		{[]string{"webhooks", "recover", id, "--since", "yesterday"}, "Error: --since must be an RFC 3339 time or a duration back from now, not \"yesterday\"\n" +
			"Next: pass a time like 2026-03-05T08:00:00Z, or a duration like 2h, 90m or 7d."},
		{[]string{"webhooks", "recover", id, "--since", "-2h"}, "Error: --since must be an RFC 3339 time or a duration back from now, not \"-2h\"\n" +
			"Next: pass a time like 2026-03-05T08:00:00Z, or a duration like 2h, 90m or 7d."},
		{[]string{"webhooks", "recover", id}, ""},
		{[]string{"webhooks", "remove", id}, "Error: removing webhook endpoint " + id + " deletes its delivery log\n" +
			"Next: run it again with --yes to confirm, or `reftrack webhooks disable " + id + "` to stop its deliveries and keep the log."},
	} {
		sent := l.sent.total()
		out, errOut, err := l.run(tc.args...)
		switch {
		case err == nil || out != "":
			t.Errorf("reftrack %.80q: %v, printed %q", tc.args, err, out)
		case tc.want == "" && !strings.Contains(err.Error(), "required flag(s)"):
			t.Errorf("reftrack %.80q: %v, want a required flag", tc.args, err)
		case tc.want != "" && errOut != tc.want:
			t.Errorf("reftrack %.80q printed %q, want %q", tc.args, errOut, tc.want)
		}
		if n := l.sent.total() - sent; n != 0 {
			t.Errorf("reftrack %.80q sent %d requests; a refused value must not leave", tc.args, n)
		}
	}
	if out := l.must("webhooks", "recover", id, "--since", "7d"); !strings.HasPrefix(out, "Nothing to recover") {
		t.Errorf("--since 7d printed %q", out)
	}

	// --events with none: every type, as the server takes an empty list (another URL: a program has
	// each once).
	out = l.must("webhooks", "add", rcv.url+"/all", "--events", "")
	m = regexp.MustCompile(`^Added webhook endpoint (\d+) to program \d+: \S+ \(every event\)\.\n`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "Lost it? `reftrack webhooks rotate-secret "+m[1]+"` issues a new one.\n") {
		t.Fatalf("add --events \"\" printed\n%s", out)
	}
	if n := l.env.Count(`SELECT count(*) FROM webhook_endpoints WHERE id = $1 AND event_types IS NULL`, m[1]); n != 1 {
		t.Error("add --events \"\" did not take every type")
	}
	l.must("webhooks", "remove", m[1], "--yes")

	// remove: gone with its log.
	if out := l.must("webhooks", "remove", id, "--yes"); out != "Removed webhook endpoint "+id+" and its delivery log.\n" {
		t.Errorf("remove printed %q", out)
	}
	if out := l.must("webhooks", "list"); out != "No webhook endpoints. `reftrack webhooks add URL` adds one.\n" {
		t.Errorf("list after remove printed %q", out)
	}
	if n := l.env.Count(`SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1`, id); n != 0 {
		t.Errorf("%d deliveries left", n)
	}
}

// partnerProgram is the program's id, as the CLI prints it.
func (l *ledgerCLI) programID() string { return strings.TrimPrefix(l.base, "/api/v1/programs/") }
