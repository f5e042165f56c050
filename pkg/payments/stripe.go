package payments

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/sales"
)

// Outcomes of one event, as the webhook answers them.
const (
	OutcomeRecorded     = "recorded"     // a sale (and its commission) was recorded
	OutcomeSettled      = "settled"      // a lead was settled; no sale (nothing was paid)
	OutcomeReversed     = "reversed"     // a sale's commission was reversed (refund or dispute)
	OutcomeDuplicate    = "duplicate"    // already processed: nothing changed
	OutcomeIgnored      = "ignored"      // an event or payment that records nothing
	OutcomeUnattributed = "unattributed" // a payment no partner can be credited with
)

// Metadata keys a brand sets on checkout sessions and subscriptions.
const (
	MetaClickID     = "svc_click_id"
	MetaCustomerKey = "svc_customer_key"
	MetaProgramID   = "program_id"
)

// Outcome is what one event did. Every outcome is an answer the processor should not retry; errors
// (returned separately) are the ones it should.
type Outcome struct {
	Outcome string
	Reason  string
	SaleID  *int64
	// Test is set for events of the processor's test mode (livemode false).
	Test bool
}

// SignatureError is a delivery whose Stripe-Signature does not verify: nothing is recorded.
type SignatureError struct{ Err error }

func (e *SignatureError) Error() string { return "invalid Stripe-Signature: " + e.Err.Error() }
func (e *SignatureError) Unwrap() error { return e.Err }

// EventError is a verified delivery that is not a Stripe event.
type EventError struct{ Reason string }

func (e *EventError) Error() string { return "invalid Stripe event: " + e.Reason }

// Stripe processes the events of one program's Stripe webhook endpoint.
type Stripe struct {
	DB  *sqlx.DB
	Log *slog.Logger
	// Tolerance is how old a signature's timestamp may be (default stripe-go's five minutes).
	Tolerance time.Duration
	// Now is the clock: a payment's time when its event carries none.
	Now func() time.Time
}

// ReasonSuspended is the reason of a verified event withheld because the program's owner account is
// suspended.
const ReasonSuspended = "account suspended: event verified and logged, not applied"

// Withhold verifies one delivery for a program whose owner account is suspended and logs it without
// applying or storing it: the answer is a 200 (ignored) so that the processor keeps the endpoint, and
// nothing in the database changes (a resend after the suspension is lifted applies the event).
func (s *Stripe) Withhold(ctx context.Context, programID int64, payload []byte, signature string) (Outcome, error) {
	ev, err := s.verify(ctx, programID, payload, signature)
	if err != nil {
		return Outcome{}, err
	}
	s.Log.WarnContext(ctx, "stripe event not applied: account suspended", "program_id", programID,
		"event_id", ev.ID, "type", ev.Type, "livemode", ev.Livemode)
	return Outcome{Outcome: OutcomeIgnored, Reason: ReasonSuspended, Test: !ev.Livemode}, nil
}

// Handle verifies one delivery with the program's webhook secret and processes it once.
func (s *Stripe) Handle(ctx context.Context, programID int64, payload []byte, signature string) (Outcome, error) {
	ev, err := s.verify(ctx, programID, payload, signature)
	if err != nil {
		return Outcome{}, err
	}
	if ev.Livemode && paymentEvents[ev.Type] {
		if err := markChargesEnabled(ctx, s.DB, programID, ProviderStripe); err != nil {
			return Outcome{}, fmt.Errorf("mark charges enabled: %w", err)
		}
	}
	return s.process(ctx, programID, ev)
}

// paymentEvents are the event types that report a payment: a live one proves the program's charges reach
// us, whether or not it can be attributed.
var paymentEvents = map[string]bool{"checkout.session.completed": true, "invoice.payment_succeeded": true, "invoice.paid": true}

// verify checks a delivery's signature with the program's webhook secret and reads its event.
func (s *Stripe) verify(ctx context.Context, programID int64, payload []byte, signature string) (stripeEvent, error) {
	conn, err := Get(ctx, s.DB, programID, ProviderStripe)
	if err != nil {
		return stripeEvent{}, err
	}
	tolerance := s.Tolerance
	if tolerance == 0 {
		tolerance = webhook.DefaultTolerance
	}
	// Only the signature is checked here: events of every API version are read below, so stripe-go's
	// API-version check (ConstructEvent) must not reject them.
	if err := webhook.ValidatePayloadWithTolerance(payload, signature, conn.WebhookSecret, tolerance); err != nil {
		return stripeEvent{}, &SignatureError{Err: err}
	}
	var ev stripeEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return stripeEvent{}, &EventError{Reason: err.Error()}
	}
	if ev.ID == "" || ev.Type == "" {
		return stripeEvent{}, &EventError{Reason: "id and type are required"}
	}
	if err := checkID("id", ev.ID); err != nil {
		return stripeEvent{}, err
	}
	return ev, nil
}

// process applies a verified event once.
func (s *Stripe) process(ctx context.Context, programID int64, ev stripeEvent) (Outcome, error) {

	var prior struct {
		Outcome string        `db:"outcome"`
		SaleID  sql.NullInt64 `db:"sale_id"`
	}
	err := sqlx.GetContext(ctx, s.DB, &prior, `SELECT outcome, sale_id FROM processor_events
		WHERE provider = $1 AND program_id = $2 AND event_id = $3`, ProviderStripe, programID, ev.ID)
	switch {
	case err == nil:
		out := Outcome{Outcome: OutcomeDuplicate, Reason: "event already processed (" + prior.Outcome + ")"}
		if prior.SaleID.Valid {
			out.SaleID = &prior.SaleID.Int64
		}
		return out, nil
	case !errors.Is(err, sql.ErrNoRows):
		return Outcome{}, err
	}

	h := handling{s: s, programID: programID, ev: ev}
	out, err := h.dispatch(ctx)
	out.Test = !ev.Livemode
	if err != nil {
		// Nothing is stored for the event: the processor retries and the retry processes it again
		// (sales and refunds are idempotent on their own keys). %v, not %w: what the sale or lead code
		// refused here is this delivery's failure (a 500, so that the processor retries), not the
		// processor's mistake.
		var bad *EventError
		if errors.As(err, &bad) {
			return Outcome{}, err
		}
		return Outcome{}, fmt.Errorf("process %s %s: %v", ev.Type, ev.ID, err)
	}
	if _, err := s.DB.ExecContext(ctx, `INSERT INTO processor_events (provider, event_id, program_id, event_type,
		livemode, outcome, reason, sale_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (provider, program_id, event_id) DO NOTHING`,
		ProviderStripe, ev.ID, programID, ev.Type, ev.Livemode, out.Outcome, nullable(out.Reason), out.SaleID); err != nil {
		return Outcome{}, fmt.Errorf("store processed event: %w", err)
	}
	s.Log.InfoContext(ctx, "stripe event", "program_id", programID, "event_id", ev.ID, "type", ev.Type,
		"outcome", out.Outcome, "reason", out.Reason)
	return out, nil
}

// handling is one event being processed.
type handling struct {
	s         *Stripe
	programID int64
	ev        stripeEvent
}

func (h handling) dispatch(ctx context.Context) (Outcome, error) {
	switch h.ev.Type {
	case "checkout.session.completed":
		var cs checkoutSession
		if err := json.Unmarshal(h.ev.Data.Object, &cs); err != nil {
			return Outcome{}, &EventError{Reason: "data.object: " + err.Error()}
		}
		return h.checkout(ctx, cs)
	case "invoice.payment_succeeded", "invoice.paid":
		var in invoice
		if err := json.Unmarshal(h.ev.Data.Object, &in); err != nil {
			return Outcome{}, &EventError{Reason: "data.object: " + err.Error()}
		}
		return h.invoice(ctx, in)
	case "charge.refunded":
		var ch charge
		if err := json.Unmarshal(h.ev.Data.Object, &ch); err != nil {
			return Outcome{}, &EventError{Reason: "data.object: " + err.Error()}
		}
		total := ch.AmountRefunded
		return h.reverse(ctx, []string{ch.PaymentIntent.ID, ch.ID}, ch.Invoice.ID, sales.RefundInput{
			Reason: sales.ReasonRefund, RefundReason: "Stripe charge " + ch.ID + " refunded",
			RefundedTotalCents: &total, ProcessorRefundID: h.ev.ID,
		})
	case "charge.dispute.created":
		var d dispute
		if err := json.Unmarshal(h.ev.Data.Object, &d); err != nil {
			return Outcome{}, &EventError{Reason: "data.object: " + err.Error()}
		}
		if err := checkID("data.object.id", d.ID); err != nil {
			return Outcome{}, err
		}
		in := sales.RefundInput{Reason: sales.ReasonChargeback, RefundReason: strings.TrimSpace("Stripe dispute " + d.ID + " " + d.Reason),
			ProcessorRefundID: d.ID}
		if d.Amount > 0 {
			in.AmountCents = &d.Amount
		}
		return h.reverse(ctx, []string{d.PaymentIntent.ID, d.Charge.ID}, "", in)
	}
	return Outcome{Outcome: OutcomeIgnored, Reason: "event type " + h.ev.Type + " is not handled"}, nil
}

// checkout handles a completed Checkout Session: a one-off payment is a sale; a subscription checkout
// is left entirely to its invoices (which carry the subscription's metadata for every renewal).
func (h handling) checkout(ctx context.Context, cs checkoutSession) (Outcome, error) {
	switch {
	case cs.Mode == "subscription":
		return Outcome{Outcome: OutcomeIgnored, Reason: "subscription checkout: its invoices record the sales"}, nil
	case cs.Mode != "payment":
		return Outcome{Outcome: OutcomeIgnored, Reason: "checkout mode " + cs.Mode + " takes no payment"}, nil
	case cs.PaymentStatus == "unpaid":
		return Outcome{Outcome: OutcomeIgnored, Reason: "checkout not paid yet"}, nil
	}
	email := cs.CustomerEmail
	if cs.CustomerDetails != nil && cs.CustomerDetails.Email != "" {
		email = cs.CustomerDetails.Email
	}
	return h.payment(ctx, payment{
		TransactionID: cs.ID, AmountCents: cs.AmountTotal, Currency: cs.Currency, Meta: cs.Metadata, Email: email,
		PaymentRef: cs.PaymentIntent.ID, OccurredAt: h.ev.created(h.s.Now), SaleType: "payment",
	})
}

// invoice handles a paid invoice: a subscription payment, attributed from the subscription's metadata
// wherever the event's API version puts it. Both invoice events of one invoice record one sale.
func (h handling) invoice(ctx context.Context, in invoice) (Outcome, error) {
	p := payment{
		TransactionID: in.ID, AmountCents: in.AmountPaid, Currency: in.Currency, Email: in.CustomerEmail,
		OccurredAt: h.ev.created(h.s.Now), SaleType: "payment", EventName: h.ev.Type,
	}
	if in.StatusTransitions.PaidAt != nil && *in.StatusTransitions.PaidAt > 0 {
		p.OccurredAt = time.Unix(*in.StatusTransitions.PaidAt, 0)
	}
	// The subscription: parent.subscription_details (2025-03-31.basil and later), else subscription and
	// subscription_details (earlier versions), else the subscription line items' metadata.
	metas := []map[string]string{}
	if sd := in.Parent.SubscriptionDetails; sd != nil {
		p.SubscriptionID = sd.Subscription.ID
		metas = append(metas, sd.Metadata)
	}
	if p.SubscriptionID == "" {
		p.SubscriptionID = in.Subscription.ID
	}
	if in.SubscriptionDetails != nil {
		metas = append(metas, in.SubscriptionDetails.Metadata)
	}
	for _, l := range in.Lines.Data {
		metas = append(metas, l.Metadata)
		if p.SubscriptionInterval == "" {
			switch {
			case l.Plan != nil && l.Plan.Interval != "":
				p.SubscriptionInterval = l.Plan.Interval
			case l.Price != nil && l.Price.Recurring != nil:
				p.SubscriptionInterval = l.Price.Recurring.Interval
			}
		}
	}
	metas = append(metas, in.Metadata)
	for _, m := range metas {
		if m[MetaClickID] != "" || m[MetaCustomerKey] != "" {
			p.Meta = m
			break
		}
	}
	if p.SubscriptionID != "" {
		p.SaleType = "subscription"
		p.IsRecurring = in.BillingReason == "subscription_cycle"
	}
	// The payment: invoice.payment_intent / invoice.charge (earlier versions), else invoice.payments.
	p.PaymentRef = in.PaymentIntent.ID
	if p.PaymentRef == "" && in.Payments != nil {
		for _, ip := range in.Payments.Data {
			if p.PaymentRef = ip.Payment.PaymentIntent.ID; p.PaymentRef == "" {
				p.PaymentRef = ip.Payment.Charge.ID
			}
			if p.PaymentRef != "" {
				break
			}
		}
	}
	if p.PaymentRef == "" {
		p.PaymentRef = in.Charge.ID
	}
	return h.payment(ctx, p)
}

// payment is a paid checkout or invoice, read from the event.
type payment struct {
	TransactionID        string
	AmountCents          int64
	Currency             string
	Meta                 map[string]string
	Email                string
	PaymentRef           string
	OccurredAt           time.Time
	SaleType             string
	IsRecurring          bool
	SubscriptionID       string
	SubscriptionInterval string
	EventName            string
}

// maxIDLength is the longest id of Stripe's that is stored (Stripe's own are a few dozen characters):
// ids are found through indexes, whose entries have a size limit a far longer one could pass.
const maxIDLength = 255

// checkID refuses an event whose id field is longer than maxIDLength.
func checkID(field, id string) error {
	if utf8.RuneCountInString(id) > maxIDLength {
		return &EventError{Reason: fmt.Sprintf("%s is longer than %d characters", field, maxIDLength)}
	}
	return nil
}

// checkPayment refuses a payment the database could not store: without an id, with an id too long for
// its index, or at a time before 1970 or more than a day ahead (no payment happened then, and the
// database's timestamps do not reach every time an int64 of seconds can name).
func (h handling) checkPayment(p payment) error {
	if p.TransactionID == "" {
		return &EventError{Reason: "data.object.id is required"}
	}
	if err := checkID("data.object.id", p.TransactionID); err != nil {
		return err
	}
	if err := checkID("the payment id (payment_intent or charge)", p.PaymentRef); err != nil {
		return err
	}
	if p.OccurredAt.Before(time.Unix(0, 0)) || p.OccurredAt.After(h.s.Now().Add(24*time.Hour)) {
		return &EventError{Reason: "the payment's time (created, or status_transitions.paid_at) is not plausible"}
	}
	return nil
}

// payment settles the customer's lead and records the sale, as the lead and sale endpoints do.
func (h handling) payment(ctx context.Context, p payment) (Outcome, error) {
	if err := h.checkPayment(p); err != nil {
		return Outcome{}, err
	}
	clickID, customerKey := p.Meta[MetaClickID], p.Meta[MetaCustomerKey]
	if clickID == "" && customerKey == "" {
		return Outcome{Outcome: OutcomeUnattributed, Reason: "no " + MetaClickID + " or " + MetaCustomerKey + " in the metadata"}, nil
	}
	if attribution.CheckKey(customerKey) != nil {
		return Outcome{Outcome: OutcomeUnattributed, Reason: fmt.Sprintf("%s is longer than %d characters", MetaCustomerKey, attribution.MaxKeyLength)}, nil
	}
	if pid := strings.TrimSpace(p.Meta[MetaProgramID]); pid != "" && pid != strconv.FormatInt(h.programID, 10) {
		return Outcome{Outcome: OutcomeUnattributed, Reason: "metadata program_id " + pid + " is another program"}, nil
	}
	test := !h.ev.Livemode // test-card payments never pay a partner
	settled, err := h.settleLead(ctx, clickID, customerKey, p.Email, test)
	if err != nil {
		return Outcome{}, err
	}
	currency := strings.ToUpper(p.Currency)
	switch {
	case p.AmountCents <= 0 && settled:
		return Outcome{Outcome: OutcomeSettled, Reason: "nothing paid: lead settled, no sale"}, nil
	case p.AmountCents <= 0:
		return Outcome{Outcome: OutcomeIgnored, Reason: "nothing paid"}, nil
	}
	livemode := h.ev.Livemode
	res, err := sales.Record(ctx, h.s.DB, h.s.Log, h.s.Now, sales.Input{
		ProgramID: h.programID, TransactionID: p.TransactionID, AmountCents: p.AmountCents, Currency: currency,
		CustomerKey: customerKey, ClickID: clickID, OccurredAt: p.OccurredAt, Provider: ProviderStripe,
		ProviderPaymentID: p.PaymentRef, Livemode: &livemode, SaleType: p.SaleType, IsRecurring: p.IsRecurring,
		EventName: p.EventName, SubscriptionID: p.SubscriptionID, SubscriptionInterval: p.SubscriptionInterval,
		Test: test, Source: sales.SourceWebhook,
	})
	var dup *sales.DuplicateError
	var unlisted *sales.CurrencyError
	switch {
	case errors.As(err, &unlisted): // not one of the program's currencies
		return Outcome{Outcome: OutcomeIgnored, Reason: unlisted.Error()}, nil
	case errors.As(err, &dup): // within this program: another program's sales are never seen
		return Outcome{Outcome: OutcomeDuplicate, Reason: "sale already recorded for " + p.TransactionID, SaleID: &dup.SaleID}, nil
	case errors.Is(err, sales.ErrCustomerNotFound):
		return Outcome{Outcome: OutcomeUnattributed, Reason: "no customer of this program matches the metadata"}, nil
	case errors.Is(err, sales.ErrOtherProgram):
		return Outcome{Outcome: OutcomeUnattributed, Reason: "the click belongs to another program"}, nil
	case errors.Is(err, sales.ErrNoPartnerProgram), errors.Is(err, sales.ErrNoPartner):
		return Outcome{Outcome: OutcomeUnattributed, Reason: "no partner is attributed to this customer"}, nil
	case err != nil:
		return Outcome{}, err
	case res.Window.Expired:
		return Outcome{Outcome: OutcomeUnattributed, Reason: fmt.Sprintf("attribution window expired: the click is %d days old, the window %d days",
			res.Window.ClickAgeDays, res.Window.WindowDays)}, nil
	}
	return Outcome{Outcome: OutcomeRecorded, SaleID: &res.SaleID}, nil
}

// settleLead reports the customer's lead through the lead endpoint's own path (server mode), which
// settles a provisional lead. A customer already at lead or later, or none, is no error here: the sale
// decides the outcome.
func (h handling) settleLead(ctx context.Context, clickID, customerKey, email string, test bool) (bool, error) {
	res, err := leads.Track(ctx, h.s.DB, h.s.Log, leads.Input{
		ProgramID: h.programID, ServerMode: true, ClickID: clickID, CustomerKey: customerKey, Email: email,
		Test: test, Source: leads.SourceWebhook,
	})
	var status *leads.StatusError
	switch {
	case err == nil:
		return !res.Provisional && res.LeadID != nil, nil
	case errors.As(err, &status), errors.Is(err, leads.ErrCustomerNotFound), errors.Is(err, leads.ErrOtherProgram):
		return false, nil
	}
	return false, err
}

// reverse refunds the program's sale paid by one of refs (payment intent or charge ids) or recorded
// under invoiceID.
func (h handling) reverse(ctx context.Context, refs []string, invoiceID string, in sales.RefundInput) (Outcome, error) {
	var txn string
	err := sqlx.GetContext(ctx, h.s.DB, &txn, `SELECT processor_event_id FROM sales
		WHERE program_id = $1 AND (provider_payment_id = ANY($2) OR processor_event_id = $3)
		ORDER BY id LIMIT 1`, h.programID, nonEmpty(refs), invoiceID)
	if errors.Is(err, sql.ErrNoRows) {
		return Outcome{Outcome: OutcomeIgnored, Reason: "no sale of this program for payment " + strings.Join(nonEmpty(refs), ", ")}, nil
	}
	if err != nil {
		return Outcome{}, err
	}
	in.ProgramID, in.TransactionID, in.Source = h.programID, txn, "webhook"
	res, err := sales.Refund(ctx, h.s.DB, h.s.Log, h.s.Now, in)
	var tooLarge *sales.RefundTooLargeError
	if errors.As(err, &tooLarge) {
		in.AmountCents = nil // a dispute larger than what is left reverses what is left
		res, err = sales.Refund(ctx, h.s.DB, h.s.Log, h.s.Now, in)
	}
	if err != nil {
		return Outcome{}, err
	}
	if res.Status == sales.RefundSkipped {
		return Outcome{Outcome: OutcomeDuplicate, Reason: "already refunded", SaleID: &res.SaleID}, nil
	}
	return Outcome{Outcome: OutcomeReversed, Reason: res.Status, SaleID: &res.SaleID}, nil
}

func nonEmpty(ss []string) pq.StringArray {
	var out pq.StringArray
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
