package api_test

import (
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
)

// After the processor refunded or disputed a sale, a refund call changes nothing and answers the reason
// that is stored (the processor's), not the one the request asks for.
func TestRefundAfterProcessorAnswersStoredReason(t *testing.T) {
	t.Parallel()
	f := newStripeFixture(t, seed.Options{})
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_rr1", "payment", 4900, f.meta(), true), true), "recorded")
	f.ack(f.event("checkout.session.completed", checkoutSession("cs_rr2", "payment", 2000, f.meta(), true), true), "recorded")
	f.ack(f.event("charge.refunded", chargeRefunded("pi_rr1", 4900, 4900), true), "reversed")
	f.ack(f.event("charge.dispute.created", disputeCreated("pi_rr2", 2000), true), "reversed")

	for _, tc := range []struct {
		txn  string
		body map[string]any
		want string
	}{
		{"cs_rr1", map[string]any{"reason": "chargeback"}, "refund"}, // charge.refunded
		{"cs_rr1", map[string]any{}, "refund"},
		{"cs_rr2", map[string]any{}, "chargeback"}, // the dispute; the request's default would say refund
		{"cs_rr2", map[string]any{"reason": "refund"}, "chargeback"},
	} {
		tc.body["transaction_id"] = tc.txn
		res := refund(f.env, f.prog.APIKey, tc.body)
		body := res.JSON(t)
		if res.Status != http.StatusOK || body["status"] != "skipped" || body["reason"] != tc.want {
			t.Errorf("%s %v: %d %s; want skipped, reason %s", tc.txn, tc.body, res.Status, res.Body, tc.want)
		}
	}
	if n := f.count(`SELECT count(*) FROM refunds`); n != 2 {
		t.Errorf("%d refunds, want the processor's 2", n)
	}

	// A refund of the API is answered with its own reason, and so is its repeat.
	recordedSale(t, f.env, f.prog, "api_rr3")
	for range 2 {
		if body := refund(f.env, f.prog.APIKey, map[string]any{"transaction_id": "api_rr3", "reason": "chargeback"}).JSON(t); body["reason"] != "chargeback" {
			t.Errorf("API chargeback: %v", body)
		}
	}
	if body := refund(f.env, f.prog.APIKey, map[string]any{"transaction_id": "api_rr3"}).JSON(t); body["status"] != "skipped" || body["reason"] != "chargeback" {
		t.Errorf("repeat without reason: %v", body)
	}
}
