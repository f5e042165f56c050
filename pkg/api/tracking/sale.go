package tracking

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/sales"
)

var msgProviders = "provider must be one of: " + strings.Join(sales.Providers, ", ")

// TrackSale records a sale and its commission.
func (h *Tracking) TrackSale(ctx context.Context, req gen.TrackSaleRequestObject) (gen.TrackSaleResponseObject, error) {
	key, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	ad, err := body.AdditionalData()
	if err != nil {
		return nil, err
	}
	in, err := h.saleInput(body, ad.Test)
	if err != nil {
		return nil, err
	}
	in.ProgramID, in.Source = key.ProgramID, sales.SourceAPI
	res, err := h.Sales.Track(ctx, in, h.Now)
	if err != nil {
		return nil, err
	}
	out, err := saleResponse(in, res, wire.Warnings(ctx))
	if err != nil {
		return nil, err
	}
	if !res.Window.Expired {
		h.Metrics.Event("sale", in.Test)
	}
	return gen.TrackSale200JSONResponse{Body: out}, nil
}

// saleResponse is the answer to a sale: recorded, or outside the attribution window (nothing recorded).
func saleResponse(in sales.Input, res sales.Tracked, warnings *[]gen.Warning) (gen.SaleResponse, error) {
	var out gen.SaleResponse
	if res.Window.Expired {
		return out, out.FromSaleWindowExpired(gen.SaleWindowExpired{
			Success: true, Attributed: false, Reason: gen.AttributionWindowExpired,
			ClickAgeDays: res.Window.ClickAgeDays, WindowDays: res.Window.WindowDays,
			Message: fmt.Sprintf("Sale not attributed: the click is %d days old, outside the program's %d-day attribution window. Nothing was recorded.",
				res.Window.ClickAgeDays, res.Window.WindowDays),
			Data: saleTestData(in.Test, nil, in.ProgramID), Warnings: warnings,
		})
	}
	rec := gen.SaleRecorded{
		Success: true, Message: "Sale tracked successfully", SaleId: res.SaleID,
		TransactionId: res.TransactionID, AmountCents: in.AmountCents, Currency: in.Currency, IsTest: in.Test,
		Attribution: gen.Attribution{Status: gen.AttributionStatusAttributed, ClickId: res.Attribution.ClickID,
			PartnerId: res.Attribution.PartnerID, ProgramId: &res.Attribution.ProgramID},
		Data: saleTestData(in.Test, &res.SaleID, in.ProgramID), Warnings: warnings,
	}
	if c := res.Commission; c != nil {
		rec.CommissionId = &c.ID
		rec.Commission = &gen.SaleCommission{Id: c.ID, AmountCents: c.AmountCents, Currency: c.Currency,
			Status: gen.SaleCommissionStatus(c.Status), ClawbackCents: c.ClawbackCents}
	}
	return out, out.FromSaleRecorded(rec)
}

func saleTestData(test bool, saleID *int64, programID int64) *gen.TestModeData {
	if !test {
		return nil
	}
	return wire.TestData(saleID, programID)
}

// saleInput checks the body in the order the interface lists its rules.
func (h *Tracking) saleInput(body jsonbody.Object, test bool) (sales.Input, error) {
	now := h.Now()
	in := sales.Input{Test: test, Currency: "USD", OccurredAt: now}

	txn, present, ok := body.Str("transaction_id")
	switch {
	case !present && test:
		// sales.Track records it under a generated transaction id.
	case !ok || strings.TrimSpace(txn) == "" || len(txn) > 255:
		return in, apierr.Invalid("transaction_id is required and must be a string")
	}
	in.TransactionID = txn

	amount, _, ok := body.SaturatedInt("amount_cents")
	if !ok || amount <= 0 {
		return in, apierr.Invalid("amount_cents is required and must be a positive integer")
	}
	if amount > sales.MaxAmountCents {
		return in, apierr.Invalid(fmt.Sprintf("amount_cents must be at most %d", sales.MaxAmountCents))
	}
	in.AmountCents = amount

	if v, present, ok := body.Str("occurred_at"); present {
		t, err := time.Parse(time.RFC3339, v)
		if !ok || err != nil || t.Before(now.Add(-sales.MaxAge)) || t.After(now.Add(sales.MaxFuture)) {
			return in, apierr.Invalid("occurred_at must be an ISO 8601 time within the last 30 days")
		}
		in.OccurredAt = t
	}
	if v, present, ok := body.Str("provider"); present {
		if !ok || !slices.Contains(sales.Providers, v) {
			return in, apierr.Invalid(msgProviders)
		}
		in.Provider = v
	}
	if v, present, ok := body.Str("provider_payment_id"); present {
		if n := utf8.RuneCountInString(v); !ok || n < 1 || n > 255 {
			return in, apierr.Invalid("provider_payment_id must be a string of 1 to 255 characters")
		}
		in.ProviderPaymentID = v
	}
	if v, present, ok := body.Bool("livemode"); present {
		if !ok {
			return in, apierr.Invalid("livemode must be a boolean")
		}
		in.Livemode = &v
	}
	if raw, present := body["currency"]; present {
		v, _, ok := body.Str("currency")
		code := strings.ToUpper(v)
		if !ok || !commission.SupportedCurrency(code) {
			shown := v
			if !ok {
				shown = string(raw)
			}
			return in, apierr.New(apierr.KindUnsupportedCurrency, "currency "+shown+" is not supported")
		}
		in.Currency = code
	}
	// The extra fields the original clients send.
	for _, f := range []struct {
		name string
		dst  *string
	}{{"sale_type", &in.SaleType}, {"event_name", &in.EventName}, {"subscription_id", &in.SubscriptionID},
		{"subscription_interval", &in.SubscriptionInterval}} {
		if v, present, ok := body.Str(f.name); present {
			if !ok || len(v) > 255 {
				return in, apierr.Invalid(f.name + " must be a string of at most 255 characters")
			}
			*f.dst = v
		}
	}
	if v, present, ok := body.Bool("is_recurring"); present {
		if !ok {
			return in, apierr.Invalid("is_recurring must be a boolean")
		}
		in.IsRecurring = v
	}
	if err := body.CheckStrings("customer_key", "click_id"); err != nil {
		return in, err
	}
	in.CustomerKey = body.OptStr("customer_key")
	in.ClickID = body.OptStr("click_id")
	return in, nil
}
