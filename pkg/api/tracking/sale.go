package tracking

import (
	"context"
	"fmt"
	"strings"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/sales"
)

// The refusals of a sale's members, in the order they are read (made once: the sale is a hot path).
var (
	errTransactionID        = apierr.Invalid("transaction_id is required and must be a string")
	errAmount               = apierr.Invalid("amount_cents is required and must be a positive integer")
	errAmountAtMost         = apierr.Invalid(fmt.Sprintf("amount_cents must be at most %d", sales.MaxAmountCents))
	errOccurredAt           = apierr.Invalid("occurred_at must be an ISO 8601 time within the last 30 days")
	errProvider             = apierr.Invalid("provider must be one of: " + strings.Join(sales.Providers, ", "))
	errProviderPaymentID    = apierr.Invalid("provider_payment_id must be a string of 1 to 255 characters")
	errLivemode             = apierr.Invalid("livemode must be a boolean")
	errSaleType             = apierr.Invalid("sale_type must be a string of at most 255 characters")
	errEventName            = apierr.Invalid("event_name must be a string of at most 255 characters")
	errSubscriptionID       = apierr.Invalid("subscription_id must be a string of at most 255 characters")
	errSubscriptionInterval = apierr.Invalid("subscription_interval must be a string of at most 255 characters")
	errIsRecurring          = apierr.Invalid("is_recurring must be a boolean")
)

var (
	isProvider = jsonbody.OneOf(sales.Providers...)
	upTo255    = jsonbody.MaxBytes(255)
	oneTo255   = jsonbody.Runes(1, 255)
)

// TrackSale records a sale and its commission.
func (h *Tracking) TrackSale(ctx context.Context, req gen.TrackSaleRequestObject) (gen.TrackSaleResponseObject, error) {
	key, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	in, err := h.saleInput(req.Body)
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
		TransactionId: res.TransactionID, AmountCents: in.AmountCents, Currency: res.Currency, IsTest: in.Test,
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

// saleInput reads the body in the order the interface lists its rules.
func (h *Tracking) saleInput(b *gen.SaleRequest) (sales.Input, error) {
	now := h.Now()
	var r jsonbody.Reader
	test, _ := additionalData(&r, b.AdditionalData)
	in := sales.Input{Test: test, OccurredAt: now}            // no currency: the program's default
	r.Check(test || b.TransactionId.Sent(), errTransactionID) // a test sale may leave it out: sales.Track makes one up
	in.TransactionID, _ = r.String(b.TransactionId, errTransactionID, jsonbody.NotBlank, upTo255)
	r.Check(b.AmountCents.Sent(), errAmount)
	in.AmountCents, _ = r.Int(b.AmountCents, errAmount, jsonbody.Positive)
	r.Check(in.AmountCents <= sales.MaxAmountCents, errAmountAtMost)
	if at, ok := r.String(b.OccurredAt, errOccurredAt, recentTime(now)); ok {
		in.OccurredAt, _ = time.Parse(time.RFC3339, at)
	}
	in.Provider, _ = r.String(b.Provider, errProvider, isProvider)
	in.ProviderPaymentID, _ = r.String(b.ProviderPaymentId, errProviderPaymentID, oneTo255)
	in.Livemode = jsonbody.Ptr(r.Bool(b.Livemode, errLivemode))
	if b.Currency.Sent() {
		// Any ISO 4217 code passes here; the program's own list is the sale's rules' (sales.CurrencyError).
		code, _ := r.String(b.Currency, apierr.New(apierr.KindUnsupportedCurrency, "currency "+b.Currency.Shown()+" is not supported"),
			func(s string) bool { return commission.ISOCurrency(strings.ToUpper(s)) })
		in.Currency, in.CurrencyAsSent = strings.ToUpper(code), b.Currency.Shown()
	}
	// The extra fields the original clients send.
	in.SaleType, _ = r.String(b.SaleType, errSaleType, upTo255)
	in.EventName, _ = r.String(b.EventName, errEventName, upTo255)
	in.SubscriptionID, _ = r.String(b.SubscriptionId, errSubscriptionID, upTo255)
	in.SubscriptionInterval, _ = r.String(b.SubscriptionInterval, errSubscriptionInterval, upTo255)
	in.IsRecurring, _ = r.Bool(b.IsRecurring, errIsRecurring)
	in.CustomerKey, _ = r.String(b.CustomerKey, errCustomerKeyNotString)
	in.ClickID, _ = r.String(b.ClickId, errClickIDNotString)
	return in, r.Err()
}

// recentTime holds for an RFC 3339 time a sale may have occurred at: at most sales.MaxAge before now and
// sales.MaxFuture after it.
func recentTime(now time.Time) func(string) bool {
	return func(s string) bool {
		t, err := time.Parse(time.RFC3339, s)
		return err == nil && !t.Before(now.Add(-sales.MaxAge)) && !t.After(now.Add(sales.MaxFuture))
	}
}
