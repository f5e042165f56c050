package sdk

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/reftrack/reftrack/sdk/client"
)

// LeadInput is a sign-up. Send CustomerExternalID, ClickID or both.
type LeadInput struct {
	// CustomerExternalID is the brand's stable id for the customer (`customer_key`); send the same value
	// with the customer's sales.
	CustomerExternalID string
	// ClickID is the `svc_click_id` cookie, forwarded by the brand's front end with the sign-up.
	ClickID string
	// Email improves attribution.
	Email string
	// AdditionalData is sent as `additional_data` (for example {"test_mode": true}).
	AdditionalData map[string]any
	// TestMode records a test lead (sets `additional_data.test_mode`).
	TestMode bool
}

// SaleInput is a payment. Send CustomerExternalID, ClickID or both.
type SaleInput struct {
	CustomerExternalID string
	ClickID            string
	// AmountCents is the amount in the currency's smallest unit; a positive integer.
	AmountCents int64
	// Currency is an ISO 4217 code the program lists (any case; USD, EUR and VND unless it lists others);
	// empty is the program's default currency.
	Currency string
	// InvoiceID is the idempotency key (`transaction_id`), unique within the program: the processor's
	// invoice, payment or checkout-session id. Optional with TestMode, where the SDK makes one up
	// (test_txn_<unix nanoseconds>) so that a retried test sale keeps it.
	InvoiceID string
	// OccurredAt is when the payment happened (at most 30 days ago); zero means now.
	OccurredAt time.Time
	// TestMode records a test sale, never paid to a partner.
	TestMode bool
	// Provider is the payment processor (for example "stripe"); ProviderPaymentID its payment id.
	Provider          string
	ProviderPaymentID string
	// Livemode is the processor's live/test flag, when known.
	Livemode *bool
	// SaleType (default "payment"), IsRecurring, SubscriptionID, SubscriptionInterval and EventName
	// describe subscription payments.
	SaleType             string
	IsRecurring          bool
	SubscriptionID       string
	SubscriptionInterval string
	EventName            string
}

// Refund reasons.
const (
	ReasonRefund     = "refund"
	ReasonChargeback = "chargeback"
)

// RefundInput reverses a recorded sale's commission.
type RefundInput struct {
	// InvoiceID is the sale's InvoiceID (`transaction_id`).
	InvoiceID string
	// Reason is ReasonRefund (default) or ReasonChargeback.
	Reason string
	// RefundReason is free text.
	RefundReason string
	// RefundAmountCents refunds part of the sale; zero refunds all that is left. A partial refund is not
	// resent after a network failure (it may have been applied); check the sale before sending it again.
	RefundAmountCents int64
}

// TrackLead reports a sign-up.
func (c *Client) TrackLead(ctx context.Context, in LeadInput) Result {
	if in.CustomerExternalID == "" && in.ClickID == "" {
		return localError("click_id or customer_key is required")
	}
	body := client.LeadRequest{
		CustomerKey: optional(in.CustomerExternalID),
		ClickId:     optional(in.ClickID),
		Email:       optional(in.Email),
	}
	ad, err := additionalData(in.AdditionalData, in.TestMode)
	if err != nil {
		return localError(err.Error())
	}
	body.AdditionalData = ad
	r := c.do(ctx, "lead", true, func(ctx context.Context) (*http.Response, error) {
		return c.gen.TrackLead(ctx, body)
	})
	if r.Status == http.StatusOK {
		var lead Lead
		if err := json.Unmarshal(r.Data, &lead); err == nil {
			r.Lead = &lead
		}
	}
	return r
}

// TrackSale reports a payment. A 409 (Result.AlreadyRecorded) means a sale with this InvoiceID was
// recorded before: count it as recorded and do not resend.
func (c *Client) TrackSale(ctx context.Context, in SaleInput) Result {
	switch {
	case in.AmountCents <= 0:
		return localError("amount_cents is required and must be a positive integer")
	case in.CustomerExternalID == "" && in.ClickID == "":
		return localError("Customer not found. Provide customer_key or click_id.")
	case strings.TrimSpace(in.InvoiceID) == "" && !in.TestMode:
		return localError("transaction_id is required and must be a string")
	}
	txn := in.InvoiceID
	if txn == "" {
		// Made here rather than by the service so that a retried test sale keeps its id.
		txn = "test_txn_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	}
	body := client.SaleRequest{
		TransactionId:        &txn,
		AmountCents:          in.AmountCents,
		CustomerKey:          optional(in.CustomerExternalID),
		ClickId:              optional(in.ClickID),
		ProviderPaymentId:    optional(in.ProviderPaymentID),
		Livemode:             in.Livemode,
		SaleType:             optional(in.SaleType),
		SubscriptionId:       optional(in.SubscriptionID),
		SubscriptionInterval: optional(in.SubscriptionInterval),
		EventName:            optional(in.EventName),
	}
	if in.Currency != "" {
		cur := strings.ToUpper(in.Currency)
		body.Currency = &cur
	}
	if in.Provider != "" {
		p := client.SaleRequestProvider(in.Provider)
		body.Provider = &p
	}
	if !in.OccurredAt.IsZero() {
		body.OccurredAt = &in.OccurredAt
	}
	if in.IsRecurring {
		body.IsRecurring = &in.IsRecurring
	}
	if in.TestMode {
		body.AdditionalData = &client.AdditionalData{TestMode: &in.TestMode}
	}
	r := c.do(ctx, "sale", true, func(ctx context.Context) (*http.Response, error) {
		return c.gen.TrackSale(ctx, body)
	})
	if r.Status == http.StatusOK {
		var probe struct {
			SaleID *int64 `json:"sale_id"`
		}
		if json.Unmarshal(r.Data, &probe) == nil && probe.SaleID == nil {
			var na SaleNotAttributed
			if json.Unmarshal(r.Data, &na) == nil {
				r.SaleNotAttributed = &na
			}
		} else {
			var sale Sale
			if json.Unmarshal(r.Data, &sale) == nil {
				r.Sale = &sale
			}
		}
	}
	return r
}

// TrackRefund reverses a sale's commission, wholly or in part.
func (c *Client) TrackRefund(ctx context.Context, in RefundInput) Result {
	switch {
	case strings.TrimSpace(in.InvoiceID) == "":
		return localError("transaction_id is required")
	case in.Reason != "" && in.Reason != ReasonRefund && in.Reason != ReasonChargeback:
		return localError("reason must be refund or chargeback")
	case in.RefundAmountCents < 0:
		return localError("refund_amount_cents must be a positive integer")
	}
	body := client.RefundRequest{TransactionId: in.InvoiceID, RefundReason: optional(in.RefundReason)}
	if in.Reason != "" {
		reason := client.RefundRequestReason(in.Reason)
		body.Reason = &reason
	}
	if in.RefundAmountCents > 0 {
		body.RefundAmountCents = &in.RefundAmountCents
	}
	r := c.do(ctx, "refund", in.RefundAmountCents == 0, func(ctx context.Context) (*http.Response, error) {
		return c.gen.TrackRefund(ctx, body)
	})
	if r.Status == http.StatusOK {
		var refund Refund
		if err := json.Unmarshal(r.Data, &refund); err == nil {
			r.Refund = &refund
		}
	}
	return r
}

// do sends a request until it succeeds or retryAfter says stop, and returns the last outcome.
func (c *Client) do(ctx context.Context, op string, retryNetwork bool, send func(context.Context) (*http.Response, error)) Result {
	for attempt := 1; ; attempt++ {
		r := c.attempt(ctx, send)
		r.Attempts = attempt
		c.noteRotation(r)
		wait, again := c.retryAfter(ctx, r, attempt, retryNetwork)
		if !again {
			return r
		}
		c.logger.DebugContext(ctx, "reftrack: retrying", "op", op, "attempt", attempt, "wait", wait, "error", r.Error.Error())
		if !sleep(ctx, wait) {
			return r
		}
	}
}

func (c *Client) attempt(ctx context.Context, send func(context.Context) (*http.Response, error)) Result {
	res, err := send(ctx)
	if err != nil {
		return networkError(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return networkError(err)
	}
	return decodeAnswer(res, body)
}

// noteRotation logs, once per Client, that the key is marked for rotation.
func (c *Client) noteRotation(r Result) {
	for _, w := range r.Warnings {
		c.warnOnce(string(w.Code)+"|"+w.RotateBy.String(), "reftrack: "+w.Message,
			"code", w.Code, "rotate_by", w.RotateBy, "hint", w.Hint, "docs_url", w.DocsUrl)
	}
	if rot := r.Rotation; rot != nil && len(r.Warnings) == 0 {
		c.warnOnce("sunset|"+rot.Sunset.String(), "reftrack: the API key is marked for rotation",
			"sunset", rot.Sunset, "docs_url", rot.DocsURL)
	}
	if r.Error != nil && r.Error.Code == "api_key_rotation_required" {
		c.warnOnce("retired", "reftrack: "+r.Error.Message, "hint", r.Error.Hint, "docs_url", r.Error.DocsURL)
	}
}

// additionalData builds `additional_data` from the caller's map and the TestMode flag.
func additionalData(m map[string]any, test bool) (*client.AdditionalData, error) {
	if len(m) == 0 && !test {
		return nil, nil
	}
	var ad client.AdditionalData
	if len(m) > 0 {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &ad); err != nil {
			return nil, err
		}
	}
	if test {
		ad.TestMode = &test
	}
	return &ad, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
