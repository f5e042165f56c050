package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"os"

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
