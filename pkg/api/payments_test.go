package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

const whsec = "whsec_test5ecret0f7heBrand"

// stripeFixture is a program connected to Stripe, with a referred visitor who has a provisional lead.
type stripeFixture struct {
	t       *testing.T
	env     *apitest.Env
	prog    seed.Result
	clickID string
	n       int
}

func newStripeFixture(t *testing.T, opts seed.Options) *stripeFixture {
	t.Helper()
	env := apitest.New(t)
	f := &stripeFixture{t: t, env: env, prog: env.Seed(opts)}
	if _, err := payments.Connect(t.Context(), env.DB, f.prog.ProgramID, payments.ProviderStripe, whsec); err != nil {
		t.Fatal(err)
	}
	f.clickID = env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": f.prog.AffiliateURL},
		"User-Agent", "Mozilla/5.0 Chrome/131.0 stripe").JSON(t)["click_id"].(string)
	// The browser reported the sign-up: on a server_required program the lead is provisional.
	if res := lead(env, map[string]any{"click_id": f.clickID, "customer_key": "cus_key_1"}); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	return f
}

// meta is the metadata a brand sets on checkout sessions and subscriptions.
func (f *stripeFixture) meta() map[string]any {
	return map[string]any{"svc_click_id": f.clickID, "svc_customer_key": "cus_key_1", "program_id": itoa(f.prog.ProgramID), "plan": "pro"}
}

// event wraps object in a Stripe event envelope (API version 2025-03-31.basil unless the object says).
func (f *stripeFixture) event(typ string, object map[string]any, livemode bool) []byte {
	f.n++
	b, err := json.Marshal(map[string]any{
		"id": fmt.Sprintf("evt_1Qx%dTestEvent%d", f.prog.ProgramID, f.n), "object": "event", "api_version": "2025-03-31.basil",
		"created": time.Now().Unix(), "data": map[string]any{"object": object}, "livemode": livemode, "pending_webhooks": 1,
		"request": map[string]any{"id": "req_" + fmt.Sprint(f.n), "idempotency_key": nil}, "type": typ,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// deliver signs payload as Stripe does and posts it to the program's endpoint.
func (f *stripeFixture) deliver(payload []byte) *apitest.Response {
	f.t.Helper()
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec})
	return f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(f.prog.ProgramID), payload, "Stripe-Signature", signed.Header)
}

// ack delivers payload and checks the 200 acknowledgement's outcome.
func (f *stripeFixture) ack(payload []byte, outcome string) map[string]any {
	f.t.Helper()
	res := f.deliver(payload)
	if res.Status != http.StatusOK {
		f.t.Fatalf("webhook: %d %s", res.Status, res.Body)
	}
	body := res.JSON(f.t)
	if body["received"] != true || body["outcome"] != outcome {
		f.t.Fatalf("ack = %v, want outcome %s", body, outcome)
	}
	return body
}

func (f *stripeFixture) count(q string, args ...any) int {
	f.t.Helper()
	return f.env.Count(q, args...)
}

func checkoutSession(id string, mode string, amount int64, meta map[string]any, livemode bool) map[string]any {
	cs := map[string]any{
		"id": id, "object": "checkout.session", "after_expiration": nil, "allow_promotion_codes": false,
		"amount_subtotal": amount, "amount_total": amount, "billing_address_collection": "auto",
		"cancel_url": "https://shop.example.com/cancel", "client_reference_id": nil, "created": time.Now().Unix() - 60,
		"currency": "usd", "customer": "cus_Q1a2b3c4d5", "customer_creation": "if_required",
		"customer_details": map[string]any{"address": map[string]any{"country": "DE", "postal_code": "10115"}, "email": "ada@example.com", "name": "Ada Lovelace", "phone": nil, "tax_exempt": "none", "tax_ids": []any{}},
		"customer_email":   nil, "expires_at": time.Now().Unix() + 86000, "invoice": nil, "livemode": livemode, "locale": nil,
		"metadata": meta, "mode": mode, "payment_intent": nil, "payment_method_types": []any{"card"},
		"payment_status": "paid", "status": "complete", "subscription": nil, "success_url": "https://shop.example.com/thanks",
		"total_details": map[string]any{"amount_discount": 0, "amount_shipping": 0, "amount_tax": 0}, "ui_mode": "hosted", "url": nil,
	}
	if mode == "payment" {
		cs["payment_intent"] = "pi_" + strings.TrimPrefix(id, "cs_")
	} else {
		cs["subscription"] = "sub_1QxSubscription"
		cs["invoice"] = "in_1QxFirstInvoice"
	}
	return cs
}

// invoiceBasil is an invoice as API version 2025-03-31.basil and later send it: the subscription and its
// metadata under parent.subscription_details, no payment_intent.
func invoiceBasil(id string, amount int64, reason string, subMeta map[string]any) map[string]any {
	return map[string]any{
		"id": id, "object": "invoice", "account_country": "DE", "amount_due": amount, "amount_paid": amount, "amount_remaining": 0,
		"attempt_count": 1, "attempted": true, "billing_reason": reason, "collection_method": "charge_automatically",
		"created": time.Now().Unix() - 120, "currency": "usd", "customer": "cus_Q1a2b3c4d5", "customer_email": "ada@example.com",
		"lines": map[string]any{"object": "list", "data": []any{map[string]any{
			"id": "il_1", "object": "line_item", "amount": amount, "currency": "usd", "metadata": map[string]any{},
			"parent":  map[string]any{"type": "subscription_item_details", "subscription_item_details": map[string]any{"subscription": "sub_1QxSubscription"}},
			"period":  map[string]any{"start": time.Now().Unix(), "end": time.Now().AddDate(0, 1, 0).Unix()},
			"pricing": map[string]any{"type": "price_details", "price_details": map[string]any{"price": "price_1", "product": "prod_1"}},
		}}, "has_more": false, "url": "/v1/invoices/" + id + "/lines"},
		"livemode": true, "metadata": map[string]any{},
		"parent": map[string]any{"type": "subscription_details", "quote_details": nil,
			"subscription_details": map[string]any{"metadata": subMeta, "subscription": "sub_1QxSubscription"}},
		"status": "paid", "status_transitions": map[string]any{"finalized_at": time.Now().Unix() - 100, "paid_at": time.Now().Unix() - 90},
		"total": amount,
	}
}

// invoiceLegacy is an invoice as API versions up to 2025-02-24.acacia send it.
func invoiceLegacy(id string, amount int64, reason string, subMeta map[string]any) map[string]any {
	return map[string]any{
		"id": id, "object": "invoice", "amount_due": amount, "amount_paid": amount, "amount_remaining": 0,
		"billing_reason": reason, "charge": "ch_" + strings.TrimPrefix(id, "in_"), "created": time.Now().Unix() - 120,
		"currency": "usd", "customer": "cus_Q1a2b3c4d5", "customer_email": "ada@example.com",
		"lines": map[string]any{"object": "list", "data": []any{map[string]any{
			"id": "il_2", "object": "line_item", "amount": amount, "currency": "usd", "metadata": subMeta,
			"plan":         map[string]any{"id": "price_1", "object": "plan", "interval": "month", "interval_count": 1},
			"price":        map[string]any{"id": "price_1", "object": "price", "recurring": map[string]any{"interval": "month", "interval_count": 1}},
			"subscription": "sub_1QxSubscription", "type": "subscription",
		}}, "has_more": false},
		"livemode": true, "metadata": map[string]any{}, "paid": true, "payment_intent": "pi_" + strings.TrimPrefix(id, "in_"),
		"status": "paid", "status_transitions": map[string]any{"paid_at": time.Now().Unix() - 90},
		"subscription": "sub_1QxSubscription", "subscription_details": map[string]any{"metadata": subMeta},
	}
}

func chargeRefunded(pi string, amount, refunded int64) map[string]any {
	return map[string]any{
		"id": "ch_" + strings.TrimPrefix(pi, "pi_"), "object": "charge", "amount": amount, "amount_captured": amount,
		"amount_refunded": refunded, "captured": true, "currency": "usd", "customer": "cus_Q1a2b3c4d5", "disputed": false,
		"livemode": true, "metadata": map[string]any{}, "paid": true, "payment_intent": pi, "refunded": refunded == amount,
		"status": "succeeded",
	}
}

func disputeCreated(pi string, amount int64) map[string]any {
	return map[string]any{
		"id": "dp_" + strings.TrimPrefix(pi, "pi_"), "object": "dispute", "amount": amount, "charge": "ch_" + strings.TrimPrefix(pi, "pi_"),
		"currency": "usd", "is_charge_refundable": false, "livemode": true, "metadata": map[string]any{},
		"payment_intent": pi, "reason": "fraudulent", "status": "warning_needs_response",
	}
}

// --- 200 ---------------------------------------------------------------------------------------------

// A one-off checkout records the sale through the sale path and settles the provisional lead through
// the lead path; a redelivery changes nothing.
func TestStripeCheckoutPayment(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	if n := f.count(`SELECT count(*) FROM leads WHERE status = 'provisional'`); n != 1 {
		t.Fatalf("%d provisional leads before the payment", n)
	}
	payload := f.event("checkout.session.completed", checkoutSession("cs_live_a1", "payment", 4900, f.meta(), true), true)
	body := f.ack(payload, "recorded")
	saleID := body["sale_id"].(float64)

	if n := f.count(`SELECT count(*) FROM sales WHERE id = $1 AND processor_event_id = 'cs_live_a1' AND amount_cents = 4900
		AND currency = 'USD' AND provider = 'stripe' AND provider_payment_id = 'pi_live_a1' AND source = 'webhook'
		AND livemode AND NOT is_test AND click_id = $2`, saleID, f.clickID); n != 1 {
		t.Error("sale not stored as expected")
	}
	if n := f.count(`SELECT count(*) FROM commissions WHERE sale_id = $1 AND amount_cents = 980`, saleID); n != 1 {
		t.Error("commission not created")
	}
	if n := f.count(`SELECT count(*) FROM leads WHERE click_id = $1 AND status = 'settled' AND customer_key = 'cus_key_1'`, f.clickID); n != 1 {
		t.Error("the provisional lead was not settled")
	}
	if n := f.count(`SELECT count(*) FROM processor_events WHERE outcome = 'recorded' AND sale_id = $1 AND event_type = 'checkout.session.completed'`, saleID); n != 1 {
		t.Error("processed event not stored")
	}

	again := f.ack(payload, "duplicate")
	if again["sale_id"] != saleID {
		t.Errorf("redelivery ack = %v", again)
	}
	metrics := string(f.env.Do(http.MethodGet, "/metrics", nil).Body)
	for _, line := range []string{`reftrack_webhook_events_total{outcome="recorded",provider="stripe"} 1`,
		`reftrack_webhook_events_total{outcome="duplicate",provider="stripe"} 1`, `reftrack_events_recorded_total{test="false",type="sale"} 1`} {
		if !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 1 {
		t.Errorf("%d sales after a redelivery", n)
	}
	if n := f.count(`SELECT count(*) FROM processor_events`); n != 1 {
		t.Errorf("%d processed events after a redelivery", n)
	}
}

// A subscription: the checkout records nothing; the first invoice settles the lead and records the
// sale, both invoice events of one invoice count once, and a renewal is recurring and pays per the
// commission type. Invoices of both API-version shapes attribute.
func TestStripeSubscription(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		commissionType, rate string
		renewalPays          bool
	}{
		{"percent", "20", false},
		{"recurring_percent", "10", true},
	} {
		t.Run(tc.commissionType, func(t *testing.T) {
			f := newStripeFixture(t, seed.Options{CommissionType: tc.commissionType, CommissionRate: tc.rate})
			f.ack(f.event("checkout.session.completed", checkoutSession("cs_sub_1", "subscription", 2900, f.meta(), true), true), "ignored")
			if n := f.count(`SELECT count(*) FROM sales`) + f.count(`SELECT count(*) FROM leads WHERE status = 'settled'`); n != 0 {
				t.Fatalf("a subscription checkout recorded %d rows", n)
			}

			first := f.ack(f.event("invoice.paid", invoiceBasil("in_first", 2900, "subscription_create", f.meta()), true), "recorded")
			f.ack(f.event("invoice.payment_succeeded", invoiceLegacy("in_first", 2900, "subscription_create", f.meta()), true), "duplicate")
			if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_first' AND sale_type = 'subscription'
				AND NOT is_recurring AND subscription_id = 'sub_1QxSubscription'`); n != 1 {
				t.Errorf("first invoice: %d matching sales", n)
			}
			if n := f.count(`SELECT count(*) FROM leads WHERE click_id = $1 AND status = 'settled'`, f.clickID); n != 1 {
				t.Error("the first invoice did not settle the lead")
			}

			renewal := f.ack(f.event("invoice.paid", invoiceLegacy("in_second", 2900, "subscription_cycle", f.meta()), true), "recorded")
			if renewal["sale_id"] == first["sale_id"] {
				t.Fatal("the renewal reused the first sale")
			}
			if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_second' AND is_recurring
				AND subscription_interval = 'month' AND provider_payment_id = 'pi_second'`); n != 1 {
				t.Error("renewal not stored as recurring")
			}
			paid := f.count(`SELECT count(*) FROM commissions c JOIN sales s ON s.id = c.sale_id WHERE s.processor_event_id = 'in_second'`) == 1
			if paid != tc.renewalPays {
				t.Errorf("renewal commission paid = %v, want %v", paid, tc.renewalPays)
			}
		})
	}
}

// Events may arrive in any order: an invoice before its subscription's checkout still attributes, and
// the checkout afterwards changes nothing.
func TestStripeOutOfOrder(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	f.ack(f.event("invoice.payment_succeeded", invoiceLegacy("in_early", 2900, "subscription_create", f.meta()), true), "recorded")
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_late", "subscription", 2900, f.meta(), true), true), "ignored")
	f.ack(f.event("invoice.paid", invoiceBasil("in_early", 2900, "subscription_create", f.meta()), true), "duplicate")
	if n := f.count(`SELECT count(*) FROM sales`); n != 1 {
		t.Errorf("%d sales, want 1", n)
	}
}

// A sale sent through the API and through the webhook counts once, whichever comes first.
func TestStripeAndAPICountOnce(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	if res := lead(f.env, map[string]any{"click_id": f.clickID, "customer_key": "cus_key_1"}, apitest.Bearer(f.prog.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	api := sale(f.env, f.prog.APIKey, map[string]any{"transaction_id": "cs_both_1", "amount_cents": 4900, "customer_key": "cus_key_1"})
	if api.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", api.Status, api.Body)
	}
	body := f.ack(f.event("checkout.session.completed", checkoutSession("cs_both_1", "payment", 4900, f.meta(), true), true), "duplicate")
	if body["sale_id"] != api.JSON(t)["sale_id"] {
		t.Errorf("ack = %v", body)
	}

	f.ack(f.event("checkout.session.completed", checkoutSession("cs_both_2", "payment", 1000, f.meta(), true), true), "recorded")
	if res := sale(f.env, f.prog.APIKey, map[string]any{"transaction_id": "cs_both_2", "amount_cents": 1000, "customer_key": "cus_key_1"}); res.Status != http.StatusConflict {
		t.Errorf("API after webhook: %d %s", res.Status, res.Body)
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 2 {
		t.Errorf("%d sales, want 2", n)
	}
}

// Refunds reverse in proportion to the charge's amount_refunded; a repeat changes nothing; a dispute
// reverses as a chargeback.
func TestStripeRefundsAndDisputes(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_r1", "payment", 4900, f.meta(), true), true), "recorded")

	partial := f.event("charge.refunded", chargeRefunded("pi_r1", 4900, 1225), true)
	f.ack(partial, "reversed")
	if n := f.count(`SELECT count(*) FROM commissions WHERE reversed_amount_cents = 245 AND status = 'pending'`); n != 1 {
		t.Error("partial refund did not reverse a quarter of the commission")
	}
	f.ack(partial, "duplicate")
	// The same cumulative amount in a new event (say, a refund.updated-style resend) adds nothing.
	f.ack(f.event("charge.refunded", chargeRefunded("pi_r1", 4900, 1225), true), "duplicate")
	f.ack(f.event("charge.refunded", chargeRefunded("pi_r1", 4900, 4900), true), "reversed")
	if n := f.count(`SELECT count(*) FROM sales WHERE refunded_amount_cents = 4900 AND payment_status = 'refunded'`); n != 1 {
		t.Error("sale not fully refunded")
	}
	if n := f.count(`SELECT count(*) FROM refunds WHERE source = 'webhook'`); n != 2 {
		t.Errorf("%d refunds stored, want 2", n)
	}

	f.ack(f.event("checkout.session.completed", checkoutSession("cs_d1", "payment", 2000, f.meta(), true), true), "recorded")
	dispute := f.event("charge.dispute.created", disputeCreated("pi_d1", 2000), true)
	f.ack(dispute, "reversed")
	f.ack(f.event("charge.dispute.created", disputeCreated("pi_d1", 2000), true), "duplicate") // same dispute id
	if n := f.count(`SELECT count(*) FROM refunds WHERE reason = 'chargeback' AND processor_refund_id = 'dp_d1' AND amount_cents = 2000`); n != 1 {
		t.Error("chargeback not stored")
	}
	f.ack(f.event("charge.refunded", chargeRefunded("pi_unknown", 100, 100), true), "ignored")
}

// What cannot be attributed is acknowledged with its reason and stored, never retried forever.
func TestStripeUnattributed(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	other := f.env.Seed(seed.Options{})
	tests := []struct {
		name    string
		meta    map[string]any
		outcome string
		reason  string
	}{
		{"no metadata", map[string]any{}, "unattributed", "no svc_click_id or svc_customer_key in the metadata"},
		{"another program", map[string]any{"svc_customer_key": "cus_key_1", "program_id": itoa(other.ProgramID)}, "unattributed",
			"metadata program_id " + itoa(other.ProgramID) + " is another program"},
		{"unknown customer", map[string]any{"svc_customer_key": "nobody"}, "unattributed", "no customer of this program matches the metadata"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := f.ack(f.event("checkout.session.completed", checkoutSession(fmt.Sprint("cs_u", i), "payment", 4900, tc.meta, true), true), tc.outcome)
			if body["reason"] != tc.reason {
				t.Errorf("reason = %v, want %q", body["reason"], tc.reason)
			}
			if n := f.count(`SELECT count(*) FROM processor_events WHERE outcome = $1 AND reason = $2`, tc.outcome, tc.reason); n != 1 {
				t.Error("event not stored with its reason")
			}
		})
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded", n)
	}

	// The click older than the attribution window.
	if _, err := f.env.DB.Exec(`UPDATE clicks SET click_timestamp = now() - interval '90 days'`); err != nil {
		t.Fatal(err)
	}
	body := f.ack(f.event("checkout.session.completed", checkoutSession("cs_old", "payment", 4900, f.meta(), true), true), "unattributed")
	if r, _ := body["reason"].(string); !strings.HasPrefix(r, "attribution window expired") {
		t.Errorf("reason = %q", r)
	}
}

// Zero amounts record no sale (a trial's first invoice still settles the lead); test-mode events record
// test data; other event types and currencies are acknowledged and ignored.
func TestStripeSkips(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	f.ack(f.event("invoice.paid", invoiceBasil("in_trial", 0, "subscription_create", f.meta()), true), "settled")
	if n := f.count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales for a zero invoice", n)
	}
	if n := f.count(`SELECT count(*) FROM leads WHERE status = 'settled'`); n != 1 {
		t.Error("the trial invoice did not settle the lead")
	}
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_zero", "payment", 0, f.meta(), true), true), "ignored")
	f.ack(f.event("customer.created", map[string]any{"id": "cus_1", "object": "customer"}, true), "ignored")

	gbp := checkoutSession("cs_gbp", "payment", 1000, f.meta(), true)
	gbp["currency"] = "gbp"
	if body := f.ack(f.event("checkout.session.completed", gbp, true), "ignored"); body["reason"] != "currency GBP is not supported" {
		t.Errorf("ack = %v", body)
	}

	f.ack(f.event("checkout.session.completed", checkoutSession("cs_test_1", "payment", 700, f.meta(), false), false), "recorded")
	if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'cs_test_1' AND is_test AND NOT livemode`); n != 1 {
		t.Error("a test-mode payment was not recorded as a test")
	}
}

// --- 400, 404 -----------------------------------------------------------------------------------------

// A delivery that does not verify answers 400 and records nothing.
func TestStripeBadDeliveries(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	payload := f.event("checkout.session.completed", checkoutSession("cs_bad", "payment", 4900, f.meta(), true), true)
	path := "/api/v1/webhooks/stripe/" + itoa(f.prog.ProgramID)
	sign := func(secret string, at time.Time, body []byte) string {
		return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
	}
	tampered := []byte(strings.Replace(string(payload), "4900", "9900", 1))
	tests := []struct {
		name, header, message string
		body                  []byte
	}{
		{"missing", "", "Missing Stripe-Signature header", payload},
		{"malformed", "t=yesterday,v1=abc", "Malformed Stripe-Signature header", payload},
		{"other secret", sign("whsec_other", time.Now(), payload), "Stripe-Signature does not match the payload", payload},
		{"tampered body", sign(whsec, time.Now(), payload), "Stripe-Signature does not match the payload", tampered},
		{"too old", sign(whsec, time.Now().Add(-10*time.Minute), payload), "Stripe-Signature timestamp is outside the tolerance (5 minutes)", payload},
		{"not an event", sign(whsec, time.Now(), []byte(`{"object":"event"}`)), "Invalid Stripe event: id and type are required", []byte(`{"object":"event"}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var headers []string
			if tc.header != "" {
				headers = []string{"Stripe-Signature", tc.header}
			}
			platformError(t, f.env.Do(http.MethodPost, path, tc.body, headers...), 400, "BadRequestError", tc.message)
		})
	}

	unconnected := f.env.Seed(seed.Options{})
	platformError(t, f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(unconnected.ProgramID), payload, "Stripe-Signature", sign(whsec, time.Now(), payload)),
		400, "BadRequestError", "Stripe is not connected for this program")
	platformError(t, f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/999999", payload, "Stripe-Signature", sign(whsec, time.Now(), payload)),
		404, "NotFoundError", "Program not found")

	if n := f.count(`SELECT count(*) FROM sales`) + f.count(`SELECT count(*) FROM processor_events`); n != 0 {
		t.Errorf("bad deliveries recorded %d rows", n)
	}
}

// --- management and the retired CLI route ----------------------------------------------------------------

func TestPaymentProcessorSetting(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	path := "/api/v1/programs/" + itoa(r.ProgramID) + "/payment-processor"
	auth := apitest.Bearer(r.AccountToken)
	webhookURL := env.Config.BaseURL + "/api/v1/webhooks/stripe/" + itoa(r.ProgramID)

	before := env.Do(http.MethodGet, path, nil, auth...).JSON(t)["data"].(map[string]any)
	if before["provider"] != nil || before["webhook_secret_set"] != false || before["webhook_url"] != webhookURL || before["updated_at"] != nil {
		t.Errorf("before = %v", before)
	}
	res := env.Do(http.MethodPut, path, map[string]any{"provider": "stripe", "webhook_secret": whsec}, auth...)
	if res.Status != http.StatusOK || strings.Contains(string(res.Body), whsec) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	after := env.Do(http.MethodGet, path, nil, auth...)
	data := after.JSON(t)["data"].(map[string]any)
	if data["provider"] != "stripe" || data["webhook_secret_set"] != true || data["updated_at"] == nil || strings.Contains(string(after.Body), "whsec_") {
		t.Errorf("after = %s", after.Body)
	}
	if n := env.Count(`SELECT count(*) FROM processor_connections WHERE program_id = $1 AND webhook_secret = $2`, r.ProgramID, whsec); n != 1 {
		t.Error("secret not stored")
	}
	res = env.Do(http.MethodPut, path, map[string]any{"provider": "stripe", "webhook_secret": "not-a-secret"}, auth...)
	if res.Status != http.StatusBadRequest {
		t.Errorf("bad secret: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM processor_connections WHERE webhook_secret = $1`, whsec); n != 1 {
		t.Error("a refused update changed the secret")
	}
}

func TestCliStripeConnectRetired(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	res := env.Do(http.MethodPost, "/api/v1/cli/stripe-connect", map[string]any{})
	platformError(t, res, 410, "GoneError",
		"This endpoint is retired: connect the payment processor from the dashboard program settings (PUT /api/v1/programs/{programId}/payment-processor).")
	if res.Header.Get("X-RateLimit-Limit") != "60" {
		t.Errorf("rate-limit headers: %v", res.Header)
	}
}

// One Stripe account with an endpoint per program sends every event to both: each program processes it
// once, and the program the metadata names records the sale whichever endpoint was first.
func TestStripeEventToTwoPrograms(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	other := f.env.Seed(seed.Options{})
	const otherSecret = "whsec_secondEndpoint"
	if _, err := payments.Connect(t.Context(), f.env.DB, other.ProgramID, payments.ProviderStripe, otherSecret); err != nil {
		t.Fatal(err)
	}
	payload := f.event("checkout.session.completed", checkoutSession("cs_two", "payment", 4900, f.meta(), true), true)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: otherSecret})
	res := f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(other.ProgramID), payload, "Stripe-Signature", signed.Header)
	if body := res.JSON(t); res.Status != http.StatusOK || body["outcome"] != "unattributed" {
		t.Fatalf("other program: %d %s", res.Status, res.Body)
	}
	f.ack(payload, "recorded")
	if n := f.count(`SELECT count(*) FROM sales WHERE program_id = $1`, f.prog.ProgramID); n != 1 {
		t.Errorf("%d sales for the named program", n)
	}
	if n := f.count(`SELECT count(*) FROM processor_events`); n != 2 {
		t.Errorf("%d processed events, want one per program", n)
	}
}

// transaction_id is unique per program on the webhook path too: another program's sale under the same
// id neither blocks this program's payment nor is reported to it, a redelivery is a duplicate of this
// program's sale only, and one dispute delivered to both endpoints reverses each program's own sale.
func TestStripeTransactionIDPerProgram(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	other := f.env.Seed(seed.Options{})
	const otherSecret = "whsec_otherBrandEndpoint"
	if _, err := payments.Connect(t.Context(), f.env.DB, other.ProgramID, payments.ProviderStripe, otherSecret); err != nil {
		t.Fatal(err)
	}
	customerWithLead(t, f.env, other, "cus_other")
	theirs := sale(f.env, other.APIKey, map[string]any{"transaction_id": "cs_same", "amount_cents": 4900, "customer_key": "cus_other",
		"provider": "stripe", "provider_payment_id": "pi_same"})
	if theirs.Status != http.StatusOK {
		t.Fatalf("other program's sale: %d %s", theirs.Status, theirs.Body)
	}
	theirSale := theirs.JSON(t)["sale_id"]

	body := f.ack(f.event("checkout.session.completed", checkoutSession("cs_same", "payment", 4900, f.meta(), true), true), "recorded")
	ours := body["sale_id"]
	if ours == nil || ours == theirSale {
		t.Fatalf("ack = %v, want a sale of its own", body)
	}
	body = f.ack(f.event("checkout.session.completed", checkoutSession("cs_same", "payment", 4900, f.meta(), true), true), "duplicate")
	if body["sale_id"] != ours {
		t.Errorf("redelivery ack = %v, want this program's sale %v", body, ours)
	}
	if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'cs_same'`); n != 2 {
		t.Errorf("%d sales under cs_same, want one per program", n)
	}

	dispute := f.event("charge.dispute.created", disputeCreated("pi_same", 4900), true)
	if body := f.ack(dispute, "reversed"); body["sale_id"] != ours {
		t.Errorf("dispute at this program reversed %v, want %v", body["sale_id"], ours)
	}
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: dispute, Secret: otherSecret})
	res := f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(other.ProgramID), dispute, "Stripe-Signature", signed.Header)
	if body := res.JSON(t); res.Status != http.StatusOK || body["outcome"] != "reversed" || body["sale_id"] != theirSale {
		t.Errorf("dispute at the other program: %d %s", res.Status, res.Body)
	}
	if n := f.count(`SELECT count(*) FROM refunds WHERE processor_refund_id = 'dp_same' AND reason = 'chargeback'`); n != 2 {
		t.Errorf("%d chargebacks stored, want one per program", n)
	}
}

// The path the original product's CLI registers (no /api/v1) is the same endpoint: a delivery there is
// verified and recorded, and the same event at the documented path is then a redelivery.
func TestStripeWebhookAtTheOriginalPath(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	path := "/webhooks/stripe/" + itoa(f.prog.ProgramID)
	payload := f.event("checkout.session.completed", checkoutSession("cs_live_alias", "payment", 4900, f.meta(), true), true)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec})
	res := f.env.Do(http.MethodPost, path, payload, "Stripe-Signature", signed.Header)
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	if body["outcome"] != "recorded" || body["received"] != true {
		t.Errorf("ack = %v", body)
	}
	if n := f.count(`SELECT count(*) FROM sales WHERE id = $1 AND processor_event_id = 'cs_live_alias' AND source = 'webhook'`, body["sale_id"]); n != 1 {
		t.Error("sale not stored")
	}
	f.ack(payload, "duplicate")
	platformError(t, f.env.Do(http.MethodPost, path, payload, "Stripe-Signature", "t=1,v1=00"), 400, "BadRequestError",
		"Stripe-Signature timestamp is outside the tolerance (5 minutes)")
	if n := f.count(`SELECT count(*) FROM sales`); n != 1 {
		t.Errorf("%d sales, want 1", n)
	}
}

// stripe_charges_enabled (status) and the processor_charges_seen check (readiness) turn true with the
// first live-mode payment event whose signature verifies, attributed or not; test-mode payments,
// live events that are not payments and unsigned deliveries leave them alone.
func TestStripeChargesEnabled(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	key := apitest.Bearer(f.prog.APIKey)
	enabled := func() (bool, string) {
		t.Helper()
		st := f.env.Do(http.MethodGet, "/api/v1/cli/status", nil, key...).JSON(t)["data"].(map[string]any)
		var check string
		for _, c := range f.env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, key...).JSON(t)["checks"].([]any) {
			if c := c.(map[string]any); c["id"] == "processor_charges_seen" {
				check = c["status"].(string)
			}
		}
		return st["stripe_charges_enabled"].(bool), check
	}
	if on, check := enabled(); on || check != "unknown" {
		t.Fatalf("before any event: enabled %v, check %s", on, check)
	}
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_test_1", "payment", 4900, f.meta(), false), false), "recorded")
	f.ack(f.event("customer.created", map[string]any{"id": "cus_1", "object": "customer"}, true), "ignored")
	unsigned := f.event("checkout.session.completed", checkoutSession("cs_live_x", "payment", 4900, nil, true), true)
	if res := f.env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(f.prog.ProgramID), unsigned, "Stripe-Signature", "t=1,v1=00"); res.Status != http.StatusBadRequest {
		t.Fatalf("unsigned delivery: %d", res.Status)
	}
	if on, check := enabled(); on || check != "unknown" {
		t.Fatalf("after test-mode, non-payment and unsigned events: enabled %v, check %s", on, check)
	}
	// A live payment that cannot be attributed still proves that charges reach us.
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_live_2", "payment", 4900, nil, true), true), "unattributed")
	if on, check := enabled(); !on || check != "pass" {
		t.Errorf("after a live payment: enabled %v, check %s", on, check)
	}
}
