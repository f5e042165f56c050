package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/sdk"
	"github.com/reftrack/reftrack/sdk/client"
)

// --- success -----------------------------------------------------------------------------------------

func TestLeadSaleRefund(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	ctx := context.Background()
	clickID := f.click("buyer")

	lead := c.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_42", ClickID: clickID, Email: "ada@example.com"})
	if !lead.OK || lead.Status != 200 || lead.Error != nil || lead.Lead == nil || lead.Attempts != 1 || lead.RequestID == "" {
		t.Fatalf("lead = %+v", lead)
	}
	if lead.Lead.Message != "Lead tracked successfully" || lead.Lead.LeadId == nil || lead.Lead.Attribution.ClickId == nil || *lead.Lead.Attribution.ClickId != clickID {
		t.Errorf("lead body = %+v", lead.Lead)
	}
	if n := f.count(`SELECT count(*) FROM leads l JOIN customers c ON c.id = l.customer_id WHERE c.customer_key = 'user_42' AND c.email = 'ada@example.com' AND l.status = 'settled'`); n != 1 {
		t.Errorf("%d settled leads for user_42, want 1", n)
	}

	sale := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_42", AmountCents: 4900, Currency: "eur", InvoiceID: "in_1001",
		Provider: "stripe", ProviderPaymentID: "pi_1", SaleType: "subscription", IsRecurring: true, SubscriptionID: "sub_1",
		SubscriptionInterval: "month", OccurredAt: time.Now().Add(-time.Hour).Truncate(time.Second)})
	if !sale.OK || sale.Sale == nil || sale.SaleNotAttributed != nil {
		t.Fatalf("sale = %+v", sale)
	}
	if s := sale.Sale; s.TransactionId != "in_1001" || s.AmountCents != 4900 || s.Currency != "EUR" || s.IsTest || s.Commission == nil || s.Commission.AmountCents != 980 {
		t.Errorf("sale body = %+v", s)
	}
	if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_1001' AND currency = 'EUR' AND provider = 'stripe'
		AND provider_payment_id = 'pi_1' AND sale_type = 'subscription' AND is_recurring AND NOT is_test`); n != 1 {
		t.Errorf("%d matching sales, want 1", n)
	}

	refund := c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_1001", Reason: sdk.ReasonChargeback, RefundReason: "disputed"})
	if !refund.OK || refund.Refund == nil {
		t.Fatalf("refund = %+v", refund)
	}
	if r := refund.Refund; r.Status != "reversed" || r.Reason != "chargeback" || r.RefundedAmountCents != 4900 || r.SaleId != sale.Sale.SaleId {
		t.Errorf("refund body = %+v", r)
	}
	if n := f.count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'reversed'`, *sale.Sale.CommissionId); n != 1 {
		t.Error("commission not reversed")
	}
}

func TestTestModeSaleAndLead(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	ctx := context.Background()
	clickID := f.click("tester")
	lead := c.TrackLead(ctx, sdk.LeadInput{ClickID: clickID, CustomerExternalID: "t1", TestMode: true})
	if !lead.OK || lead.Lead.Data == nil || !bool(lead.Lead.Data.TestMode) {
		t.Fatalf("test lead = %+v", lead)
	}
	sale := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "t1", AmountCents: 1000, TestMode: true})
	if !sale.OK || sale.Sale == nil || !sale.Sale.IsTest || !strings.HasPrefix(sale.Sale.TransactionId, "test_txn_") {
		t.Fatalf("test sale = %+v", sale)
	}
	if n := f.count(`SELECT count(*) FROM sales WHERE is_test AND processor_event_id = $1`, sale.Sale.TransactionId); n != 1 {
		t.Error("test sale not stored as a test")
	}
}

// A partial refund, then the rest.
func TestPartialRefund(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	ctx := context.Background()
	f.customer("p1")
	if r := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "p1", AmountCents: 4900, InvoiceID: "in_p1"}); !r.OK {
		t.Fatal(r)
	}
	part := c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_p1", RefundAmountCents: 1225})
	if !part.OK || part.Refund.Status != "refunded" || part.Refund.RefundedAmountCents != 1225 {
		t.Errorf("partial = %+v", part)
	}
	rest := c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_p1"})
	if !rest.OK || rest.Refund.Status != "reversed" || rest.Refund.RefundedAmountCents != 4900 {
		t.Errorf("rest = %+v", rest)
	}
}

// A click older than the attribution window: 200, nothing recorded.
func TestSaleOutsideTheWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.customer("old")
	if _, err := f.env.DB.Exec(`UPDATE clicks SET click_timestamp = (SELECT signed_up_at FROM customers WHERE customer_key = 'old') - interval '90 days'`); err != nil {
		t.Fatal(err)
	}
	r := f.client().TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: "old", AmountCents: 100, InvoiceID: "late"})
	if !r.OK || r.Sale != nil || r.SaleNotAttributed == nil || r.SaleNotAttributed.WindowDays != 60 || r.SaleNotAttributed.ClickAgeDays != 90 {
		t.Fatalf("result = %+v (%s)", r, r.Data)
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d sales recorded", n)
	}
}

// --- errors: every documented error reaches the caller as a Result ------------------------------------

func TestDocumentedErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	c := f.client()
	f.customer("dup")
	first := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "dup", AmountCents: 100, InvoiceID: "in_dup"})
	if !first.OK {
		t.Fatal(first)
	}
	other := f.env.Seed(seed.Options{})

	tests := []struct {
		name                string
		call                func(*sdk.Client) sdk.Result
		client              *sdk.Client
		status              int
		errName, code, msg  string
		wantDetails         map[string]any
		wantAlreadyRecorded bool
	}{
		// 400
		// Every error carries error.code, lead errors included.
		{name: "lead: unknown click", status: 400, errName: "BadRequestError", code: "invalid_request", msg: "Customer not found. Provide a valid click_id or customer_key.",
			call: func(c *sdk.Client) sdk.Result { return c.TrackLead(ctx, sdk.LeadInput{ClickID: "nope"}) }},
		{name: "lead: already a lead", status: 400, errName: "BadRequestError", code: "invalid_request", msg: "Customer status cannot be updated to lead. Current status: converted",
			call: func(c *sdk.Client) sdk.Result { return c.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "dup"}) }},
		{name: "sale: old occurred_at", status: 400, errName: "BadRequestError", code: "invalid_request", msg: "occurred_at must be an ISO 8601 time within the last 30 days",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "dup", AmountCents: 1, InvoiceID: "x1", OccurredAt: time.Now().AddDate(0, 0, -31)})
			}},
		{name: "sale: unknown provider", status: 400, errName: "BadRequestError", code: "invalid_request", msg: "provider must be one of: stripe, paddle, lemonsqueezy, chargebee, recurly, braintree, paypal, adyen, square, shopify, app_store, google_play, manual, other",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "dup", AmountCents: 1, InvoiceID: "x2", Provider: "cash"})
			}},
		{name: "sale: unknown customer", status: 400, errName: "BadRequestError", code: "no_attribution", msg: "Customer not found. Provide customer_key or click_id.",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "nobody", AmountCents: 1, InvoiceID: "x3"})
			}},
		{name: "refund: bad amount", status: 400, errName: "BadRequestError", code: "invalid_request", msg: "refund_amount_cents must be at most 100, the amount not yet refunded",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_dup", RefundAmountCents: 101})
			}},
		// 401
		{name: "sale: empty key", client: f.clientWithKey(""), status: 401, errName: "UnauthorizedError", code: "unauthorized", msg: "Missing API token",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{ClickID: "c", AmountCents: 1, InvoiceID: "x4"})
			}},
		{name: "refund: unknown key", client: f.clientWithKey("rt_unknown"), status: 401, errName: "UnauthorizedError", code: "unauthorized", msg: "Invalid API token",
			call: func(c *sdk.Client) sdk.Result { return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_dup"}) }},
		{name: "lead: unknown key", client: f.clientWithKey("rt_unknown"), status: 401, errName: "UnauthorizedError", code: "unauthorized", msg: "Invalid API token",
			call: func(c *sdk.Client) sdk.Result { return c.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "dup"}) }},
		// 403
		{name: "lead: test mode names another program", status: 403, errName: "ForbiddenError", code: "forbidden", msg: "program_id does not match the API key",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "dup", AdditionalData: map[string]any{"test_mode": true, "program_id": other.ProgramID}})
			}},
		// 404
		{name: "refund: no such sale", status: 404, errName: "NotFoundError", code: "not_found", msg: "Sale not found for transaction_id",
			call: func(c *sdk.Client) sdk.Result { return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_missing"}) }},
		// 409
		{name: "sale: duplicate", status: 409, errName: "ConflictError", code: "duplicate_transaction", msg: "Duplicate transaction_id. This sale has already been recorded.",
			wantDetails: map[string]any{"sale_id": float64(first.Sale.SaleId)}, wantAlreadyRecorded: true,
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "dup", AmountCents: 100, InvoiceID: "in_dup"})
			}},
		// 413
		{name: "lead: body too large", status: 413, errName: "PayloadTooLargeError", code: "payload_too_large", msg: "Request body is larger than the limit of 64 KiB",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "dup", AdditionalData: map[string]any{"blob": strings.Repeat("x", 70<<10)}})
			}},
		// 422
		{name: "sale: unsupported currency", status: 422, errName: "UnprocessableEntityError", code: "unsupported_currency", msg: "currency GBP is not supported",
			call: func(c *sdk.Client) sdk.Result {
				return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "dup", AmountCents: 1, InvoiceID: "x5", Currency: "GBP"})
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := tc.client
			if cl == nil {
				cl = c
			}
			r := tc.call(cl)
			if r.OK || r.Status != tc.status || r.Error == nil || r.Attempts != 1 {
				t.Fatalf("result = %+v (%s)", r, r.Data)
			}
			e := r.Error
			if e.Status != tc.status || e.Name != tc.errName || e.Code != tc.code || e.Message != tc.msg || e.RequestID == "" || e.RequestID != r.RequestID {
				t.Errorf("error = %+v, want %d %s %q %q", e, tc.status, tc.errName, tc.code, tc.msg)
			}
			if tc.wantDetails != nil {
				if diff := cmp.Diff(tc.wantDetails, e.Details); diff != "" {
					t.Errorf("details (-want +got):\n%s", diff)
				}
				if id, ok := e.SaleID(); !ok || id != first.Sale.SaleId {
					t.Errorf("SaleID() = %d, %v", id, ok)
				}
			}
			if r.AlreadyRecorded() != tc.wantAlreadyRecorded {
				t.Errorf("AlreadyRecorded() = %v", r.AlreadyRecorded())
			}
			var apiErr *sdk.APIError
			if err := r.Err(); !errors.As(err, &apiErr) || apiErr != e || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("Err() = %v", err)
			}
		})
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 1 {
		t.Errorf("%d sales after the failed calls, want the first only", n)
	}
}

// The SDK's own checks answer before sending, with the service's message for the same mistake.
func TestChecksBeforeSending(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r    sdk.Result
		msg  string
	}{
		{"lead without ids", c.TrackLead(ctx, sdk.LeadInput{Email: "a@example.com"}), "click_id or customer_key is required"},
		{"sale amount zero", c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "a", InvoiceID: "i"}), "amount_cents is required and must be a positive integer"},
		{"sale amount negative", c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "a", InvoiceID: "i", AmountCents: -5}), "amount_cents is required and must be a positive integer"},
		{"sale without ids", c.TrackSale(ctx, sdk.SaleInput{AmountCents: 5, InvoiceID: "i"}), "Customer not found. Provide customer_key or click_id."},
		{"sale without invoice", c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "a", AmountCents: 5}), "transaction_id is required and must be a string"},
		{"refund without invoice", c.TrackRefund(ctx, sdk.RefundInput{Reason: "refund"}), "transaction_id is required"},
		{"refund bad reason", c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "i", Reason: "fraud"}), "reason must be refund or chargeback"},
		{"refund negative amount", c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "i", RefundAmountCents: -1}), "refund_amount_cents must be a positive integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := sdk.APIError{Code: sdk.CodeInvalidRequest, Message: tc.msg}
			if tc.r.OK || tc.r.Status != 0 || tc.r.Attempts != 0 || tc.r.Error == nil {
				t.Fatalf("result = %+v", tc.r)
			}
			if diff := cmp.Diff(want, *tc.r.Error, cmpAPIError); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
	if seen, _ := f.faults.counts(); seen != 0 {
		t.Errorf("%d requests sent, want none", seen)
	}
}

var cmpAPIError = cmp.Comparer(func(a, b sdk.APIError) bool {
	return a.Status == b.Status && a.Code == b.Code && a.Message == b.Message && a.RequestID == b.RequestID
})

// A retired key's typed 401 reaches the caller with its hint, and is logged once.
func TestRetiredKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := apikeys.MarkRotation(context.Background(), f.env.DB.DB, f.prog.ProgramID, time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	for range 2 {
		r := c.TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: "a", AmountCents: 1, InvoiceID: "i"})
		if r.Status != 401 || r.Error.Code != "api_key_rotation_required" || r.Error.Hint == "" || r.Error.DocsURL == "" || r.Error.Name != "" {
			t.Fatalf("result = %+v", r.Error)
		}
	}
	if n := strings.Count(f.logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings logged, want 1:\n%s", n, f.logs)
	}
}

// A key marked for rotation still works; the warnings and headers surface on the Result and are logged
// once per Client.
func TestRotationWarnings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	deadline := time.Now().Add(72 * time.Hour).Truncate(time.Second).UTC()
	if _, err := apikeys.MarkRotation(context.Background(), f.env.DB.DB, f.prog.ProgramID, deadline); err != nil {
		t.Fatal(err)
	}
	c := f.client()
	for i := range 3 {
		key := fmt.Sprint("rot", i)
		f.customer(key)
		r := c.TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: key, AmountCents: 100, InvoiceID: "in_" + key})
		if !r.OK || len(r.Warnings) != 1 || r.Rotation == nil {
			t.Fatalf("result = %+v", r)
		}
		w := r.Warnings[0]
		if w.Code != "api_key_rotation_required" || !w.RotateBy.Equal(deadline) || w.DocsUrl == "" || w.Hint == "" {
			t.Errorf("warning = %+v", w)
		}
		if !r.Rotation.Sunset.Equal(deadline) || r.Rotation.MarkedAt.IsZero() || r.Rotation.DocsURL != w.DocsUrl {
			t.Errorf("rotation = %+v", r.Rotation)
		}
		if r.Sale.Warnings == nil || len(*r.Sale.Warnings) == 0 {
			t.Error("decoded sale lost its warnings")
		}
	}
	if n := strings.Count(f.logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings logged, want 1:\n%s", n, f.logs)
	}
}

// --- retries -----------------------------------------------------------------------------------------

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		plan          []fault
		call          func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result
		status        int
		code          string
		attempts      int // requests sent
		reached       int // requests that reached the server
		sales, leads  int // rows afterwards
		alreadyRecord bool
	}{
		{name: "sale after a refused connection", plan: []fault{refuse}, call: buy("in_a"), status: 200, attempts: 2, reached: 1, sales: 1},
		{name: "sale whose answer was lost is reported as already recorded", plan: []fault{dropAnswer}, call: buy("in_b"),
			status: 409, code: "duplicate_transaction", attempts: 2, reached: 2, sales: 1, alreadyRecord: true},
		{name: "sale through two 503s", plan: []fault{proxy503, proxy503}, call: buy("in_c"), status: 200, attempts: 3, reached: 1, sales: 1},
		{name: "sale after a 429", plan: []fault{limit429}, call: buy("in_d"), status: 200, attempts: 2, reached: 1, sales: 1},
		{name: "sale gives up after MaxAttempts", plan: []fault{proxy503, proxy503, proxy503, proxy503, proxy503}, call: buy("in_e"),
			status: 503, code: sdk.CodeUnexpectedResponse, attempts: 4, reached: 0, sales: 0},
		{name: "a 4xx is not retried", call: func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result {
			return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "nobody", AmountCents: 1, InvoiceID: "x"})
		}, status: 400, code: "no_attribution", attempts: 1, reached: 1},
		{name: "lead whose answer was lost answers the documented 400", plan: []fault{dropAnswer}, call: func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result {
			return c.TrackLead(ctx, sdk.LeadInput{ClickID: freshClick, CustomerExternalID: "fresh"})
		}, status: 400, code: "invalid_request", attempts: 2, reached: 2, leads: 1},
		{name: "whole refund whose answer was lost is resent (skipped)", plan: []fault{dropAnswer}, call: func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result {
			return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_base"})
		}, status: 200, attempts: 2, reached: 2},
		{name: "partial refund is not resent after a network failure", plan: []fault{dropAnswer}, call: func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result {
			return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_base", RefundAmountCents: 10})
		}, status: 0, code: sdk.CodeNetwork, attempts: 1, reached: 1},
		{name: "partial refund is resent after a 503", plan: []fault{proxy503}, call: func(ctx context.Context, c *sdk.Client, freshClick string) sdk.Result {
			return c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_base", RefundAmountCents: 10})
		}, status: 200, attempts: 2, reached: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			ctx := context.Background()
			c := f.client()
			// Every case starts with one customer who has bought once (in_base) and one who only clicked.
			f.customer("buyer")
			if r := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "buyer", AmountCents: 100, InvoiceID: "in_base"}); !r.OK {
				t.Fatal(r)
			}
			freshClick := f.click("fresh")
			sales0, leads0 := f.count(`SELECT count(*) FROM sales`), f.count(`SELECT count(*) FROM leads`)

			f.faults.setPlan(tc.plan...)
			start := time.Now()
			r := tc.call(ctx, c, freshClick)
			seen, reached := f.faults.counts()
			if r.Status != tc.status || seen != tc.attempts || r.Attempts != tc.attempts || reached != tc.reached {
				t.Fatalf("status %d after %d attempts (%d sent, %d reached the server), want %d after %d (%d reached): %+v",
					r.Status, r.Attempts, seen, reached, tc.status, tc.attempts, tc.reached, r.Error)
			}
			if (r.Error == nil && tc.code != "") || (r.Error != nil && r.Error.Code != tc.code) {
				t.Errorf("error = %+v, want code %q", r.Error, tc.code)
			}
			if r.AlreadyRecorded() != tc.alreadyRecord {
				t.Errorf("AlreadyRecorded() = %v", r.AlreadyRecorded())
			}
			if got := f.count(`SELECT count(*) FROM sales`) - sales0; got != tc.sales {
				t.Errorf("%d sales recorded, want %d", got, tc.sales)
			}
			if got := f.count(`SELECT count(*) FROM leads`) - leads0; got != tc.leads {
				t.Errorf("%d leads recorded, want %d", got, tc.leads)
			}
			if tc.plan != nil && tc.plan[0] == limit429 && time.Since(start) < time.Second {
				t.Errorf("retried after %v, before the 1 s Retry-After", time.Since(start))
			}
		})
	}
}

func buy(invoice string) func(context.Context, *sdk.Client, string) sdk.Result {
	return func(ctx context.Context, c *sdk.Client, _ string) sdk.Result {
		return c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "buyer", AmountCents: 2500, InvoiceID: invoice})
	}
}

// "Failed to create commission" is the one 500 never retried.
func TestFailedCommissionIsNotRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.customer("c1")
	for _, q := range []string{
		`CREATE FUNCTION fail_commission() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'commission store down'; END $$`,
		`CREATE TRIGGER fail_commission BEFORE INSERT ON commissions FOR EACH ROW EXECUTE FUNCTION fail_commission()`,
	} {
		if _, err := f.env.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := f.client().TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: "c1", AmountCents: 100, InvoiceID: "in_fail"})
	if r.Status != 500 || r.Attempts != 1 || r.Error.Message != "Failed to create commission" || r.Error.Code != "internal_error" {
		t.Fatalf("result = %+v attempts %d", r.Error, r.Attempts)
	}
	if seen, _ := f.faults.counts(); seen != 1 {
		t.Errorf("%d requests sent, want 1", seen)
	}
}

// A 500 that may be retried is: the sale fails in the database once and the retry records it.
func TestServer500IsRetried(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.customer("c1")
	for _, q := range []string{
		// A sequence, unlike a table, keeps its count when the failing transaction rolls back.
		`CREATE SEQUENCE sale_attempts`,
		`CREATE FUNCTION fail_first_sale() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN IF nextval('sale_attempts') = 1 THEN RAISE EXCEPTION 'sales store down'; END IF; RETURN NEW; END $$`,
		`CREATE TRIGGER fail_first_sale BEFORE INSERT ON sales FOR EACH ROW EXECUTE FUNCTION fail_first_sale()`,
	} {
		if _, err := f.env.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := f.client().TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: "c1", AmountCents: 100, InvoiceID: "in_once"})
	if !r.OK || r.Attempts != 2 || r.Sale == nil {
		t.Fatalf("result = %+v attempts %d", r.Error, r.Attempts)
	}
	if n := f.count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_once'`); n != 1 {
		t.Errorf("%d sales, want 1", n)
	}
	if !strings.Contains(f.logs.String(), "reftrack: retrying") || !strings.Contains(f.logs.String(), "Sale tracking failed") {
		t.Errorf("the retry was not logged:\n%s", f.logs)
	}
}

// A real 429 whose Retry-After is longer than the policy allows comes back to the caller at once.
func TestRateLimitBeyondPolicy(t *testing.T) {
	t.Parallel()
	// The server's one clock stands 10 s into a minute, so the window has 50 s left: Retry-After says so
	// whatever the wall clock does meanwhile.
	f := newFixture(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	c := f.client(sdk.WithRetry(sdk.RetryPolicy{MaxAttempts: 3, MinBackoff: time.Millisecond, MaxRetryAfter: 10 * time.Second}))
	ctx := context.Background()
	for i := range 120 {
		c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: fmt.Sprint("none-", i)})
	}
	r := c.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "none"})
	if r.Status != 429 || r.Attempts != 1 || r.Error.Code != "rate_limited" || r.Error.RetryAfter <= 30*time.Second || r.Error.Message == "" {
		t.Fatalf("result = %+v attempts %d", r.Error, r.Attempts)
	}
}

// The context bounds retries: no wait that would outlast its deadline, and a cancelled call ends.
func TestContextBoundsRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(sdk.WithRetry(sdk.RetryPolicy{MaxAttempts: 10, MinBackoff: 30 * time.Second, MaxBackoff: 30 * time.Second}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.faults.setPlan(proxy503)
	start := time.Now()
	r := c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "a", AmountCents: 1, InvoiceID: "i"})
	if r.Status != 503 || r.Attempts != 1 || time.Since(start) > 4*time.Second {
		t.Errorf("result = %+v after %v", r, time.Since(start))
	}
	if !strings.Contains(r.Error.Message, "upstream unavailable") {
		t.Errorf("message = %q", r.Error.Message)
	}

	cancelled, stop := context.WithCancel(context.Background())
	stop()
	r = c.TrackLead(cancelled, sdk.LeadInput{CustomerExternalID: "a"})
	if r.Status != 0 || r.Error.Code != sdk.CodeNetwork || r.Attempts != 1 || !errors.Is(r.Err(), context.Canceled) {
		t.Errorf("cancelled = %+v", r.Error)
	}

	f.faults.setPlan(refuse, refuse, refuse, refuse)
	r = f.client(sdk.WithRetry(sdk.RetryPolicy{MaxAttempts: 2, MinBackoff: time.Millisecond})).TrackLead(context.Background(), sdk.LeadInput{CustomerExternalID: "a"})
	if r.Status != 0 || r.Attempts != 2 || !errors.Is(r.Err(), syscall.ECONNREFUSED) {
		t.Errorf("refused = %+v attempts %d", r.Error, r.Attempts)
	}
}

// --- client ------------------------------------------------------------------------------------------

// One Client used from many goroutines: every sale recorded once, and concurrent sends of one invoice
// record one sale.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()
	ctx := context.Background()
	const n = 16
	for i := range n {
		f.customer(fmt.Sprint("cc", i))
	}
	var wg sync.WaitGroup
	results := make([]sdk.Result, 2*n)
	for i := range n {
		wg.Go(func() {
			results[i] = c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: fmt.Sprint("cc", i), AmountCents: 100, InvoiceID: fmt.Sprint("in_cc", i)})
		})
		wg.Go(func() {
			results[n+i] = c.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "cc0", AmountCents: 100, InvoiceID: "in_same"})
		})
	}
	wg.Wait()
	same := map[string]int{}
	for i, r := range results {
		switch {
		case i < n && !r.OK:
			t.Errorf("sale %d: %v", i, r)
		case i >= n && r.OK:
			same["ok"]++
		case i >= n && r.AlreadyRecorded():
			same["already"]++
		case i >= n:
			t.Errorf("same-invoice sale: %v", r)
		}
	}
	if same["ok"] != 1 || same["already"] != n-1 {
		t.Errorf("same invoice: %v, want 1 ok and %d already recorded", same, n-1)
	}
	if got := f.count(`SELECT count(*) FROM sales`); got != n+1 {
		t.Errorf("%d sales, want %d", got, n+1)
	}
}

func TestHeadersAndOptions(t *testing.T) {
	f := newFixture(t)
	c := f.client(sdk.WithUserAgent("acme-billing/2.3"))
	c.TrackLead(context.Background(), sdk.LeadInput{CustomerExternalID: "x"})
	req := f.faults.lastRequest()
	if ua := req.Header.Get("User-Agent"); !strings.HasPrefix(ua, "acme-billing/2.3 reftrack-go/"+sdk.Version+" (go") {
		t.Errorf("User-Agent = %q", ua)
	}
	if got := req.Header.Get("Authorization"); got != "Bearer "+f.prog.APIKey {
		t.Errorf("Authorization = %q", got)
	}

	t.Setenv("REFTRACK_BASE_URL", "https://track.example.com/")
	if got := sdk.New("k").BaseURL(); got != "https://track.example.com" {
		t.Errorf("BaseURL from the environment = %q", got)
	}
	if got := sdk.New("k", sdk.WithBaseURL("http://127.0.0.1:9")).BaseURL(); got != "http://127.0.0.1:9" {
		t.Errorf("BaseURL option = %q", got)
	}
	t.Setenv("REFTRACK_BASE_URL", "")
	if got := sdk.New("k").BaseURL(); got != sdk.DefaultBaseURL {
		t.Errorf("default BaseURL = %q", got)
	}
}

// The generated client reaches every other route with the Client's key.
func TestGeneratedClientReachable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res, err := f.client().API().GetReadinessWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode() != 200 || res.JSON200 == nil || res.JSON200.ProgramId != f.prog.ProgramID {
		t.Fatalf("readiness: %d %s", res.StatusCode(), res.Body)
	}
	var _ *client.ClientWithResponses = f.client().API()
}
