package webhooks_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/pkg/api/webhookdata"
	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/seal"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/testkit/ports"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// receiver is a real HTTP server that answers each request with the next of its answers (the last
// repeats) and keeps what it received.
type receiver struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	got []received
	// answer decides each response; n counts from 1.
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

type received struct {
	path   string
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.URL.Path, r.Header.Clone(), b})
		n := len(rc.got)
		rc.mu.Unlock()
		rc.answer(n, w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func status(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// fixture is a seeded program, its owner, a store and a worker on a clock the test moves.
type fixture struct {
	t         *testing.T
	ctx       context.Context
	d         *dbtest.Database
	brand     seed.Result
	accountID int64
	store     *webhooks.Store
	worker    *webhooks.Worker
	mu        sync.Mutex
	now       time.Time
	seen      map[string]int // observed outcomes
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Parallel()
	f := &fixture{t: t, ctx: context.Background(), d: dbtest.New(t), now: time.Now().UTC().Truncate(time.Second),
		seen: map[string]int{}}
	var err error
	if f.brand, err = seed.Run(f.ctx, f.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Get(&f.accountID, `SELECT id FROM accounts WHERE email = $1`, f.brand.AccountEmail); err != nil {
		t.Fatal(err)
	}
	sealer, err := seal.New(seal.DevelopmentKey)
	if err != nil {
		t.Fatal(err)
	}
	policy := egress.Policy{Development: true}
	f.store = &webhooks.Store{DB: f.d.DB, Policy: policy, Sealer: sealer, Shape: webhookdata.Data}
	client := policy.Client(webhooks.Timeout)
	f.worker = &webhooks.Worker{DB: f.d.DB, Client: client, Sealer: sealer, Shape: webhookdata.Data, Now: f.clock,
		UserAgent: "reftrack-webhooks/test", Jitter: func() float64 { return 0.5 }, Observe: f}
	return f
}

func (f *fixture) WebhookLag(time.Duration) {}
func (f *fixture) WebhookAttempt(outcome string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen[outcome]++
}
func (f *fixture) WebhookDisabled(reason string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen["disabled: "+reason]++
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fixture) later(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *fixture) request() webhooks.Request {
	return webhooks.Request{AccountID: f.accountID, Email: f.brand.AccountEmail, Now: f.clock()}
}

func (f *fixture) endpoint(url string, types ...string) (webhooks.Endpoint, string) {
	f.t.Helper()
	in := webhooks.EndpointInput{URL: &url}
	if len(types) > 0 {
		in.EventTypes = &types
	}
	e, secret, err := f.store.Create(f.ctx, f.request(), f.brand.ProgramID, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return e, secret
}

// run attempts what is due and says how many it attempted.
func (f *fixture) run() int {
	f.t.Helper()
	n, err := f.worker.RunOnce(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) delivery(id int64) webhooks.Delivery {
	f.t.Helper()
	var endpointID int64
	if err := f.d.Get(&endpointID, `SELECT endpoint_id FROM webhook_deliveries WHERE id = $1`, id); err != nil {
		f.t.Fatal(err)
	}
	page, err := f.store.Deliveries(f.ctx, f.accountID, endpointID, webhooks.DeliveryFilter{Limit: 100})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, d := range page.Deliveries {
		if d.ID == id {
			return d
		}
	}
	f.t.Fatalf("delivery %d not in its endpoint's log", id)
	return webhooks.Delivery{}
}

// verify checks a request with the independent Standard Webhooks library and returns its body. The
// library reads the wall clock: a delivery made at a time the test moved is checked for its signature
// alone.
func verify(t *testing.T, secret string, r received) map[string]any {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	check := wh.Verify
	if ts, _ := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64); time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
		check = wh.VerifyIgnoringTimestamp
	}
	if err := check(r.body, r.header); err != nil {
		t.Fatalf("the Standard Webhooks library refuses the delivery: %v (headers %v)", err, r.header)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestDeliverySucceedsSignedAndLogged(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "thanks") })
	e, secret := f.endpoint(rc.srv.URL + "/hook")
	// At rest the secret is sealed: the row holds neither it nor its key bytes.
	var sealed []byte
	if err := f.d.Get(&sealed, `SELECT secret_sealed FROM webhook_endpoints WHERE id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if bytes.Contains(sealed, []byte(secret)) || bytes.Contains(sealed, key) || len(key) != 32 {
		t.Fatal("the secret is stored in the clear")
	}
	d, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.CommissionCreated)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != webhooks.StatusPending || !strings.HasPrefix(d.WebhookID, "msg_") || !d.IsTest {
		t.Fatalf("queued test delivery = %+v", d)
	}
	if n := f.run(); n != 1 {
		t.Fatalf("attempted %d, want 1", n)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests", len(reqs))
	}
	h := reqs[0].header
	if h.Get("webhook-id") != d.WebhookID || h.Get("content-type") != "application/json" ||
		h.Get("user-agent") != "reftrack-webhooks/test" || h.Get("webhook-timestamp") != fmt.Sprint(f.clock().Unix()) {
		t.Fatalf("headers %v", h)
	}
	body := verify(t, secret, reqs[0])
	data, _ := body["data"].(map[string]any)
	if body["type"] != webhooks.CommissionCreated || data["is_test"] != true || data["program_id"] != float64(f.brand.ProgramID) {
		t.Fatalf("body %v", body)
	}
	if _, err := time.Parse(time.RFC3339, body["timestamp"].(string)); err != nil {
		t.Fatalf("timestamp: %v", err)
	}
	got := f.delivery(d.ID)
	if got.Status != webhooks.StatusSucceeded || len(got.Attempts) != 1 || !got.Attempts[0].Succeeded ||
		*got.Attempts[0].ResponseStatus != 200 || *got.Attempts[0].ResponseBody != "thanks" {
		t.Fatalf("logged %+v %+v", got, got.Attempts)
	}
	if f.run() != 0 || len(rc.requests()) != 1 {
		t.Fatal("a succeeded delivery was attempted again")
	}
}

// A 500 then a 2xx: the retry comes on the schedule (5 s ± 10 %), with the same webhook-id and body, and
// a fresh timestamp and signature.
func TestRetryKeepsTheWebhookID(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.WriteHeader(500)
			io.WriteString(w, strings.Repeat("x", 3000))
			return
		}
		w.WriteHeader(204)
	})
	e, secret := f.endpoint(rc.srv.URL)
	d, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated)
	if err != nil {
		t.Fatal(err)
	}
	f.run()
	got := f.delivery(d.ID)
	if got.Status != webhooks.StatusPending || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(f.clock().Add(5*time.Second)) {
		t.Fatalf("after a 500: %+v (next %v)", got, got.NextAttemptAt)
	}
	if b := *got.Attempts[0].ResponseBody; len(b) != webhooks.ResponseBodySize {
		t.Fatalf("kept %d bytes of the response, want %d", len(b), webhooks.ResponseBodySize)
	}
	f.later(4 * time.Second)
	if f.run() != 0 {
		t.Fatal("attempted before its time")
	}
	f.later(time.Second)
	if f.run() != 1 {
		t.Fatal("not attempted when due")
	}
	reqs := rc.requests()
	if len(reqs) != 2 || reqs[0].header.Get("webhook-id") != reqs[1].header.Get("webhook-id") ||
		string(reqs[0].body) != string(reqs[1].body) || reqs[0].header.Get("webhook-timestamp") == reqs[1].header.Get("webhook-timestamp") {
		t.Fatalf("attempts differ: %v / %v", reqs[0].header, reqs[1].header)
	}
	verify(t, secret, reqs[1])
	if got := f.delivery(d.ID); got.Status != webhooks.StatusSucceeded || len(got.Attempts) != 2 {
		t.Fatalf("after a 204: %+v", got)
	}
}

func TestScheduleEndsInFailure(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(502))
	e, _ := f.endpoint(rc.srv.URL)
	d, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.LeadCreated)
	if err != nil {
		t.Fatal(err)
	}
	for i := range webhooks.Schedule {
		f.later(webhooks.Schedule[i])
		if n := f.run(); n != 1 {
			t.Fatalf("attempt %d: attempted %d", i+1, n)
		}
	}
	f.later(100 * time.Hour)
	if f.run() != 0 {
		t.Fatal("attempted after the schedule's end")
	}
	got := f.delivery(d.ID)
	if got.Status != webhooks.StatusFailed || len(got.Attempts) != len(webhooks.Schedule) {
		t.Fatalf("%+v with %d attempts", got, len(got.Attempts))
	}
	// A resend starts a schedule again, with the same webhook-id.
	resent, err := f.store.Resend(f.ctx, f.request(), d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if resent.Status != webhooks.StatusPending || len(resent.Attempts) != len(webhooks.Schedule) {
		t.Fatalf("resend answered %+v with %d attempts, want pending with the %d before", resent, len(resent.Attempts), len(webhooks.Schedule))
	}
	if f.run() != 1 {
		t.Fatal("resend not attempted at once")
	}
	reqs := rc.requests()
	if reqs[len(reqs)-1].header.Get("webhook-id") != d.WebhookID {
		t.Fatal("a resend changed the webhook-id")
	}
}

func TestGoneDisablesAtOnce(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(410))
	e, _ := f.endpoint(rc.srv.URL)
	first, _ := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.LeadCreated)
	f.run()
	second, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.LeadCreated)
	if err != nil {
		t.Fatal(err)
	}
	if f.run() != 0 {
		t.Fatal("a disabled endpoint was attempted")
	}
	got, err := f.store.Get(f.ctx, f.accountID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Enabled || got.DisabledReason == nil || *got.DisabledReason != webhooks.ReasonGone {
		t.Fatalf("endpoint after a 410: %+v", got)
	}
	if d := f.delivery(first.ID); d.Status != webhooks.StatusFailed {
		t.Fatalf("the 410's delivery: %s", d.Status)
	}
	if f.seen["disabled: gone"] != 1 || f.seen[webhooks.OutcomeGone] != 1 {
		t.Fatalf("observed %v", f.seen)
	}
	_ = second
}

// Failing every attempt for 5 days disables the endpoint; its pending deliveries fail, nothing more is
// sent, and Recover after enabling queues what did not succeed.
func TestFailingFiveDaysDisables(t *testing.T) {
	f := newFixture(t)
	failing := true
	var mu sync.Mutex
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			w.WriteHeader(500)
		}
	})
	e, _ := f.endpoint(rc.srv.URL)
	start := f.clock()
	for f.clock().Sub(start) < webhooks.DisableAfter {
		if _, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated); err != nil {
			t.Fatal(err)
		}
		f.run()
		f.later(12 * time.Hour)
	}
	f.later(-12 * time.Hour)
	got, _ := f.store.Get(f.ctx, f.accountID, e.ID)
	if !got.Enabled {
		t.Fatal("disabled before 5 days of failures")
	}
	f.later(12 * time.Hour)
	if _, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated); err != nil {
		t.Fatal(err)
	}
	f.run()
	got, _ = f.store.Get(f.ctx, f.accountID, e.ID)
	if got.Enabled || *got.DisabledReason != webhooks.ReasonFailing {
		t.Fatalf("after 5 days of failures: %+v", got)
	}
	var pending int
	if err := f.d.Get(&pending, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`, e.ID); err != nil || pending != 0 {
		t.Fatalf("pending deliveries of a disabled endpoint: %d %v", pending, err)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	on := true
	if _, err := f.store.Update(f.ctx, f.request(), e.ID, webhooks.EndpointInput{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	// Test events are not recovered (they were samples); a real event is: a link change.
	if _, err := f.d.Exec(`UPDATE referral_links SET enabled = false WHERE program_id = $1`, f.brand.ProgramID); err != nil {
		t.Fatal(err)
	}
	f.run()
	before := len(rc.requests())
	n, err := f.store.Recover(f.ctx, f.request(), e.ID, start)
	if err != nil || n != 0 {
		t.Fatalf("recover queued %d (%v): the link change succeeded already, and samples are not recovered", n, err)
	}
	if before == 0 {
		t.Fatal("the link change was not delivered")
	}
}

// Recover means now: a delivery waiting for a retry is attempted at the next pick-up, without the clock
// moving, as a failed one is (both with a full schedule again); one being attempted (its lease held) is
// left to that attempt, and one that succeeded is not sent again.
func TestRecoverSendsWaitingRetriesNow(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	up := false
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if !up {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	e, _ := f.endpoint(rc.srv.URL)
	start := f.clock()
	for _, name := range []string{"Waiting", "In flight"} {
		if _, err := f.d.Exec(`UPDATE partners SET name = $2 WHERE id = $1`, f.brand.PartnerID, name); err != nil {
			t.Fatal(err)
		}
	}
	// Two failed attempts each: the next is 5 minutes away.
	if n := f.run(); n != 2 {
		t.Fatalf("attempted %d, want 2", n)
	}
	f.later(webhooks.Schedule[1])
	if n := f.run(); n != 2 {
		t.Fatalf("attempted %d, want 2", n)
	}
	var ids []int64
	if err := f.d.Select(&ids, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id`, e.ID); err != nil || len(ids) != 2 {
		t.Fatalf("deliveries %v (%v)", ids, err)
	}
	waiting, inFlight := ids[0], ids[1]
	next := f.delivery(waiting).NextAttemptAt
	if next == nil || !next.Equal(f.clock().Add(webhooks.Schedule[2])) {
		t.Fatalf("waiting delivery's next attempt at %v, want %v", next, f.clock().Add(webhooks.Schedule[2]))
	}
	// Another replica has picked the second up and is attempting it.
	lease := f.clock().Add(time.Minute)
	if _, err := f.d.Exec(`UPDATE webhook_deliveries SET leased_until = $2 WHERE id = $1`, inFlight, lease); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	up = true
	mu.Unlock()

	n, err := f.store.Recover(f.ctx, f.request(), e.ID, start)
	if err != nil || n != 1 {
		t.Fatalf("recover queued %d (%v), want 1: the delivery waiting for its retry", n, err)
	}
	if n := f.run(); n != 1 {
		t.Fatalf("attempted %d at once after recover, want 1", n)
	}
	reqs := rc.requests()
	if got := f.delivery(waiting); got.Status != webhooks.StatusSucceeded || len(got.Attempts) != 3 ||
		reqs[len(reqs)-1].header.Get("webhook-id") != got.WebhookID {
		t.Fatalf("recovered delivery: %s with %d attempts", got.Status, len(got.Attempts))
	}
	var held struct {
		Status        string    `db:"status"`
		AttemptCount  int       `db:"attempt_count"`
		NextAttemptAt time.Time `db:"next_attempt_at"`
		LeasedUntil   time.Time `db:"leased_until"`
	}
	if err := f.d.Get(&held, `SELECT status, attempt_count, next_attempt_at, leased_until FROM webhook_deliveries WHERE id = $1`, inFlight); err != nil {
		t.Fatal(err)
	}
	if held.Status != webhooks.StatusPending || held.AttemptCount != 2 || !held.LeasedUntil.Equal(lease) || !held.NextAttemptAt.Equal(*next) {
		t.Fatalf("the delivery being attempted was changed: %+v", held)
	}
	if n, err := f.store.Recover(f.ctx, f.request(), e.ID, start); err != nil || n != 0 {
		t.Fatalf("recover again queued %d (%v), want 0: one succeeded, one is being attempted", n, err)
	}
}

// A Retry-After on 503 postpones the next attempt, up to the next step's delay.
func TestRetryAfter(t *testing.T) {
	for _, c := range []struct {
		n          int
		retryAfter time.Duration
		want       time.Duration
	}{
		{1, 0, 5 * time.Second},
		{1, 2 * time.Second, 5 * time.Second},
		{1, time.Minute, time.Minute},
		{1, time.Hour, 5 * time.Minute},
		{7, 50 * time.Hour, 10 * time.Hour},
	} {
		got, ok := webhooks.NextDelay(c.n, 0.5, c.retryAfter)
		if !ok || got != c.want {
			t.Errorf("NextDelay(%d, 0.5, %v) = %v %v, want %v", c.n, c.retryAfter, got, ok, c.want)
		}
	}
	if _, ok := webhooks.NextDelay(len(webhooks.Schedule), 0.5, 0); ok {
		t.Error("a delay after the last attempt")
	}
	for _, j := range []float64{0, 0.999999} {
		d, _ := webhooks.NextDelay(3, j, 0)
		if d < 27*time.Minute || d > 33*time.Minute {
			t.Errorf("jitter %v: %v outside 30 min ± 10 %%", j, d)
		}
	}
	f := newFixture(t)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(503)
		}
	})
	e, _ := f.endpoint(rc.srv.URL)
	d, _ := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated)
	f.run()
	if got := f.delivery(d.ID); got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(f.clock().Add(time.Minute)) {
		t.Fatalf("next attempt %v, want in 60 s", got.NextAttemptAt)
	}
}

// Redirects are failures, never followed; a receiver slower than the timeout is a failure too; a
// refused connection is an error. Each is logged with what happened.
func TestRedirectsTimeoutsAndRefusals(t *testing.T) {
	f := newFixture(t)
	var followed sync.WaitGroup
	redirect := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			t.Error("the redirect was followed")
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	release := make(chan struct{})
	slow := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	// A port held without a listener (ports.Refusing): one freed by closing a server could be another
	// test's by the time the worker connects, and answer.
	closedURL := "http://" + ports.Refusing(t)
	f.worker.Client = egress.Policy{Development: true}.Client(300 * time.Millisecond)
	var ids []int64
	for _, u := range []string{redirect.srv.URL, slow.srv.URL, closedURL} {
		e, _ := f.endpoint(u)
		d, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.PayoutPaid)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	f.run()
	followed.Wait()
	r := f.delivery(ids[0])
	if r.Status != webhooks.StatusPending || *r.Attempts[0].ResponseStatus != 302 || r.Attempts[0].Succeeded {
		t.Fatalf("redirect: %+v %+v", r, r.Attempts)
	}
	for _, id := range ids[1:] {
		d := f.delivery(id)
		if d.Status != webhooks.StatusPending || d.Attempts[0].ResponseStatus != nil || d.Attempts[0].Error == nil {
			t.Fatalf("no answer: %+v %+v", d, d.Attempts)
		}
	}
	if f.seen[webhooks.OutcomeFailed] != 1 || f.seen[webhooks.OutcomeError] != 2 {
		t.Fatalf("outcomes %v", f.seen)
	}
}

// For RotationOverlap after a rotation, deliveries carry both signatures: a receiver with either secret
// verifies them; after it, only the new one.
func TestRotationSignsWithBoth(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(200))
	e, old := f.endpoint(rc.srv.URL)
	_, fresh, err := f.store.RotateSecret(f.ctx, f.request(), e.ID)
	if err != nil || fresh == old || !strings.HasPrefix(fresh, "whsec_") {
		t.Fatalf("rotate: %v %q", err, fresh)
	}
	f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.PartnerCreated)
	f.run()
	f.later(webhooks.RotationOverlap)
	f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.PartnerCreated)
	f.run()
	reqs := rc.requests()
	if len(reqs) != 2 || len(strings.Fields(reqs[0].header.Get("webhook-signature"))) != 2 ||
		len(strings.Fields(reqs[1].header.Get("webhook-signature"))) != 1 {
		t.Fatalf("signatures: %q then %q", reqs[0].header.Get("webhook-signature"), reqs[1].header.Get("webhook-signature"))
	}
	// The library checks the signature, not the clock we moved: verify the first at its own time.
	verify(t, fresh, reqs[0])
	verify(t, old, reqs[0])
	verify(t, fresh, reqs[1])
	wh, _ := standardwebhooks.NewWebhook(old)
	if wh.VerifyIgnoringTimestamp(reqs[1].body, reqs[1].header) == nil {
		t.Fatal("the rotated-out secret still verifies after the overlap")
	}
}

// In the server's loop (Run), a slow receiver holds one slot, not the others: a delivery to a fast
// endpoint goes out while the slow one is still waiting for its answer; stopping Run waits for the slow
// attempt and records both.
func TestSlowReceiverHoldsOnlyItsSlot(t *testing.T) {
	f := newFixture(t)
	release, slowGot := make(chan struct{}), make(chan struct{}, 1)
	slow := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		slowGot <- struct{}{}
		<-release
	})
	fastGot := make(chan struct{}, 1)
	fast := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { fastGot <- struct{}{} })
	se, _ := f.endpoint(slow.srv.URL)
	fe, _ := f.endpoint(fast.srv.URL)
	stop := f.runLoop()
	s, _ := f.store.SendTest(f.ctx, f.request(), se.ID, webhooks.SaleCreated)
	f.worker.Wake()
	receive(t, slowGot, "the slow receiver's request")
	d, _ := f.store.SendTest(f.ctx, f.request(), fe.ID, webhooks.SaleCreated)
	f.worker.Wake()
	receive(t, fastGot, "the fast receiver's request while the slow one waits")
	close(release)
	stop()
	if got := f.delivery(s.ID); got.Status != webhooks.StatusSucceeded {
		t.Errorf("slow delivery %s", got.Status)
	}
	if got := f.delivery(d.ID); got.Status != webhooks.StatusSucceeded {
		t.Errorf("fast delivery %s", got.Status)
	}
}

// The outbox has no foreign keys (the schema says why): its triggers cascade. Clean drops the events past
// Retention with their deliveries and attempts, and nothing newer; deleting an endpoint drops its
// deliveries and their attempts, and the events stay for the program's other endpoints.
func TestCleanAndDeleteTakeDeliveriesAndAttempts(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(204))
	kept, _ := f.endpoint(rc.srv.URL + "/kept")
	gone, _ := f.endpoint(rc.srv.URL + "/gone")
	old, _ := f.store.SendTest(f.ctx, f.request(), kept.ID, webhooks.SaleCreated)
	f.run()
	f.later(webhooks.Retention + time.Hour)
	fresh, _ := f.store.SendTest(f.ctx, f.request(), kept.ID, webhooks.SaleCreated)
	other, _ := f.store.SendTest(f.ctx, f.request(), gone.ID, webhooks.SaleCreated)
	f.run()
	counts := func() (events, deliveries, attempts int) {
		t.Helper()
		if err := f.d.QueryRow(`SELECT (SELECT count(*) FROM webhook_events), (SELECT count(*) FROM webhook_deliveries),
			(SELECT count(*) FROM webhook_attempts)`).Scan(&events, &deliveries, &attempts); err != nil {
			t.Fatal(err)
		}
		return
	}
	if e, d, a := counts(); e != 3 || d != 3 || a != 3 {
		t.Fatalf("before: %d events, %d deliveries, %d attempts", e, d, a)
	}
	n, err := webhooks.Clean(f.ctx, f.d.DB, f.clock())
	if err != nil || n != 1 {
		t.Fatalf("Clean = %d, %v", n, err)
	}
	if e, d, a := counts(); e != 2 || d != 2 || a != 2 {
		t.Fatalf("after Clean: %d events, %d deliveries, %d attempts", e, d, a)
	}
	var left int
	if err := f.d.Get(&left, `SELECT count(*) FROM webhook_deliveries WHERE id = $1`, old.ID); err != nil || left != 0 {
		t.Fatalf("the old delivery is still there (%d, %v)", left, err)
	}
	if err := f.store.Delete(f.ctx, f.request(), gone.ID); err != nil {
		t.Fatal(err)
	}
	if e, d, a := counts(); e != 2 || d != 1 || a != 1 {
		t.Fatalf("after the endpoint's delete: %d events, %d deliveries, %d attempts", e, d, a)
	}
	if got := f.delivery(fresh.ID); got.Status != webhooks.StatusSucceeded || len(got.Attempts) != 1 {
		t.Fatalf("the kept endpoint's delivery: %+v", got)
	}
	if err := f.d.Get(&left, `SELECT count(*) FROM webhook_attempts WHERE delivery_id = $1`, other.ID); err != nil || left != 0 {
		t.Fatalf("the deleted endpoint's attempts are still there (%d, %v)", left, err)
	}
}

// In the server's loop, a busy replica's worker claims YieldClaim deliveries per YieldPause (by its
// clock) and no more: five due deliveries go out two, two and one as the clock passes each pause.
func TestBusyWorkerClaimsInSmallBatches(t *testing.T) {
	f := newFixture(t)
	got := make(chan struct{}, 10)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { got <- struct{}{} })
	e, _ := f.endpoint(rc.srv.URL)
	for range 5 {
		if _, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated); err != nil {
			t.Fatal(err)
		}
	}
	f.worker.Busy = func() bool { return true }
	f.worker.YieldClaim, f.worker.YieldPause = 2, 10*time.Second // well within a lease: none runs out
	defer f.runLoop()()
	claimed := 0
	for _, batch := range []int{2, 2, 1} {
		for range batch {
			receive(t, got, fmt.Sprintf("delivery %d", claimed+1))
			claimed++
		}
		// The clock stands still: until it passes the pause, wakes claim nothing more.
		f.worker.Wake()
		if n := pendingUnleased(t, f); n != 5-claimed {
			t.Fatalf("after %d received, %d pending and not leased, want %d", claimed, n, 5-claimed)
		}
		f.later(10 * time.Second)
		f.worker.Wake()
	}
	if n := len(rc.requests()); n != 5 {
		t.Fatalf("received %d", n)
	}
}

// runLoop runs the worker's server loop (Run) until the returned stop, which waits for it to end.
func (f *fixture) runLoop() (stop func()) {
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() { f.worker.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// receive waits for a signal on c; 10 s is a bound on a failure, not a wait for success.
func receive(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never came", what)
	}
}

// pendingUnleased counts the deliveries no replica holds.
func pendingUnleased(t *testing.T, f *fixture) int {
	t.Helper()
	var n int
	if err := f.d.Get(&n, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND leased_until IS NULL`); err != nil {
		t.Fatal(err)
	}
	return n
}

// A member disables the endpoint while an attempt is out: the attempt that succeeds leaves its delivery
// succeeded (the receiver has it), the one that fails leaves it failed, not pending for a retry.
func TestDisabledWhileAttemptIsOut(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	code := 204
	arrived, release := make(chan struct{}), make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		arrived <- struct{}{}
		<-release
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(code)
	})
	e, _ := f.endpoint(rc.srv.URL)
	off, on := false, true
	for _, c := range []int{204, 500} {
		mu.Lock()
		code = c
		mu.Unlock()
		d, err := f.store.SendTest(f.ctx, f.request(), e.ID, webhooks.SaleCreated)
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan int)
		go func() { n, _ := f.worker.RunOnce(f.ctx); ran <- n }()
		<-arrived
		if _, err := f.store.Update(f.ctx, f.request(), e.ID, webhooks.EndpointInput{Enabled: &off}); err != nil {
			t.Fatal(err)
		}
		release <- struct{}{}
		if n := <-ran; n != 1 {
			t.Fatalf("attempted %d", n)
		}
		want := webhooks.StatusSucceeded
		if c != 204 {
			want = webhooks.StatusFailed
		}
		if got := f.delivery(d.ID); got.Status != want || len(got.Attempts) != 1 || got.Attempts[0].Succeeded != (c == 204) {
			t.Fatalf("answered %d while disabled: %s with %d attempts", c, got.Status, len(got.Attempts))
		}
		if _, err := f.store.Update(f.ctx, f.request(), e.ID, webhooks.EndpointInput{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
	}
}

// The worker fans each event out when it first picks it up, to the endpoints of its program that take its
// type and have been enabled since before it happened: not to one created after it, nor to one that was
// disabled then and enabled again before the worker came to it (those events are recover's).
func TestFanOutToEndpointsEnabledWhenItHappened(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(204))
	a, _ := f.endpoint(rc.srv.URL + "/a")
	f.endpoint(rc.srv.URL+"/b", webhooks.SaleCreated)
	rename := func(name string) {
		t.Helper()
		if _, err := f.d.Exec(`UPDATE partners SET name = $2 WHERE id = $1`, f.brand.PartnerID, name); err != nil {
			t.Fatal(err)
		}
	}
	enable := func(id int64, on bool) {
		t.Helper()
		if _, err := f.store.Update(f.ctx, f.request(), id, webhooks.EndpointInput{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
	}
	paths := func() map[string]int {
		got := map[string]int{}
		for _, r := range rc.requests() {
			got[r.path]++
		}
		return got
	}
	enable(a.ID, false)
	rename("While A was off")
	enable(a.ID, true)
	rename("After A was on again")
	f.endpoint(rc.srv.URL + "/c")
	if n := f.run(); n != 1 {
		t.Fatalf("attempted %d, want 1 (the second change, to A)", n)
	}
	if got := paths(); got["/a"] != 1 || len(got) != 1 {
		t.Fatalf("received %v, want one at /a", got)
	}
	rename("With A and C")
	if n := f.run(); n != 2 {
		t.Fatalf("attempted %d, want 2 (the third change, to A and C)", n)
	}
	if got := paths(); got["/a"] != 2 || got["/c"] != 1 || len(got) != 2 {
		t.Fatalf("received %v, want two at /a and one at /c", got)
	}
	n, err := f.store.Recover(f.ctx, f.request(), a.ID, f.clock().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("recover queued %d (%v), want 1: the change made while A was off", n, err)
	}
	if n := f.run(); n != 1 || paths()["/a"] != 3 {
		t.Fatalf("after recover: attempted %d, received %v", n, paths())
	}
}

// Events no endpoint takes (here, those of a time the endpoint was disabled) do not hold back the ones
// behind them until the next poll: the server's loop picks up again at once while a pick-up was full.
func TestPickUpGoesOnPastEventsNoEndpointTakes(t *testing.T) {
	f := newFixture(t)
	got := make(chan struct{}, 1)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { got <- struct{}{} })
	a, _ := f.endpoint(rc.srv.URL + "/a")
	f.worker.Slots, f.worker.Poll = 1, time.Hour // a pick-up takes 8 events; no poll comes
	off, on := false, true
	if _, err := f.store.Update(f.ctx, f.request(), a.ID, webhooks.EndpointInput{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := f.d.Exec(`UPDATE partners SET name = $2 WHERE id = $1`, f.brand.PartnerID, fmt.Sprint("Off ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.Update(f.ctx, f.request(), a.ID, webhooks.EndpointInput{Enabled: &on}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Exec(`UPDATE partners SET name = 'On' WHERE id = $1`, f.brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	stop := f.runLoop()
	defer stop()
	f.worker.Wake()
	receive(t, got, "the event after 30 that no endpoint takes")
	var unsent int
	if err := f.d.Get(&unsent, `SELECT count(*) FROM webhook_events WHERE data IS NULL`); err != nil || unsent != 0 {
		t.Fatalf("%d events not picked up (%v)", unsent, err)
	}
	if n := len(rc.requests()); n != 1 {
		t.Fatalf("received %d, want 1", n)
	}
}

// recover may queue an event no worker has picked up yet: its delivery waits for the pick-up to render
// the event (a claim never sends an event without data), then goes out once, with the data.
func TestRecoverOfAnEventNotPickedUpYet(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, status(204))
	e, secret := f.endpoint(rc.srv.URL)
	f.later(time.Second)
	if _, err := f.d.Exec(`UPDATE partners SET name = 'Not picked up yet' WHERE id = $1`, f.brand.PartnerID); err != nil {
		t.Fatal(err)
	}
	if n, err := f.store.Recover(f.ctx, f.request(), e.ID, f.clock().Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("recover queued %d (%v), want the event not picked up yet", n, err)
	}
	if n := f.run(); n != 1 {
		t.Fatalf("attempted %d, want 1", n)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("received %d, want 1", len(reqs))
	}
	data, _ := verify(t, secret, reqs[0])["data"].(map[string]any)
	if data["name"] != "Not picked up yet" || data["id"] != float64(f.brand.PartnerID) {
		t.Fatalf("data %v", data)
	}
	if f.run() != 0 || len(rc.requests()) != 1 {
		t.Fatal("sent again")
	}
}
