package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// webhookSchemas is the spec's schema of each event type's body (WebhookEventBody's variants).
var webhookSchemas = map[string]string{
	webhooks.LeadCreated: "LeadCreatedWebhook", webhooks.SaleCreated: "SaleCreatedWebhook",
	webhooks.SaleRefunded: "SaleRefundedWebhook", webhooks.CommissionCreated: "CommissionCreatedWebhook",
	webhooks.CommissionUpdated: "CommissionUpdatedWebhook", webhooks.PayoutCreated: "PayoutCreatedWebhook",
	webhooks.PayoutPaid: "PayoutPaidWebhook", webhooks.PayoutFailed: "PayoutFailedWebhook",
	webhooks.PartnerCreated: "PartnerCreatedWebhook", webhooks.PartnerUpdated: "PartnerUpdatedWebhook",
	webhooks.LinkUpdated: "LinkUpdatedWebhook",
}

// fitsWebhookSchema checks a delivery's body against its type's schema and against WebhookEventBody (the
// union a receiver would decode), by both of apitest's readings of the spec.
func fitsWebhookSchema(t *testing.T, eventType string, body []byte) {
	t.Helper()
	schema, ok := webhookSchemas[eventType]
	if !ok {
		t.Errorf("no schema for event type %q", eventType)
		return
	}
	for _, name := range []string{schema, "WebhookEventBody"} {
		if err := apitest.CheckSchema(name, body); err != nil {
			t.Errorf("%s body does not fit: %v\n%s", eventType, err, body)
		}
	}
}

// camelCaseKeys lists the keys of v, at any depth, that are not snake_case (an upper-case letter).
func camelCaseKeys(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if strings.IndexFunc(k, unicode.IsUpper) >= 0 {
				out = append(out, at+k)
			}
			out = append(out, camelCaseKeys(v[k], at+k+".")...)
		}
	case []any:
		for i, e := range v {
			out = append(out, camelCaseKeys(e, fmt.Sprintf("%s%d.", at, i))...)
		}
	}
	return out
}

// extras are what an event type's data adds to the API's answer for its resource: what only the event's
// moment knew (the spec's CommissionUpdatedData and SaleRefundedData).
var extras = map[string][]string{webhooks.CommissionUpdated: {"previous_status"}, webhooks.SaleRefunded: {"refund"}}

// Every event type's data is the management API's answer for its resource, field for field: each change
// is delivered to a real receiver (the signature verified by the Standard Webhooks library), and its
// data compared with the API's GET answer for the resource read right after (checked against the spec
// like every exchange), exactly, less only the type's documented additions (commission.updated's
// previous_status, sale.refunded's refund). Every body fits its type's schema in the spec, and no key in
// it, at any depth, is camelCase.
func TestWebhookDataIsTheAPIAnswer(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual"})
	rc := newHookReceiver(t)
	ep := f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": rc.srv.URL}), http.StatusCreated)
	wh, err := standardwebhooks.NewWebhook(ep["secret"].(string))
	if err != nil {
		t.Fatal(err)
	}
	received := 0
	// delivered runs the worker and returns the deliveries since the last call, in the order the changes
	// happened, each verified, fitting its schema and free of camelCase.
	delivered := func() []hookDelivery {
		t.Helper()
		deliverAll(t, f.env)
		all := rc.deliveries()
		got := all[received:]
		received = len(all)
		sort.SliceStable(got, func(i, j int) bool { return got[i].event.Timestamp.Before(got[j].event.Timestamp) })
		for _, d := range got {
			if err := wh.Verify(d.body, d.header); err != nil {
				t.Errorf("%s: the Standard Webhooks library refuses it: %v", d.event.Type, err)
			}
			fitsWebhookSchema(t, d.event.Type, d.body)
			if keys := camelCaseKeys(d.event.Data, "data."); len(keys) > 0 {
				t.Errorf("%s: camelCase keys %v", d.event.Type, keys)
			}
		}
		return got
	}
	// one is the one delivery of type typ among got (and the types of got are want, in any order).
	one := func(got []hookDelivery, typ string, want ...string) hookDelivery {
		t.Helper()
		var types []string
		var out hookDelivery
		for _, d := range got {
			types = append(types, d.event.Type)
			if d.event.Type == typ {
				out = d
			}
		}
		slices.Sort(types)
		slices.Sort(want)
		if !slices.Equal(types, want) {
			t.Fatalf("delivered %v, want %v", types, want)
		}
		return out
	}
	// same compares the data with the API's answer: equal field for field once the type's additions are
	// set aside, which it returns.
	same := func(d hookDelivery, api map[string]any) map[string]any {
		t.Helper()
		var data map[string]any // decoded afresh: the receiver's copy is the test's to compare, not to change
		if err := json.Unmarshal(d.body, &struct {
			Data *map[string]any `json:"data"`
		}{&data}); err != nil {
			t.Fatal(err)
		}
		added := map[string]any{}
		for _, k := range extras[d.event.Type] {
			v, ok := data[k]
			if !ok {
				t.Errorf("%s data lacks %q", d.event.Type, k)
			}
			added[k] = v
			delete(data, k)
		}
		if diff := cmp.Diff(api, data); diff != "" {
			t.Errorf("%s data differs from the API's answer (-api +data):\n%s", d.event.Type, diff)
		}
		return added
	}
	get := func(path string) map[string]any {
		t.Helper()
		return f.data(f.do(http.MethodGet, path, nil), http.StatusOK)
	}
	inList := func(path, key string, id any) map[string]any {
		t.Helper()
		for _, e := range f.list(f.do(http.MethodGet, path, nil), http.StatusOK) {
			if e[key] == id {
				return e
			}
		}
		t.Fatalf("%s lists no %s %v", path, key, id)
		return nil
	}
	partnerOf := func(d hookDelivery) map[string]any {
		return inList(f.base+"/partners", "partner_program_id", d.event.Data["partner_program_id"])
	}

	// A partner joins (with a link, which is no event).
	partnerID, url := f.partner("Ann", "ann@example.com")
	d := one(delivered(), webhooks.PartnerCreated, webhooks.PartnerCreated)
	same(d, partnerOf(d))

	// A lead.
	r := f.r
	r.AffiliateURL = url
	customerWithLead(t, f.env, r, "cust-wh-1")
	d = one(delivered(), webhooks.LeadCreated, webhooks.LeadCreated)
	same(d, get(fmt.Sprintf("/api/v1/leads/%v", d.event.Data["id"])))

	// A sale and its commission.
	res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "wh-1", "amount_cents": 10000, "customer_key": "cust-wh-1"})
	if res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	got := delivered()
	d = one(got, webhooks.SaleCreated, webhooks.SaleCreated, webhooks.CommissionCreated)
	s := get(fmt.Sprintf("/api/v1/sales/%v", d.event.Data["id"]))
	same(d, s)
	if s["transaction_id"] != "wh-1" || s["processor_event_id"] != "wh-1" {
		t.Errorf("sale %v: transaction_id %v, processor_event_id %v, want wh-1 both", s["id"], s["transaction_id"], s["processor_event_id"])
	}
	d = one(got, webhooks.CommissionCreated, webhooks.SaleCreated, webhooks.CommissionCreated)
	c := commission(d.event.Data["id"])
	same(d, get(c))

	// A partial refund: the sale's refund, the commission reduced.
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "wh-1", "refund_amount_cents": 2000}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	got = delivered()
	added := same(one(got, webhooks.SaleRefunded, webhooks.SaleRefunded, webhooks.CommissionUpdated), get(fmt.Sprintf("/api/v1/sales/%v", s["id"])))
	if rf, _ := added["refund"].(map[string]any); rf["amount_cents"] != float64(2000) || rf["reason"] != "refund" {
		t.Errorf("sale.refunded's refund %v", added["refund"])
	}
	if added := same(one(got, webhooks.CommissionUpdated, webhooks.SaleRefunded, webhooks.CommissionUpdated), get(c)); added["previous_status"] != "pending" {
		t.Errorf("commission.updated after the refund: previous_status %v", added["previous_status"])
	}

	// Approved, paid out, paid.
	f.data(f.do(http.MethodPost, c+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	if added := same(one(delivered(), webhooks.CommissionUpdated, webhooks.CommissionUpdated), get(c)); added["previous_status"] != "pending" {
		t.Errorf("approval: previous_status %v", added["previous_status"])
	}
	po := payout(f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]["id"])
	got = delivered()
	same(one(got, webhooks.PayoutCreated, webhooks.PayoutCreated, webhooks.CommissionUpdated), get(po))
	same(one(got, webhooks.CommissionUpdated, webhooks.PayoutCreated, webhooks.CommissionUpdated), get(c))
	f.data(f.do(http.MethodPost, po+"/paid", map[string]any{"external_reference": "REF-1"}), http.StatusOK)
	got = delivered()
	same(one(got, webhooks.PayoutPaid, webhooks.PayoutPaid, webhooks.CommissionUpdated), get(po))
	same(one(got, webhooks.CommissionUpdated, webhooks.PayoutPaid, webhooks.CommissionUpdated), get(c))

	// Another sale, paid out, and the payout failed.
	c2 := commission(f.sale("wh-2", 5000, "USD", url)["id"])
	delivered()
	f.data(f.do(http.MethodPost, c2+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	delivered()
	po2 := payout(f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]["id"])
	delivered()
	f.data(f.do(http.MethodPost, po2+"/failed", map[string]any{"reason": "account closed"}), http.StatusOK)
	got = delivered()
	same(one(got, webhooks.PayoutFailed, webhooks.PayoutFailed, webhooks.CommissionUpdated), get(po2))
	same(one(got, webhooks.CommissionUpdated, webhooks.PayoutFailed, webhooks.CommissionUpdated), get(c2))

	// The partner renamed, and their link switched off.
	if _, err := f.env.DB.Exec(`UPDATE partners SET name = 'Ann B' WHERE id = $1`, partnerID); err != nil {
		t.Fatal(err)
	}
	d = one(delivered(), webhooks.PartnerUpdated, webhooks.PartnerUpdated)
	if p := partnerOf(d); p["name"] != "Ann B" {
		t.Errorf("renamed partner %v", p)
	} else {
		same(d, p)
	}
	link := inList(f.base+"/links", "partner_id", float64(partnerID))
	patched := f.data(f.do(http.MethodPatch, fmt.Sprintf("/api/v1/links/%v", link["id"]), map[string]any{"enabled": false}), http.StatusOK)
	d = one(delivered(), webhooks.LinkUpdated, webhooks.LinkUpdated)
	same(d, patched)
	same(d, inList(f.base+"/links", "id", link["id"]))
}

// A test-mode lead and sale are delivered with is_test true, and are what the API answers for them too.
func TestWebhookTestModeDataIsTheAPIAnswer(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	rc := newHookReceiver(t)
	f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": rc.srv.URL}), http.StatusCreated)
	testMode := map[string]any{"test_mode": true}
	clickID := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": f.r.AffiliateURL, "additional_data": testMode},
		apitest.Bearer(f.r.APIKey)...).JSON(t)["click_id"].(string)
	body := map[string]any{"click_id": clickID, "customer_key": "cust-test", "additional_data": testMode}
	if res := lead(f.env, body, apitest.Bearer(f.r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("test lead: %d %s", res.Status, res.Body)
	}
	if res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "test-1", "amount_cents": 1000, "customer_key": "cust-test",
		"additional_data": testMode}); res.Status != http.StatusOK {
		t.Fatalf("test sale: %d %s", res.Status, res.Body)
	}
	deliverAll(t, f.env)
	paths := map[string]string{webhooks.LeadCreated: "/api/v1/leads/%v", webhooks.SaleCreated: "/api/v1/sales/%v",
		webhooks.CommissionCreated: "/api/v1/commissions/%v"}
	var types []string
	for _, d := range rc.deliveries() {
		types = append(types, d.event.Type)
		fitsWebhookSchema(t, d.event.Type, d.body)
		if d.event.Data["is_test"] != true {
			t.Errorf("%s: is_test %v", d.event.Type, d.event.Data["is_test"])
		}
		api := f.data(f.do(http.MethodGet, fmt.Sprintf(paths[d.event.Type], d.event.Data["id"]), nil), http.StatusOK)
		if diff := cmp.Diff(api, d.event.Data); diff != "" {
			t.Errorf("%s data differs from the API's answer (-api +data):\n%s", d.event.Type, diff)
		}
	}
	slices.Sort(types)
	if want := []string{webhooks.CommissionCreated, webhooks.LeadCreated, webhooks.SaleCreated}; !slices.Equal(types, want) {
		t.Errorf("delivered %v, want %v", types, want)
	}
}

// The samples of test events (POST …/test) are shaped as real events are: each type's, received by a real
// receiver, fits the spec's schema for its type, says is_test, has ids 0, and no camelCase key.
func TestWebhookSamplesFitTheSpec(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	rc := newHookReceiver(t)
	ep := f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": rc.srv.URL}), http.StatusCreated)
	for _, typ := range webhooks.EventTypes {
		f.data(f.do(http.MethodPost, fmt.Sprintf("/api/v1/webhook-endpoints/%v/test", ep["id"]), map[string]any{"event_type": typ}),
			http.StatusAccepted)
	}
	deliverAll(t, f.env)
	got := map[string]bool{}
	for _, d := range rc.deliveries() {
		got[d.event.Type] = true
		fitsWebhookSchema(t, d.event.Type, d.body)
		if d.event.Data["is_test"] != true || d.event.Data["id"] != float64(0) {
			t.Errorf("%s sample: is_test %v, id %v", d.event.Type, d.event.Data["is_test"], d.event.Data["id"])
		}
		if keys := camelCaseKeys(d.event.Data, "data."); len(keys) > 0 {
			t.Errorf("%s sample: camelCase keys %v", d.event.Type, keys)
		}
	}
	for _, typ := range webhooks.EventTypes {
		if !got[typ] {
			t.Errorf("no sample of %s received", typ)
		}
	}
}

// The spec's example of each event type's body fits its schema (Redoc shows them; integrators copy them).
func TestWebhookSchemaExamplesFit(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for typ, name := range webhookSchemas {
		ex := doc.Components.Schemas[name].Value.Example
		if ex == nil {
			t.Errorf("%s has no example", name)
			continue
		}
		b, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		fitsWebhookSchema(t, typ, b)
		if m, _ := ex.(map[string]any); m["type"] != typ {
			t.Errorf("%s's example is of type %v", name, m["type"])
		}
	}
}
