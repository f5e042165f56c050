package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

func sale(env *apitest.Env, key string, body any) *apitest.Response {
	return env.Do(http.MethodPost, "/api/v1/track/sale", body, apitest.Bearer(key)...)
}

// customerWithLead makes a click and a server-mode lead for customer key, returning the click id.
func customerWithLead(t *testing.T, env *apitest.Env, r seed.Result, key string) string {
	t.Helper()
	clickID := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "ua-"+key).JSON(t)["click_id"].(string)
	if res := lead(env, map[string]any{"click_id": clickID, "customer_key": key}, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	return clickID
}

// codedError checks a sale/refund platform error with its code.
func codedError(t *testing.T, res *apitest.Response, status int, name, code, message string) map[string]any {
	t.Helper()
	e := platformError(t, res, status, name, message)
	if e["code"] != code {
		t.Errorf("code = %v, want %s", e["code"], code)
	}
	return e
}

// --- 200 ---------------------------------------------------------------------------------------------

func TestSaleRecordedWithCommission(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{}) // percent, 20
	clickID := customerWithLead(t, env, r, "cust-1")
	res := sale(env, r.APIKey, map[string]any{"transaction_id": "in_1", "amount_cents": 4900, "currency": "USD", "customer_key": "cust-1",
		"provider": "stripe", "provider_payment_id": "pi_1", "livemode": true, "sale_type": "payment"})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	saleID, commissionID := body["sale_id"], body["commission_id"]
	want := map[string]any{"success": true, "message": "Sale tracked successfully", "sale_id": saleID, "commission_id": commissionID,
		"transaction_id": "in_1", "amount_cents": 4900.0, "currency": "USD", "is_test": false,
		"commission":  map[string]any{"id": commissionID, "amount_cents": 980.0, "currency": "USD", "status": "pending", "clawback_cents": 0.0},
		"attribution": map[string]any{"status": "attributed", "click_id": clickID, "partner_id": float64(r.PartnerID), "program_id": float64(r.ProgramID)}}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id
		WHERE s.id = $1 AND s.processor_event_id = 'in_1' AND c.amount_cents = 980 AND s.provider_payment_id = 'pi_1'`, saleID); n != 1 {
		t.Error("sale and commission not stored")
	}
	if s := customerStatus(t, env, r.ProgramID, "cust-1"); s != "converted" {
		t.Errorf("customer status = %s", s)
	}
	if n := env.Count(`SELECT sum(sales) FROM performance_hourly_live WHERE program_id = $1`, r.ProgramID); n != 1 {
		t.Errorf("conversions counted = %d", n)
	}
	// The converted customer cannot become a lead again.
	platformError(t, lead(env, map[string]any{"customer_key": "cust-1"}, apitest.Bearer(r.APIKey)...), 400, "BadRequestError",
		"Customer status cannot be updated to lead. Current status: converted")
}

func TestCommissionTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, rate, currency string
		amounts             []int64
		want                []any // commission amount per sale, nil = none
	}{
		{"percent", "20", "USD", []int64{4900, 4900}, []any{980.0, nil}},
		{"fixed", "25", "USD", []int64{4900, 100}, []any{2500.0, nil}},
		{"fixed", "25", "VND", []int64{100000}, []any{25.0}},
		{"recurring_percent", "12.5", "EUR", []int64{999, 1001}, []any{125.0, 125.0}},
		{"recurring_fixed", "9.99", "USD", []int64{5000, 5000, 5000}, []any{999.0, 999.0, 999.0}},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.currency, func(t *testing.T) {
			t.Parallel()
			env := apitest.New(t)
			r := env.Seed(seed.Options{CommissionType: tt.typ, CommissionRate: tt.rate})
			customerWithLead(t, env, r, "c")
			for i, amount := range tt.amounts {
				res := sale(env, r.APIKey, map[string]any{"transaction_id": fmt.Sprintf("t%d", i), "amount_cents": amount, "currency": tt.currency, "customer_key": "c"})
				if res.Status != http.StatusOK {
					t.Fatalf("sale %d: %d %s", i, res.Status, res.Body)
				}
				var got any
				if c, ok := res.JSON(t)["commission"].(map[string]any); ok {
					got = c["amount_cents"]
				}
				if got != tt.want[i] {
					t.Errorf("sale %d: commission %v, want %v", i, got, tt.want[i])
				}
			}
		})
	}
}

func TestRecurringCommissionDuration(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
	if _, err := env.DB.Exec(`UPDATE programs SET commission_duration_months = 1 WHERE id = $1`, r.ProgramID); err != nil {
		t.Fatal(err)
	}
	customerWithLead(t, env, r, "c")
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "m0", "amount_cents": 1000, "customer_key": "c"}); res.JSON(t)["commission_id"] == nil {
		t.Fatalf("first sale: %s", res.Body)
	}
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "m1", "amount_cents": 1000, "customer_key": "c"}); res.JSON(t)["commission_id"] == nil {
		t.Errorf("a sale within the duration paid nothing: %s", res.Body)
	}
	// Once the first sale is more than a month old, payments no longer pay.
	if _, err := env.DB.Exec(`UPDATE sales SET sale_date = now() - interval '40 days' WHERE processor_event_id = 'm0'`); err != nil {
		t.Fatal(err)
	}
	res := sale(env, r.APIKey, map[string]any{"transaction_id": "m2", "amount_cents": 1000, "customer_key": "c"})
	if body := res.JSON(t); body["sale_id"] == nil || body["commission_id"] != nil || body["commission"] != nil {
		t.Errorf("a sale after the duration: %s", res.Body)
	}
}

func TestSaleByClickOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	clickID := click(t, env, r)["click_id"].(string)
	res := sale(env, r.APIKey, map[string]any{"transaction_id": "c-only", "amount_cents": 1000, "click_id": clickID, "customer_key": "new-cust"})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	if s := customerStatus(t, env, r.ProgramID, "new-cust"); s != "converted" {
		t.Errorf("status = %s", s)
	}
}

func TestTestModeSale(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "c")
	res := sale(env, r.APIKey, map[string]any{"amount_cents": 1000, "customer_key": "c", "additional_data": map[string]any{"test_mode": true}})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	txn, _ := body["transaction_id"].(string)
	data, _ := body["data"].(map[string]any)
	if !strings.HasPrefix(txn, "test_txn_") || body["is_test"] != true || data["test_mode"] != true || data["eventId"] != body["sale_id"] {
		t.Errorf("body = %v", body)
	}
	if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id WHERE s.is_test AND c.is_test`); n != 1 {
		t.Error("test sale or its commission not marked is_test")
	}
}

// The window is checked on each payment until a conversion is recorded, never after.
func TestAttributionWindow(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "late")
	if _, err := env.DB.Exec(`UPDATE clicks SET click_timestamp = (SELECT signed_up_at FROM customers WHERE customer_key = 'late') - interval '61 days'`); err != nil {
		t.Fatal(err)
	}
	res := sale(env, r.APIKey, map[string]any{"transaction_id": "w1", "amount_cents": 1000, "customer_key": "late"})
	if res.Status != http.StatusOK {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	want := map[string]any{"success": true, "attributed": false, "reason": "attribution_window_expired", "click_age_days": 61.0,
		"window_days": 60.0, "sale_id": nil, "commission_id": nil, "message": body["message"]}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Error("a sale outside the window was recorded")
	}
	// The same transaction_id may come again; with a wider window it is recorded.
	if _, err := env.DB.Exec(`UPDATE programs SET attribution_window_days = 90`); err != nil {
		t.Fatal(err)
	}
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "w1", "amount_cents": 1000, "customer_key": "late"}); res.JSON(t)["sale_id"] == nil {
		t.Fatalf("second payment: %s", res.Body)
	}
	// After the conversion, later payments are not re-checked.
	if _, err := env.DB.Exec(`UPDATE programs SET attribution_window_days = 1`); err != nil {
		t.Fatal(err)
	}
	if res := sale(env, r.APIKey, map[string]any{"transaction_id": "w2", "amount_cents": 1000, "customer_key": "late"}); res.JSON(t)["sale_id"] == nil {
		t.Errorf("payment after conversion: %s", res.Body)
	}
}

// --- 400, 422 -----------------------------------------------------------------------------------------

func TestSaleValidation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	now := time.Now().UTC()
	base := func(kv ...any) map[string]any {
		m := map[string]any{"transaction_id": "v1", "amount_cents": 100, "customer_key": "c"}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
				continue
			}
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	const (
		txnMsg      = "transaction_id is required and must be a string"
		amountMsg   = "amount_cents is required and must be a positive integer"
		occurredMsg = "occurred_at must be an ISO 8601 time within the last 30 days"
		ppidMsg     = "provider_payment_id must be a string of 1 to 255 characters"
	)
	providerMsg := "provider must be one of: stripe, paddle, lemonsqueezy, chargebee, recurly, braintree, paypal, adyen, square, shopify, app_store, google_play, manual, other"
	tests := []struct {
		name string
		body any
		msg  string
	}{
		{"transaction_id missing", base("transaction_id", nil), txnMsg},
		{"transaction_id a number", base("transaction_id", 7), txnMsg},
		{"transaction_id empty", base("transaction_id", ""), txnMsg},
		{"transaction_id first: before amount", base("transaction_id", nil, "amount_cents", nil), txnMsg},
		{"amount missing", base("amount_cents", nil), amountMsg},
		{"amount zero", base("amount_cents", 0), amountMsg},
		{"amount negative", base("amount_cents", -5), amountMsg},
		{"amount a string", base("amount_cents", "100"), amountMsg},
		{"amount a fraction", `{"transaction_id":"v","amount_cents":10.5,"customer_key":"c"}`, amountMsg},
		{"amount before occurred_at", base("amount_cents", 0, "occurred_at", "nope"), amountMsg},
		{"occurred_at not ISO", base("occurred_at", "yesterday"), occurredMsg},
		{"occurred_at without offset", base("occurred_at", now.Format("2006-01-02T15:04:05")), occurredMsg},
		{"occurred_at not a real date", base("occurred_at", "2026-02-30T10:00:00Z"), occurredMsg},
		{"occurred_at 31 days old", base("occurred_at", now.Add(-31*24*time.Hour).Format(time.RFC3339)), occurredMsg},
		{"occurred_at 10 minutes ahead", base("occurred_at", now.Add(10*time.Minute).Format(time.RFC3339)), occurredMsg},
		{"occurred_at a number", base("occurred_at", 1700000000), occurredMsg},
		{"provider unknown", base("provider", "venmo"), providerMsg},
		{"provider_payment_id empty", base("provider_payment_id", ""), ppidMsg},
		{"provider_payment_id too long", base("provider_payment_id", strings.Repeat("p", 256)), ppidMsg},
		{"provider_payment_id a number", base("provider_payment_id", 5), ppidMsg},
		{"livemode a string", base("livemode", "yes"), "livemode must be a boolean"},
		{"not an object", `[1]`, "Request body must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codedError(t, sale(env, r.APIKey, tt.body), 400, "BadRequestError", "invalid_request", tt.msg)
		})
	}
	t.Run("422 currency", func(t *testing.T) {
		for cur, shown := range map[string]string{"GBP": "GBP", "usdollar": "usdollar"} {
			codedError(t, sale(env, r.APIKey, base("currency", cur)), 422, "UnprocessableEntityError", "unsupported_currency",
				"currency "+shown+" is not supported")
		}
	})
	t.Run("valid edges pass validation", func(t *testing.T) {
		// 29 days old, 4 minutes ahead, 255-character id, lower-case currency: refused only for the missing customer.
		for _, b := range []map[string]any{
			base("occurred_at", now.Add(-29*24*time.Hour).Format(time.RFC3339)),
			base("occurred_at", now.Add(4*time.Minute).Format("2006-01-02T15:04:05.000-07:00")),
			base("provider_payment_id", strings.Repeat("p", 255), "livemode", false, "provider", "paddle"),
			base("currency", "eur"),
		} {
			codedError(t, sale(env, r.APIKey, b), 400, "BadRequestError", "no_attribution", "Customer not found. Provide customer_key or click_id.")
		}
	})
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded by refused requests", n)
	}
}

func TestSaleAttributionErrors(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	otherClick := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": other.AffiliateURL}, "User-Agent", chromeUA).JSON(t)["click_id"]
	// A customer whose partner has no relationship with the program, and one without a partner.
	customerWithLead(t, env, r, "no-junction")
	customerWithLead(t, env, r, "no-partner")
	if _, err := env.DB.Exec(`UPDATE customers SET partner_program_id = NULL WHERE customer_key = 'no-junction'`); err != nil {
		t.Fatal(err)
	}
	if _, err := env.DB.Exec(`UPDATE customers SET partner_id = NULL WHERE customer_key = 'no-partner'`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		body map[string]any
		msg  string
	}{
		{"no identifier", map[string]any{}, "Customer not found. Provide customer_key or click_id."},
		{"unknown customer_key", map[string]any{"customer_key": "nobody"}, "Customer not found. Provide customer_key or click_id."},
		{"unknown click", map[string]any{"click_id": "nope"}, "Customer not found. Provide customer_key or click_id."},
		{"another program's click", map[string]any{"click_id": otherClick}, "No affiliate attribution found for this customer in this program"},
		{"no partner-program relationship", map[string]any{"customer_key": "no-junction"}, "No partner-program relationship found for this customer"},
		{"no partner", map[string]any{"customer_key": "no-partner"}, "partnerId required to create commission"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.body["transaction_id"], tt.body["amount_cents"] = "attr-"+tt.name, 100
			codedError(t, sale(env, r.APIKey, tt.body), 400, "BadRequestError", "no_attribution", tt.msg)
			// Nothing was recorded: the same transaction_id gets the same answer, not a 409.
			codedError(t, sale(env, r.APIKey, tt.body), 400, "BadRequestError", "no_attribution", tt.msg)
		})
	}
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded", n)
	}
}

// --- 401 ---------------------------------------------------------------------------------------------

func TestSale401(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	body := map[string]any{"transaction_id": "a1", "amount_cents": 100, "customer_key": "c"}
	for _, tt := range []struct {
		name, header, msg string
	}{
		{"missing", "", "Missing or malformed Authorization header. Expected: Bearer <token>"},
		{"not Bearer", "Basic " + r.APIKey, "Missing or malformed Authorization header. Expected: Bearer <token>"},
		{"lower-case bearer", "bearer " + r.APIKey, "Missing or malformed Authorization header. Expected: Bearer <token>"},
		{"empty token", "Bearer ", "Missing API token"},
		{"spaces only", "Bearer     ", "Missing API token"},
		{"unknown token", "Bearer rt_0000000000000000000000000000000000000000", "Invalid API token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.header != "" {
				headers = []string{"Authorization", tt.header}
			}
			codedError(t, env.Do(http.MethodPost, "/api/v1/track/sale", body, headers...), 401, "UnauthorizedError", "unauthorized", tt.msg)
		})
	}
}

// --- 409 ---------------------------------------------------------------------------------------------

func TestDuplicateTransaction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "c")
	first := sale(env, r.APIKey, map[string]any{"transaction_id": "dup", "amount_cents": 100, "customer_key": "c"}).JSON(t)["sale_id"]

	e := codedError(t, sale(env, r.APIKey, map[string]any{"transaction_id": "dup", "amount_cents": 999, "customer_key": "c"}),
		409, "ConflictError", "duplicate_transaction", "Duplicate transaction_id. This sale has already been recorded.")
	if diff := cmp.Diff(map[string]any{"sale_id": first}, e["details"]); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'dup'`); n != 1 {
		t.Errorf("%d sales under dup, want 1", n)
	}
}

// transaction_id is unique per program: brand A recording B's order id first neither blocks B's sale
// nor tells A anything, and each program's refund reaches only its own sale.
func TestTransactionIDPerProgram(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := env.Seed(seed.Options{})
	b := env.Seed(seed.Options{})
	customerWithLead(t, env, a, "ca")
	customerWithLead(t, env, b, "cb")

	resA := sale(env, a.APIKey, map[string]any{"transaction_id": "order_1001", "amount_cents": 1000, "customer_key": "ca"})
	resB := sale(env, b.APIKey, map[string]any{"transaction_id": "order_1001", "amount_cents": 2000, "customer_key": "cb"})
	if resA.Status != http.StatusOK || resB.Status != http.StatusOK {
		t.Fatalf("sales: A %d %s, B %d %s", resA.Status, resA.Body, resB.Status, resB.Body)
	}
	saleA, saleB := resA.JSON(t)["sale_id"], resB.JSON(t)["sale_id"]
	if saleA == saleB {
		t.Fatalf("both programs got sale %v", saleA)
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'order_1001' AND
		((program_id = $1 AND amount_cents = 1000) OR (program_id = $2 AND amount_cents = 2000))`, a.ProgramID, b.ProgramID); n != 2 {
		t.Errorf("%d sales stored under order_1001, want one per program", n)
	}

	// A repeat within each program is the documented 409 naming that program's own sale only.
	for _, tt := range []struct {
		key, customer string
		saleID        any
	}{{a.APIKey, "ca", saleA}, {b.APIKey, "cb", saleB}} {
		e := codedError(t, sale(env, tt.key, map[string]any{"transaction_id": "order_1001", "amount_cents": 1, "customer_key": tt.customer}),
			409, "ConflictError", "duplicate_transaction", "Duplicate transaction_id. This sale has already been recorded.")
		if diff := cmp.Diff(map[string]any{"sale_id": tt.saleID}, e["details"]); diff != "" {
			t.Errorf("details (-want +got):\n%s", diff)
		}
	}

	// A refund in A reaches A's sale only; an id only B holds is not found from A.
	if res := refund(env, a.APIKey, map[string]any{"transaction_id": "order_1001"}); res.Status != http.StatusOK || res.JSON(t)["sale_id"] != saleA {
		t.Fatalf("refund in A: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT refunded_amount_cents FROM sales WHERE id = $1`, saleB); n != 0 {
		t.Errorf("B's sale refunded by A: %d", n)
	}
	customerWithLead(t, env, b, "cb2")
	if res := sale(env, b.APIKey, map[string]any{"transaction_id": "only_b", "amount_cents": 500, "customer_key": "cb2"}); res.Status != http.StatusOK {
		t.Fatalf("B's sale: %d %s", res.Status, res.Body)
	}
	codedError(t, refund(env, a.APIKey, map[string]any{"transaction_id": "only_b"}), 404, "NotFoundError", "not_found", "Sale not found for transaction_id")
	if n := env.Count(`SELECT count(*) FROM refunds WHERE program_id = $1`, b.ProgramID); n != 0 {
		t.Errorf("%d refunds in B, want 0", n)
	}
}

// Many requests with one transaction_id at once: exactly one sale and one commission, every other 409.
func TestConcurrentDuplicateTransaction(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{CommissionType: "recurring_percent", CommissionRate: "10"})
	customerWithLead(t, env, r, "c")
	const n = 24
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i] = sale(env, r.APIKey, map[string]any{"transaction_id": "race", "amount_cents": 1000, "customer_key": "c"}).Status
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 1 || count[409] != n-1 {
		t.Errorf("statuses = %v, want one 200 and %d 409", count, n-1)
	}
	if s, c := env.Count(`SELECT count(*) FROM sales`), env.Count(`SELECT count(*) FROM commissions`); s != 1 || c != 1 {
		t.Errorf("%d sales and %d commissions, want 1 and 1", s, c)
	}
}
