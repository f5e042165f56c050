package sdk_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reftrack/reftrack/sdk"
)

// The examples run against a real server (see TestMain): they read REFTRACK_BASE_URL and
// REFTRACK_API_KEY from the environment, as a brand's backend would.

func Example() {
	ctx := context.Background()
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))

	// At sign-up: the front end forwarded the svc_click_id cookie with the form.
	lead := rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_1001", ClickID: clickIDFromSignupForm(), Email: "ada@example.com"})
	fmt.Println("lead:", lead.Status, lead.Lead.Message)

	// When the customer pays: the invoice id is the idempotency key.
	sale := rt.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_1001", AmountCents: 4900, Currency: "USD", InvoiceID: "in_1001"})
	fmt.Println("sale:", sale.Status, sale.Sale.Message, "- commission", sale.Sale.Commission.AmountCents, "cents")

	// When the payment is refunded.
	refund := rt.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_1001", Reason: sdk.ReasonRefund})
	fmt.Println("refund:", refund.Status, refund.Refund.Status)
	// Output:
	// lead: 200 Lead tracked successfully
	// sale: 200 Sale tracked successfully - commission 980 cents
	// refund: 200 reversed
}

func ExampleClient_TrackLead() {
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	res := rt.TrackLead(context.Background(), sdk.LeadInput{
		CustomerExternalID: "user_2001",             // the brand's own user id, sent again with every sale
		ClickID:            clickIDFromSignupForm(), // the svc_click_id cookie; empty when the visitor had none
		Email:              "grace@example.com",
	})
	if err := res.Err(); err != nil {
		fmt.Println("lead not recorded:", err)
		return
	}
	fmt.Println(res.Lead.Message, "- attributed:", res.Lead.Attribution.Status)
	// Output: Lead tracked successfully - attributed: attributed
}

func ExampleClient_TrackSale() {
	ctx := context.Background()
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_3001", ClickID: clickIDFromSignupForm()})

	res := rt.TrackSale(ctx, sdk.SaleInput{
		CustomerExternalID: "user_3001",
		AmountCents:        2999, // integer cents, never a float
		Currency:           "EUR",
		InvoiceID:          "in_3001", // resending it never records a second sale
	})
	switch {
	case res.OK && res.Sale != nil:
		fmt.Println("recorded sale of", res.Sale.AmountCents, res.Sale.Currency)
	case res.OK && res.SaleNotAttributed != nil:
		fmt.Println("not attributed:", res.SaleNotAttributed.Message)
	case res.AlreadyRecorded():
		fmt.Println("already recorded")
	default:
		fmt.Println("failed:", res.Err())
	}

	// Sent again (say, by a retrying job), the same invoice is reported as already recorded.
	again := rt.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_3001", AmountCents: 2999, Currency: "EUR", InvoiceID: "in_3001"})
	fmt.Println("again:", again.Status, again.AlreadyRecorded())
	// Output:
	// recorded sale of 2999 EUR
	// again: 409 true
}

// Test mode: a test sale needs no invoice id and never pays a partner.
func ExampleClient_TrackSale_testMode() {
	ctx := context.Background()
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_3002", ClickID: clickIDFromSignupForm()})
	res := rt.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_3002", AmountCents: 100, TestMode: true})
	fmt.Println(res.Status, "test:", res.Sale.IsTest)
	// Output: 200 test: true
}

func ExampleClient_TrackRefund() {
	ctx := context.Background()
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_4001", ClickID: clickIDFromSignupForm()})
	rt.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: "user_4001", AmountCents: 10000, InvoiceID: "in_4001"})

	// A partial refund, then a chargeback of the rest.
	part := rt.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_4001", RefundAmountCents: 2500, RefundReason: "one seat removed"})
	fmt.Println(part.Refund.Status, part.Refund.RefundedAmountCents)
	rest := rt.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_4001", Reason: sdk.ReasonChargeback})
	fmt.Println(rest.Refund.Status, rest.Refund.RefundedAmountCents)

	missing := rt.TrackRefund(ctx, sdk.RefundInput{InvoiceID: "in_unknown"})
	fmt.Println(missing.Status, missing.Error.Code, missing.Error.Message)
	// Output:
	// refunded 2500
	// reversed 10000
	// 404 not_found Sale not found for transaction_id
}

// Errors are values on the Result; errors.As reaches the APIError for callers who prefer `if err != nil`.
func ExampleAPIError() {
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	res := rt.TrackSale(context.Background(), sdk.SaleInput{CustomerExternalID: "user_5001", AmountCents: 100, InvoiceID: "in_5001", Currency: "GBP"})
	var apiErr *sdk.APIError
	if errors.As(res.Err(), &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.Message)
	}
	// Output: 422 unsupported_currency currency GBP is not supported
}

// checkoutSession is what a brand's payment webhook handler reads from a completed checkout. The brand
// put the customer's key and click id in its metadata when it created the session.
type checkoutSession struct {
	ID          string
	AmountTotal int64
	Currency    string
	Metadata    map[string]string
}

// forwardCheckout reports a completed checkout as a sale. It returns what the handler should do.
func forwardCheckout(ctx context.Context, rt *sdk.Client, s checkoutSession) string {
	if s.AmountTotal == 0 {
		return "skipped: nothing paid (trial or full discount)" // the service refuses zero amounts
	}
	res := rt.TrackSale(ctx, sdk.SaleInput{
		CustomerExternalID: s.Metadata["svc_customer_key"],
		ClickID:            s.Metadata["svc_click_id"],
		AmountCents:        s.AmountTotal,
		Currency:           s.Currency,
		InvoiceID:          s.ID, // a redelivered event carries the same session id
		Provider:           "stripe",
	})
	switch {
	case res.OK:
		return "recorded: answer 200"
	case res.AlreadyRecorded():
		return "already recorded: answer 200" // a redelivery, or a retry whose first answer was lost
	default:
		return "failed: answer 500 so the processor redelivers (" + res.Error.Message + ")"
	}
}

// A payment processor's webhook handler forwarding checkouts: zero amounts skipped, the session id as
// InvoiceID, a 409 counted as recorded.
func Example_webhookForwarding() {
	ctx := context.Background()
	rt := sdk.New(os.Getenv("REFTRACK_API_KEY"))
	rt.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: "user_6001", ClickID: clickIDFromSignupForm()})

	paid := checkoutSession{ID: "cs_6001", AmountTotal: 1900, Currency: "usd", Metadata: map[string]string{"svc_customer_key": "user_6001"}}
	fmt.Println(forwardCheckout(ctx, rt, paid))
	fmt.Println(forwardCheckout(ctx, rt, paid)) // the processor delivered the event twice
	fmt.Println(forwardCheckout(ctx, rt, checkoutSession{ID: "cs_6002", Metadata: map[string]string{"svc_customer_key": "user_6001"}}))
	// Output:
	// recorded: answer 200
	// already recorded: answer 200
	// skipped: nothing paid (trial or full discount)
}

// A brand's endpoint for reftrack's webhooks: the body read with a size limit, the delivery verified, and
// each event processed once however often it is delivered.
func ExampleVerifyWebhook() {
	secret := webhookSecret // in production os.Getenv("REFTRACK_WEBHOOK_SECRET"), the endpoint's whsec_… secret
	var (
		mu        sync.Mutex
		processed = map[string]bool{} // in production a table keyed by the webhook-id
	)
	receive := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		event, err := sdk.VerifyWebhook(secret, r.Header, body)
		switch {
		case errors.Is(err, sdk.ErrWebhookSecret):
			http.Error(w, "misconfigured", http.StatusInternalServerError) // ours to fix; the delivery is retried
			return
		case err != nil:
			fmt.Println("refused:", err) // log it; the sender learns no more than 400
			http.Error(w, "invalid webhook", http.StatusBadRequest)
			return
		}
		// Delivery is at least once: record the id with the work (in one transaction), and acknowledge an id
		// already recorded without doing the work again.
		mu.Lock()
		defer mu.Unlock()
		if processed[event.ID] {
			fmt.Println("already processed", event.ID)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		fmt.Println("processing", event.Type, string(event.Data))
		processed[event.ID] = true
		w.WriteHeader(http.StatusNoContent)
	})

	// reftrack delivers an event, then the same event again (say the first answer was lost); then a
	// delivery signed with another secret arrives.
	body := `{"type": "commission.created", "timestamp": "2025-06-15T15:06:40Z", "data": {"id": 42}}`
	for _, req := range []*http.Request{
		webhookDelivery(secret, "msg_2ZxGgk3nTZ7C8sPqW9aL", body),
		webhookDelivery(secret, "msg_2ZxGgk3nTZ7C8sPqW9aL", body),
		webhookDelivery("whsec_"+base64.StdEncoding.EncodeToString(make([]byte, 32)), "msg_forged", body),
	} {
		rec := httptest.NewRecorder()
		receive(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// processing commission.created {"id": 42}
	// 204
	// already processed msg_2ZxGgk3nTZ7C8sPqW9aL
	// 204
	// refused: reftrack: no webhook signature matches
	// 400
}

// webhookSecret is an endpoint's signing secret: whsec_ and the base64 of 32 random bytes.
const webhookSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

// webhookDelivery stands for reftrack delivering body now, signed as the Standard Webhooks specification
// says: v1 and the base64 of the HMAC-SHA256 of "id.timestamp.body", keyed with the secret's bytes.
func webhookDelivery(secret, id, body string) *http.Request {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		panic(err)
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + body))
	req := httptest.NewRequest(http.MethodPost, "/webhooks/reftrack", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return req
}
