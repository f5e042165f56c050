package api_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// A JSON null counts as absent on every route (docs/rules.md#bad-input-abuse-and-faults), so every optional
// request property is nullable in the spec: these requests send null for the optional fields of routes whose
// handler checks the body and of routes the contract middleware validates, and must be accepted. apitest's
// strict check validates the request of every 2xx exchange, so an optional property the spec does not let be
// null fails here.
func TestNullOptionalFieldsAccepted(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	account := apitest.Bearer(r.AccountToken)
	program := "/api/v1/programs/" + itoa(r.ProgramID)
	ok := func(what string, res *apitest.Response, status int) map[string]any {
		t.Helper()
		if res.Status != status {
			t.Fatalf("%s: %d %s", what, res.Status, res.Body)
		}
		return res.JSON(t)
	}

	// Handler-validated tracking routes.
	clickID := ok("click", env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL,
		"additional_data": nil, "page_url": nil, "page_title": nil, "referrer_url": nil, "session_id": nil, "user_agent": nil,
		"screen_resolution": nil, "viewport_size": nil, "language": nil, "timezone": nil, "existing_click_id": nil}), 200)["click_id"].(string)
	ok("lead", lead(env, map[string]any{"click_id": clickID, "customer_key": "nulls-1", "email": nil,
		"additional_data": map[string]any{"test_mode": nil, "program_id": nil}}, apitest.Bearer(r.APIKey)...), 200)
	body := ok("sale", sale(env, r.APIKey, map[string]any{"transaction_id": "nulls_txn", "amount_cents": 4900, "customer_key": "nulls-1",
		"click_id": nil, "currency": nil, "occurred_at": nil, "provider": nil, "provider_payment_id": nil, "livemode": nil,
		"sale_type": nil, "is_recurring": nil, "event_name": nil, "subscription_id": nil, "subscription_interval": nil,
		"additional_data": nil}), 200)
	if body["currency"] != "USD" || body["is_test"] != false {
		t.Errorf("sale = %v, want the defaults (USD, live)", body)
	}
	// In test mode a null transaction_id is an absent one: the server makes one up.
	body = ok("test sale", sale(env, r.APIKey, map[string]any{"transaction_id": nil, "amount_cents": 100, "customer_key": "nulls-1",
		"additional_data": map[string]any{"test_mode": true, "program_id": nil}}), 200)
	if body["is_test"] != true {
		t.Errorf("test sale = %v", body)
	}
	body = ok("refund", refund(env, r.APIKey, map[string]any{"transaction_id": "nulls_txn", "reason": nil, "refund_reason": nil,
		"refund_amount_cents": nil}), 200)
	if body["reason"] != "refund" || body["refunded_amount_cents"] != 4900.0 {
		t.Errorf("refund = %v, want the defaults (refund, the whole amount)", body)
	}

	// Handler-validated CLI and management routes.
	ok("test event", env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"event_type": "click", "type": nil, "program_id": nil},
		apitest.Bearer(r.APIKey)...), 200)
	ok("init", env.Do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "Nulls", "domain": "nulls.example.com",
		"commission_type": "percent", "commission_rate": 10, "advertiser_id": nil, "cookie_duration": nil, "duration_months": nil}, account...), 201)
	before := ok("program", env.Do(http.MethodGet, program, nil, account...), 200)["data"].(map[string]any)
	after := ok("patch", env.Do(http.MethodPatch, program, map[string]any{"name": "Renamed", "domain": nil, "allowed_origins": nil,
		"lead_auth": nil, "cookie_window_days": nil, "attribution_window_days": nil, "commission_type": nil, "commission_rate": nil,
		"duration_months": nil, "hold_days": nil, "commission_approval": nil, "payout_minimum_cents": nil}, account...), 200)["data"].(map[string]any)
	for _, f := range []string{"domain", "allowed_origins", "lead_auth", "cookie_window_days", "attribution_window_days", "commission_type",
		"commission_rate", "duration_months", "hold_days", "commission_approval", "payout_minimum_cents"} {
		if !cmp.Equal(before[f], after[f]) {
			t.Errorf("%s changed from %v to %v by a null", f, before[f], after[f])
		}
	}

	// Contract-validated management routes.
	link := ok("link", env.Do(http.MethodPost, program+"/links", map[string]any{"partner_id": r.PartnerID, "short_link": nil}, account...), 201)
	ok("payouts", env.Do(http.MethodPost, program+"/payouts", map[string]any{"currency": nil}, account...), 201)
	if s, _ := link["data"].(map[string]any)["short_link"].(string); len(s) != 8 {
		t.Errorf("short_link = %v, want a generated one", link["data"])
	}

	// The raw-bodied Stripe webhook reads a null like an absent member too; and the development issuer.
	if _, err := payments.Connect(t.Context(), env.DB, r.ProgramID, payments.ProviderStripe, whsec); err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"id":"evt_nulls","type":"customer.created","livemode":null,"data":null}`)
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: whsec})
	if body := ok("webhook", env.Do(http.MethodPost, "/api/v1/webhooks/stripe/"+itoa(r.ProgramID), payload, "Stripe-Signature", signed.Header), 200); body["outcome"] != "ignored" {
		t.Errorf("webhook ack = %v", body)
	}
	ok("id-token", env.Do(http.MethodPost, "/dev/oidc/id-token", map[string]any{"email": "nulls@example.com", "name": nil}), 200)
}
