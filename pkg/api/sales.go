package api

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/sales"
)

var (
	msgProviders = "provider must be one of: " + strings.Join(sales.Providers, ", ")
	// maxAmountCents keeps amounts far from integer overflow in any arithmetic on them.
	maxAmountCents int64 = 1e15
)

func invalidSale(msg string) *apierr.Error { return apierr.BadRequest(msg).WithCode("invalid_request") }
func noAttribution(msg string) *apierr.Error {
	return apierr.BadRequest(msg).WithCode("no_attribution")
}

// TrackSale records a sale and its commission.
func (s *Server) TrackSale(ctx context.Context, req gen.TrackSaleRequestObject) (gen.TrackSaleResponseObject, error) {
	key, err := s.requireKey(ctx, saleKeyMessages)
	if err != nil {
		return nil, err
	}
	body, err := parseBody(req.Body)
	if err != nil {
		return nil, err
	}
	ad := body.additionalData()
	in, err := s.saleInput(body, ad.test)
	if err != nil {
		return nil, err
	}
	in.ProgramID, in.Source = key.ProgramID, sales.SourceAPI

	var res sales.Result
	for attempt := 0; ; attempt++ {
		res, err = sales.Record(ctx, s.deps.DB, s.deps.Logger, in)
		var dup *sales.DuplicateError
		if errors.As(err, &dup) && ad.test && in.TransactionID != body.optStr("transaction_id") && attempt < 3 {
			in.TransactionID = testTransactionID(s.now()) // a generated id never collides: draw again
			continue
		}
		break
	}
	if err != nil {
		return nil, saleError(err, key.ProgramID)
	}
	warnings := wireWarnings(s.warnings(ctx))
	var out gen.SaleResponse
	if res.Window.Expired {
		err = out.FromSaleWindowExpired(gen.SaleWindowExpired{
			Success: true, Attributed: false, Reason: gen.AttributionWindowExpired,
			ClickAgeDays: res.Window.ClickAgeDays, WindowDays: res.Window.WindowDays,
			Message: fmt.Sprintf("Sale not attributed: the click is %d days old, outside the program's %d-day attribution window. Nothing was recorded.",
				res.Window.ClickAgeDays, res.Window.WindowDays),
			Data: saleTestData(ad.test, nil, in.ProgramID), Warnings: warnings,
		})
	} else {
		rec := gen.SaleRecorded{
			Success: true, Message: "Sale tracked successfully", SaleId: res.SaleID,
			TransactionId: in.TransactionID, AmountCents: in.AmountCents, Currency: in.Currency, IsTest: in.Test,
			Attribution: gen.Attribution{Status: gen.AttributionStatusAttributed, ClickId: res.Attribution.ClickID,
				PartnerId: res.Attribution.PartnerID, ProgramId: &res.Attribution.ProgramID},
			Data: saleTestData(ad.test, &res.SaleID, in.ProgramID), Warnings: warnings,
		}
		if c := res.Commission; c != nil {
			rec.CommissionId = &c.ID
			rec.Commission = &gen.SaleCommission{Id: c.ID, AmountCents: c.AmountCents, Currency: c.Currency,
				Status: gen.SaleCommissionStatus(c.Status)}
		}
		err = out.FromSaleRecorded(rec)
		s.metrics.Event("sale", in.Test)
	}
	if err != nil {
		return nil, err
	}
	return gen.TrackSale200JSONResponse{Body: out}, nil
}

func saleTestData(test bool, saleID *int64, programID int64) *gen.TestModeData {
	if !test {
		return nil
	}
	return &gen.TestModeData{EventId: saleID, ProgramId: &programID, TestMode: true}
}

func testTransactionID(now time.Time) string {
	return "test_txn_" + strconv.FormatInt(now.UnixNano(), 10)
}

// saleInput checks the body in the order the interface lists its rules.
func (s *Server) saleInput(body object, test bool) (sales.Input, error) {
	in := sales.Input{Test: test, Currency: "USD", OccurredAt: s.now()} // occurred_at, when given, replaces now

	txn, present, ok := body.str("transaction_id")
	switch {
	case !present && test:
		txn = testTransactionID(s.now())
	case !ok || strings.TrimSpace(txn) == "" || len(txn) > 255:
		return in, invalidSale("transaction_id is required and must be a string")
	}
	in.TransactionID = txn

	amount, _, ok := body.integer("amount_cents")
	if !ok || amount <= 0 || amount > maxAmountCents {
		return in, invalidSale("amount_cents is required and must be a positive integer")
	}
	in.AmountCents = amount

	if v, present, ok := body.str("occurred_at"); present {
		t, err := time.Parse(time.RFC3339, v)
		now := s.now()
		if !ok || err != nil || t.Before(now.Add(-sales.MaxAge)) || t.After(now.Add(sales.MaxFuture)) {
			return in, invalidSale("occurred_at must be an ISO 8601 time within the last 30 days")
		}
		in.OccurredAt = t
	}
	if v, present, ok := body.str("provider"); present {
		if !ok || !slices.Contains(sales.Providers, v) {
			return in, invalidSale(msgProviders)
		}
		in.Provider = v
	}
	if v, present, ok := body.str("provider_payment_id"); present {
		if n := utf8.RuneCountInString(v); !ok || n < 1 || n > 255 {
			return in, invalidSale("provider_payment_id must be a string of 1 to 255 characters")
		}
		in.ProviderPaymentID = v
	}
	if v, present, ok := body.boolean("livemode"); present {
		if !ok {
			return in, invalidSale("livemode must be a boolean")
		}
		in.Livemode = &v
	}
	if raw, present := body["currency"]; present {
		v, _, ok := body.str("currency")
		code := strings.ToUpper(v)
		if !ok || !commission.SupportedCurrency(code) {
			shown := v
			if !ok {
				shown = string(raw)
			}
			return in, apierr.Unprocessable("currency " + shown + " is not supported").WithCode("unsupported_currency")
		}
		in.Currency = code
	}
	// The extra fields the original clients send.
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sale_type", &in.SaleType}, {"event_name", &in.EventName}, {"subscription_id", &in.SubscriptionID},
		{"subscription_interval", &in.SubscriptionInterval}} {
		if v, present, ok := body.str(f.name); present {
			if !ok || len(v) > 255 {
				return in, invalidSale(f.name + " must be a string of at most 255 characters")
			}
			*f.dst = v
		}
	}
	if v, present, ok := body.boolean("is_recurring"); present {
		if !ok {
			return in, invalidSale("is_recurring must be a boolean")
		}
		in.IsRecurring = v
	}
	in.CustomerKey = body.optStr("customer_key")
	in.ClickID = body.optStr("click_id")
	return in, nil
}

func saleError(err error, programID int64) error {
	var dup *sales.DuplicateError
	switch {
	case errors.As(err, &dup):
		e := apierr.Conflict("Duplicate transaction_id. This sale has already been recorded.").WithCode("duplicate_transaction")
		if dup.ProgramID == programID { // never another brand's ids
			e.WithDetail("sale_id", dup.SaleID)
		}
		return e
	case errors.Is(err, sales.ErrCustomerNotFound):
		return noAttribution("Customer not found. Provide customer_key or click_id.")
	case errors.Is(err, sales.ErrOtherProgram):
		return noAttribution("No affiliate attribution found for this customer in this program")
	case errors.Is(err, sales.ErrNoPartnerProgram):
		return noAttribution("No partner-program relationship found for this customer")
	case errors.Is(err, sales.ErrNoPartner):
		return noAttribution("partnerId required to create commission")
	}
	var ce *sales.CommissionError
	if errors.As(err, &ce) {
		return apierr.Internal("Failed to create commission", err)
	}
	return err
}

// TrackRefund refunds a recorded sale of the key's program.
func (s *Server) TrackRefund(ctx context.Context, req gen.TrackRefundRequestObject) (gen.TrackRefundResponseObject, error) {
	key, err := s.requireKey(ctx, refundKeyMessages)
	if err != nil {
		return nil, err
	}
	body, err := parseBody(req.Body)
	if err != nil {
		return nil, err
	}
	in := sales.RefundInput{ProgramID: key.ProgramID, Source: sales.SourceAPI, Reason: sales.ReasonRefund}
	txn, _, ok := body.str("transaction_id")
	if !ok || strings.TrimSpace(txn) == "" {
		return nil, invalidSale("transaction_id is required")
	}
	in.TransactionID = txn
	if v, present, ok := body.str("reason"); present {
		if !ok || (v != sales.ReasonRefund && v != sales.ReasonChargeback) {
			return nil, invalidSale("reason must be refund or chargeback")
		}
		in.Reason = v
	}
	if v, present, ok := body.str("refund_reason"); present {
		if !ok || len(v) > 2000 {
			return nil, invalidSale("refund_reason must be a string of at most 2000 characters")
		}
		in.RefundReason = v
	}
	if v, present, ok := body.integer("refund_amount_cents"); present {
		if !ok || v <= 0 {
			return nil, invalidSale("refund_amount_cents must be a positive integer")
		}
		in.AmountCents = &v
	}
	res, err := sales.Refund(ctx, s.deps.DB, in)
	var tooLarge *sales.RefundTooLargeError
	switch {
	case errors.Is(err, sales.ErrSaleNotFound):
		return nil, apierr.NotFound("Sale not found for transaction_id").WithCode("not_found")
	case errors.As(err, &tooLarge):
		return nil, invalidSale(fmt.Sprintf("refund_amount_cents must be at most %d, the amount not yet refunded", tooLarge.Remaining))
	case err != nil:
		return nil, err
	}
	out := gen.RefundResponse{
		Success: true, Status: gen.RefundResponseStatus(res.Status), SaleId: res.SaleID, TransactionId: res.TransactionID,
		Reason: gen.RefundResponseReason(res.Reason), RefundedAmountCents: res.RefundedAmountCents,
		Message: refundMessage(res), Warnings: wireWarnings(s.warnings(ctx)),
	}
	if c := res.Commission; c != nil {
		out.CommissionId = &c.ID
		out.Commission = &gen.RefundCommission{Id: c.ID, AmountCents: c.AmountCents, ReversedAmountCents: c.ReversedAmountCents,
			Currency: c.Currency, Status: gen.RefundCommissionStatus(c.Status)}
	}
	if res.Status != sales.RefundSkipped {
		s.metrics.Event("refund", false)
	}
	return gen.TrackRefund200JSONResponse{Body: out}, nil
}

func refundMessage(r sales.RefundResult) string {
	switch r.Status {
	case sales.RefundSkipped:
		return "Sale already fully refunded; nothing changed."
	case sales.RefundNoCommission:
		return "Refund recorded; the sale paid no commission."
	case sales.RefundPartial:
		return "Partial refund recorded; the commission was reduced in proportion."
	}
	return "Refund recorded; the commission was reversed."
}
