package api_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

func refund(env *apitest.Env, key string, body any) *apitest.Response {
	return env.Do(http.MethodPost, "/api/v1/track/refund", body, apitest.Bearer(key)...)
}

// recordedSale makes a customer and a 4900 sale paying 980 under transaction id txn.
func recordedSale(t *testing.T, env *apitest.Env, r seed.Result, txn string) (saleID, commissionID float64) {
	t.Helper()
	customerWithLead(t, env, r, "cust-"+txn)
	body := sale(env, r.APIKey, map[string]any{"transaction_id": txn, "amount_cents": 4900, "customer_key": "cust-" + txn}).JSON(t)
	return body["sale_id"].(float64), body["commission_id"].(float64)
}

func TestFullRefundReversesCommission(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	saleID, commissionID := recordedSale(t, env, r, "r1")
	res := refund(env, r.APIKey, map[string]any{"transaction_id": "r1", "refund_reason": "customer asked"})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	want := map[string]any{"success": true, "status": "reversed", "sale_id": saleID, "transaction_id": "r1", "reason": "refund",
		"refunded_amount_cents": 4900.0, "commission_id": commissionID, "message": body["message"],
		"commission": map[string]any{"id": commissionID, "amount_cents": 980.0, "reversed_amount_cents": 980.0, "currency": "USD", "status": "reversed",
			"clawback_cents": 0.0}}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if n := env.Count(`SELECT count(*) FROM refunds WHERE sale_id = $1 AND amount_cents = 4900 AND commission_reversed_cents = 980 AND refund_reason = 'customer asked'`, saleID); n != 1 {
		t.Error("refund not stored")
	}
	// A repeated refund changes nothing.
	again := refund(env, r.APIKey, map[string]any{"transaction_id": "r1"}).JSON(t)
	if again["status"] != "skipped" || again["refunded_amount_cents"] != 4900.0 {
		t.Errorf("repeat = %v", again)
	}
	if n := env.Count(`SELECT count(*) FROM refunds`); n != 1 {
		t.Errorf("%d refunds after a repeat, want 1", n)
	}
}

func TestPartialRefunds(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	recordedSale(t, env, r, "p1")
	first := refund(env, r.APIKey, map[string]any{"transaction_id": "p1", "refund_amount_cents": 1225, "reason": "chargeback"}).JSON(t)
	c := first["commission"].(map[string]any)
	if first["status"] != "refunded" || first["reason"] != "chargeback" || first["refunded_amount_cents"] != 1225.0 ||
		c["reversed_amount_cents"] != 245.0 || c["status"] != "pending" {
		t.Errorf("first partial = %v", first)
	}
	codedError(t, refund(env, r.APIKey, map[string]any{"transaction_id": "p1", "refund_amount_cents": 3676}), 400, "BadRequestError",
		"invalid_request", "refund_amount_cents must be at most 3675, the amount not yet refunded")
	rest := refund(env, r.APIKey, map[string]any{"transaction_id": "p1"}).JSON(t)
	c = rest["commission"].(map[string]any)
	if rest["status"] != "reversed" || rest["refunded_amount_cents"] != 4900.0 || c["reversed_amount_cents"] != 980.0 || c["status"] != "reversed" {
		t.Errorf("rest = %v", rest)
	}
}

func TestRefundOfASaleWithoutCommission(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{}) // percent: the second sale pays nothing
	recordedSale(t, env, r, "first")
	sale(env, r.APIKey, map[string]any{"transaction_id": "second", "amount_cents": 100, "customer_key": "cust-first"})
	body := refund(env, r.APIKey, map[string]any{"transaction_id": "second"}).JSON(t)
	if body["status"] != "no_commission" || body["commission"] != nil || body["commission_id"] != nil {
		t.Errorf("body = %v", body)
	}
}

func TestRefundErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	recordedSale(t, env, other, "theirs")
	for _, tt := range []struct {
		name string
		body any
		msg  string
	}{
		{"missing transaction_id", `{}`, "transaction_id is required"},
		{"transaction_id a number", `{"transaction_id":5}`, "transaction_id is required"},
		{"bad reason", `{"transaction_id":"x","reason":"fraud"}`, "reason must be refund or chargeback"},
		{"bad amount", `{"transaction_id":"x","refund_amount_cents":0}`, "refund_amount_cents must be a positive integer"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			codedError(t, refund(env, r.APIKey, tt.body), 400, "BadRequestError", "invalid_request", tt.msg)
		})
	}
	codedError(t, refund(env, r.APIKey, map[string]any{"transaction_id": "unknown"}), 404, "NotFoundError", "not_found", "Sale not found for transaction_id")
	codedError(t, refund(env, r.APIKey, map[string]any{"transaction_id": "theirs"}), 404, "NotFoundError", "not_found", "Sale not found for transaction_id")
	for _, tt := range []struct{ header, msg string }{
		{"", "Missing or malformed Authorization header. Expected: Bearer <token>"},
		{"Bearer ", "Invalid API token"}, // the refund route answers an empty token like an unknown one
		{"Bearer rt_nope", "Invalid API token"},
	} {
		var h []string
		if tt.header != "" {
			h = []string{"Authorization", tt.header}
		}
		codedError(t, env.Do(http.MethodPost, "/api/v1/track/refund", map[string]any{"transaction_id": "x"}, h...), 401, "UnauthorizedError", "unauthorized", tt.msg)
	}
	if n := env.Count(`SELECT count(*) FROM refunds`); n != 0 {
		t.Errorf("%d refunds recorded by refused requests", n)
	}
}

// Sale and refund share one bucket of 120 per key.
func TestSaleAndRefundShareARateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now}) // one window for the whole test
	r := env.Seed(seed.Options{})
	for i := 0; i < 120; i++ {
		path := "/api/v1/track/sale"
		if i%2 == 1 {
			path = "/api/v1/track/refund"
		}
		res := env.Do(http.MethodPost, path, `{}`, apitest.Bearer(r.APIKey)...)
		if res.Status != http.StatusBadRequest || res.Header.Get("X-RateLimit-Limit") != "120" {
			t.Fatalf("request %d: %d %v", i, res.Status, res.Header)
		}
	}
	assertRateLimited(t, env.Do(http.MethodPost, "/api/v1/track/refund", `{}`, apitest.Bearer(r.APIKey)...), 120)
	// Another key has its own bucket; no key counts per IP.
	other := env.Seed(seed.Options{})
	if res := env.Do(http.MethodPost, "/api/v1/track/sale", `{}`, apitest.Bearer(other.APIKey)...); res.Header.Get("X-RateLimit-Remaining") != "119" {
		t.Errorf("other key: remaining %s", res.Header.Get("X-RateLimit-Remaining"))
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/sale", `{}`); res.Header.Get("X-RateLimit-Remaining") != "119" {
		t.Errorf("no key: remaining %s", res.Header.Get("X-RateLimit-Remaining"))
	}
}

// Partial refunds of one sale racing through the route's batches and through the webhooks' path at once
// refund exactly what the sale had: each is decided on the sale as the one before left it.
func TestConcurrentRefunds(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	saleID, _ := recordedSale(t, env, r, "race")
	const viaRoute, direct = 6, 2 // 8 refunds of 1000 on a sale of 4900: four fit
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		reversed []int64
	)
	answer := func(status int, rev int64) {
		mu.Lock()
		defer mu.Unlock()
		statuses[status]++
		if status == http.StatusOK {
			reversed = append(reversed, rev)
		}
	}
	for range viaRoute {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := refund(env, r.APIKey, map[string]any{"transaction_id": "race", "refund_amount_cents": 1000})
			var rev int64
			if res.Status == http.StatusOK {
				rev = int64(res.JSON(t)["commission"].(map[string]any)["reversed_amount_cents"].(float64))
			}
			answer(res.Status, rev)
		}()
	}
	for range direct {
		wg.Add(1)
		go func() {
			defer wg.Done()
			amount := int64(1000)
			res, err := sales.Refund(context.Background(), env.DB.DB, slog.New(slog.DiscardHandler), time.Now, sales.RefundInput{ProgramID: r.ProgramID, TransactionID: "race",
				AmountCents: &amount, Source: sales.SourceWebhook})
			var tooLarge *sales.RefundTooLargeError
			switch {
			case err == nil:
				answer(http.StatusOK, res.Commission.ReversedAmountCents)
			case errors.As(err, &tooLarge):
				answer(http.StatusBadRequest, 0)
			default:
				t.Errorf("direct refund: %v", err)
			}
		}()
	}
	wg.Wait()
	if want := map[int]int{200: 4, 400: 4}; !cmp.Equal(statuses, want) {
		t.Errorf("statuses = %v, want %v", statuses, want)
	}
	// Each refund reversed its share on top of the one before: 980 × 1000/4900 at a time.
	slices.Sort(reversed)
	if want := []int64{200, 400, 600, 800}; !slices.Equal(reversed, want) {
		t.Errorf("reversed amounts answered = %v, want %v", reversed, want)
	}
	if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id
		WHERE s.id = $1 AND s.refunded_amount_cents = 4000 AND c.reversed_amount_cents = 800 AND c.status = 'pending'
		AND (SELECT sum(amount_cents) FROM refunds WHERE sale_id = s.id) = 4000
		AND (SELECT sum(commission_reversed_cents) FROM refunds WHERE sale_id = s.id) = 800`, saleID); n != 1 {
		t.Error("the sale, its commission and its refunds do not add up to four refunds of 1000")
	}
}
