package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/attribution"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/customers"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
	"github.com/reftrack/reftrack/pkg/portal"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/synthetic"
	outbound "github.com/reftrack/reftrack/pkg/webhooks"
)

// This file is the one place where errors become answers: what each kind of error answers (status and
// typed-envelope extras; its error.code is the kind's name, in both envelopes), and what each refusal of
// the domain packages says. The envelope comes from the route's policy (x-reftrack-envelope), and so does
// the wording of errors that many routes share (x-reftrack-errors wording).

// kindRule is how one kind of error is answered.
type kindRule struct {
	status int
	// withStatus writes error.status in the typed envelope; topLevel adds "success": false and "message"
	// beside it (the click route's 410 keeps the shape the original tracker reads).
	withStatus, topLevel bool
}

// kinds is every kind's answer. The spec's list of error codes (x-reftrack-error-codes) and docs/errors.md
// name each of these codes with its status; TestErrorCodesAreDocumented keeps the three in step.
var kinds = map[apierr.Kind]kindRule{
	apierr.KindInvalid:             {status: http.StatusBadRequest},
	apierr.KindNoAttribution:       {status: http.StatusBadRequest},
	apierr.KindUnauthorized:        {status: http.StatusUnauthorized},
	apierr.KindInvalidKey:          {status: http.StatusUnauthorized},
	apierr.KindKeyRotationRequired: {status: http.StatusUnauthorized},
	apierr.KindForbidden:           {status: http.StatusForbidden},
	apierr.KindAccountSuspended:    {status: http.StatusForbidden},
	apierr.KindNotFound:            {status: http.StatusNotFound},
	apierr.KindMethodNotAllowed:    {status: http.StatusMethodNotAllowed},
	apierr.KindConflict:            {status: http.StatusConflict},
	apierr.KindDuplicate:           {status: http.StatusConflict},
	apierr.KindGone:                {status: http.StatusGone},
	apierr.KindLinkDisabled:        {status: http.StatusGone, topLevel: true},
	apierr.KindPayloadTooLarge:     {status: http.StatusRequestEntityTooLarge},
	apierr.KindUnsupportedMedia:    {status: http.StatusUnsupportedMediaType},
	apierr.KindUnsupportedCurrency: {status: http.StatusUnprocessableEntity},
	apierr.KindRateLimited:         {status: http.StatusTooManyRequests, withStatus: true},
	apierr.KindInternal:            {status: http.StatusInternalServerError},
	apierr.KindServiceUnavailable:  {status: http.StatusServiceUnavailable},
}

// unavailableRetryAfter is the Retry-After of a 503: the database unreachable or too slow
// (docs/rules.md#bad-input-abuse-and-faults).
const unavailableRetryAfter = 5

// unavailable answers a database that is unreachable or too slow, whatever the handler made of it.
func unavailable(err error) *apierr.Error {
	return apierr.New(apierr.KindServiceUnavailable, "Service temporarily unavailable. Retry in 5 seconds.").
		WithRetryAfter(unavailableRetryAfter).WithCause(err)
}

// answer is what one refusal of the domain says.
type answer struct {
	match func(error) bool
	// wording is the route wording (x-reftrack-errors) this answer is for; "" answers on every route
	// that has no answer of its own.
	wording string
	build   func(ctx context.Context, w *errorWriter, err error) *apierr.Error
}

// is answers a sentinel error with a fixed message.
func is(target error, kind apierr.Kind, message string) answer {
	return answer{match: func(err error) bool { return errors.Is(err, target) },
		build: func(context.Context, *errorWriter, error) *apierr.Error { return apierr.New(kind, message) }}
}

// isBuilt answers a sentinel error with a message built from the request or the error.
func isBuilt(target error, build func(ctx context.Context, err error) *apierr.Error) answer {
	return answer{match: func(err error) bool { return errors.Is(err, target) },
		build: func(ctx context.Context, _ *errorWriter, err error) *apierr.Error { return build(ctx, err) }}
}

// as answers an error of type T.
func as[T error](build func(ctx context.Context, w *errorWriter, e T) *apierr.Error) answer {
	return answer{
		match: func(err error) bool { var t T; return errors.As(err, &t) },
		build: func(ctx context.Context, w *errorWriter, err error) *apierr.Error {
			var t T
			errors.As(err, &t)
			return build(ctx, w, t)
		},
	}
}

// AccountTokenHint is what an answer to an account login token sent as a program API key adds to the
// interface's message: details.hint in the platform envelope, hint in the typed one.
const AccountTokenHint = "This is an account login token (rtu_…), which the management routes and the CLI take; " +
	"this route takes the program's API key (rt_…), shown in the dashboard's Install view."

// accountTokenHinted adds AccountTokenHint to a's answer when the token sent was an account login token.
func accountTokenHinted(a answer) answer {
	build := a.build
	a.build = func(ctx context.Context, w *errorWriter, err error) *apierr.Error {
		e := build(ctx, w, err)
		if errors.Is(err, auth.ErrAccountTokenForKey) {
			e = e.WithDetail("hint", AccountTokenHint)
			e.Hint = AccountTokenHint
		}
		return e
	}
	return a
}

// on restricts an answer to the routes of one wording.
func (a answer) on(wording string) answer { a.wording = wording; return a }

// suspended refuses a suspended account. details.code is the interface's signal at CLI login; the
// error.code account_suspended says the same on every route.
func suspended() *apierr.Error {
	return apierr.New(apierr.KindAccountSuspended, "Your account has been suspended.").WithDetail("code", "ACCOUNT_BLOCKED")
}

func originNotAllowed(origin string) *apierr.Error {
	return apierr.New(apierr.KindForbidden, "Origin "+origin+" is not allowed for this program")
}

// answers is every refusal of the domain and of authentication, with what it says. Several routes word
// the same refusal differently (the interface's message sets); those answers name their wording.
var answers = []answer{
	// Credentials.
	is(auth.ErrMalformedHeader, apierr.KindUnauthorized, "Missing or malformed Authorization header. Expected: Bearer <token>"),
	is(auth.ErrMalformedHeader, apierr.KindInvalidKey, "Missing or malformed Authorization header. Expected: Bearer <api_token>.").on("readiness"),
	is(auth.ErrMalformedHeader, apierr.KindUnauthorized, "Missing or malformed Authorization header. Expected: Bearer <api_token>").on("cli"),
	is(auth.ErrEmptyToken, apierr.KindUnauthorized, "Missing API token"),
	is(auth.ErrEmptyToken, apierr.KindUnauthorized, "Invalid API token").on("refund"),
	is(auth.ErrEmptyToken, apierr.KindInvalidKey, "Missing API token.").on("readiness"),
	accountTokenHinted(is(apikeys.ErrUnknown, apierr.KindUnauthorized, "Invalid API token")),
	accountTokenHinted(is(apikeys.ErrUnknown, apierr.KindInvalidKey, "Invalid API token.").on("readiness")),
	accountTokenHinted(is(apikeys.ErrUnknown, apierr.KindUnauthorized, "Invalid API token. No program matches this key: it may have been regenerated. "+
		"Ask a workspace owner of the program to regenerate the key in Settings → API keys and use the new one; creating a new "+
		"program does not help.").on("cli")),
	as(func(_ context.Context, w *errorWriter, e *auth.RetiredKeyError) *apierr.Error {
		out := apierr.New(apierr.KindKeyRotationRequired,
			"This API key passed its rotation deadline ("+e.RotateBy.UTC().Format(time.RFC3339)+") and no longer works.")
		out.Hint = "A workspace owner regenerates the key in the program's settings (API keys); use the new key."
		out.DocsURL = w.docsURL
		return out
	}),
	is(auth.ErrNoAccountToken, apierr.KindUnauthorized, "Authentication required — run reftrack login first"),
	is(auth.ErrNoAccountToken, apierr.KindUnauthorized, "Missing Authorization header. Run the login command first.").on("cli"),
	is(auth.ErrProgramKeyForAccount, apierr.KindUnauthorized, "This route needs an account login token, not a program API key — run reftrack login and send its token"),
	is(auth.ErrProgramKeyForAccount, apierr.KindUnauthorized, "This route needs an account login token, not a program API key. Run the login command first.").on("cli"),
	is(accounts.ErrInvalidToken, apierr.KindUnauthorized, "Invalid or expired token — run the login command again"),
	is(accounts.ErrInvalidToken, apierr.KindUnauthorized, "Invalid or expired token. Run the login command to refresh.").on("cli"),
	isBuilt(accounts.ErrSuspended, func(context.Context, error) *apierr.Error { return suspended() }),
	is(auth.ErrCSRF, apierr.KindForbidden, "Missing or invalid CSRF token — reload the dashboard"),
	is(auth.ErrPartnerCSRF, apierr.KindForbidden, "Missing or invalid CSRF token — reload the page"),
	is(logins.ErrNoPartnerSession, apierr.KindUnauthorized, "Sign in to the partner portal first: open /partners"),
	is(portal.ErrProgramNotFound, apierr.KindNotFound, "Program not found"),
	as(func(_ context.Context, _ *errorWriter, e *portal.NotApprovedError) *apierr.Error {
		return apierr.New(apierr.KindForbidden, e.Error())
	}),
	is(portal.ErrLinkCodesOff, apierr.KindForbidden, "This program does not let partners make their own link codes"),
	is(portal.ErrLinkCode, apierr.KindInvalid, "code must be 3 to 32 characters of a-z, 0-9 and -"),
	is(portal.ErrPeriod, apierr.KindInvalid, "days must be 7, 30 or 90"),
	is(portal.ErrPayoutDetails, apierr.KindInvalid, "payout details: method must be paypal (with paypal_email) or bank_transfer (with bank_details, 1 to 1000 characters)"),
	is(apikeys.ErrProgramMismatch, apierr.KindForbidden, "program_id does not match the API key"),

	// Clicks.
	is(clicks.ErrAffiliateURLRequired, apierr.KindInvalid, "affiliate_url is required"),
	is(clicks.ErrInvalidAffiliateURL, apierr.KindInvalid, "Invalid affiliate_url"),
	is(clicks.ErrNoAff, apierr.KindInvalid, "No aff parameter found in affiliate_url"),
	is(clicks.ErrLinkNotFound, apierr.KindInvalid, "Referral link not found"),
	is(clicks.ErrLinkMisconfigured, apierr.KindInvalid, "Invalid referral link configuration"),
	isBuilt(clicks.ErrOriginNotAllowed, func(_ context.Context, err error) *apierr.Error {
		var le *clicks.LinkError
		errors.As(err, &le)
		return originNotAllowed(le.Origin)
	}),
	isBuilt(clicks.ErrLinkDisabled, func(context.Context, error) *apierr.Error {
		e := apierr.New(apierr.KindLinkDisabled, "This referral link has been turned off")
		e.Hint = "The partner or the brand turned this link off; no click was recorded. Ask the partner for an active link."
		return e
	}),

	// Leads.
	as(func(_ context.Context, _ *errorWriter, e *leads.StatusError) *apierr.Error {
		return apierr.Invalid("Customer status cannot be updated to lead. Current status: " + e.Status)
	}),
	is(leads.ErrIdentifierRequired, apierr.KindInvalid, "click_id or customer_key is required"),
	is(leads.ErrCustomerNotFound, apierr.KindInvalid, "Customer not found. Provide a valid click_id or customer_key."),
	is(leads.ErrOtherProgram, apierr.KindInvalid, "Customer does not belong to this program"),
	isBuilt(leads.ErrOriginNotAllowed, func(ctx context.Context, _ error) *apierr.Error {
		return originNotAllowed(request.From(ctx).Header.Get("Origin"))
	}),

	// Customers (leads and sales).
	is(attribution.ErrKeyTooLong, apierr.KindInvalid, fmt.Sprintf("customer_key must be a string of at most %d characters", attribution.MaxKeyLength)),

	// Sales and refunds.
	as(func(ctx context.Context, _ *errorWriter, dup *sales.DuplicateError) *apierr.Error {
		e := apierr.New(apierr.KindDuplicate, "Duplicate transaction_id. This sale has already been recorded.")
		if k, err := auth.ProgramKey(ctx); err == nil && dup.ProgramID == k.ProgramID { // never another brand's ids
			e.WithDetail("sale_id", dup.SaleID)
		}
		return e
	}),
	is(sales.ErrCustomerNotFound, apierr.KindNoAttribution, "Customer not found. Provide customer_key or click_id."),
	is(sales.ErrOtherProgram, apierr.KindNoAttribution, "No affiliate attribution found for this customer in this program"),
	is(sales.ErrNoPartnerProgram, apierr.KindNoAttribution, "No partner-program relationship found for this customer"),
	is(sales.ErrNoPartner, apierr.KindNoAttribution, "partnerId required to create commission"),
	as(func(context.Context, *errorWriter, *sales.CommissionError) *apierr.Error {
		return apierr.New(apierr.KindInternal, "Failed to create commission")
	}),
	is(sales.ErrSaleNotFound, apierr.KindNotFound, "Sale not found for transaction_id"),
	as(func(_ context.Context, _ *errorWriter, e *sales.RefundTooLargeError) *apierr.Error {
		return apierr.Invalid(fmt.Sprintf("refund_amount_cents must be at most %d, the amount not yet refunded", e.Remaining))
	}),
	is(synthetic.ErrChainFailed, apierr.KindInternal, "Failed to run synthetic chain"),
	as(func(_ context.Context, _ *errorWriter, e *synthetic.CapError) *apierr.Error {
		secs := max(int(e.RetryAfter.Round(time.Second)/time.Second), 1)
		return apierr.New(apierr.KindRateLimited, "Too many synthetic chains (max 10/program/hour).").WithRetryAfter(secs)
	}),

	// Sign-in.
	is(logins.ErrSessionNotFound, apierr.KindNotFound, "Session not found or already used"),
	is(logins.ErrSessionNotFound, apierr.KindNotFound, "Session not found").on("cli"),
	is(logins.ErrSessionUsed, apierr.KindNotFound, "Session not found or already used"),
	is(logins.ErrSessionExpired, apierr.KindInvalid, "Session expired"),
	is(logins.ErrConsumed, apierr.KindInvalid, "Session already consumed"),
	isBuilt(logins.ErrSuspended, func(context.Context, error) *apierr.Error { return suspended() }),
	is(logins.ErrEmailTaken, apierr.KindInvalid, "Invalid id_token"),
	is(identity.ErrInvalidToken, apierr.KindInvalid, "Invalid id_token"),
	is(identity.ErrBadEmail, apierr.KindInvalid, "A valid email is required"),

	// A lead or a sale as its webhook shows it (GET /api/v1/leads/{leadId}, /api/v1/sales/{saleId}).
	is(leads.ErrNotFound, apierr.KindNotFound, "Lead not found"),
	is(sales.ErrNotFound, apierr.KindNotFound, "Sale not found"),
	as(func(_ context.Context, _ *errorWriter, e *sales.CurrencyError) *apierr.Error {
		return apierr.New(apierr.KindUnsupportedCurrency, e.Error()).WithDetail("supported", e.Supported)
	}),

	// The ledger: commissions, payouts, Idempotency-Key.
	is(ledger.ErrCommissionNotFound, apierr.KindNotFound, "Commission not found"),
	is(ledger.ErrPayoutNotFound, apierr.KindNotFound, "Payout not found"),
	is(ledger.ErrProgramNotFound, apierr.KindNotFound, "Program not found"),
	as(func(_ context.Context, _ *errorWriter, e *ledger.ConflictError) *apierr.Error {
		return apierr.New(apierr.KindConflict, e.Message)
	}),
	as(func(_ context.Context, _ *errorWriter, e *ledger.InvalidError) *apierr.Error {
		return apierr.Invalid(e.Message)
	}),
	is(idempotency.ErrKeyReused, apierr.KindConflict, "Idempotency-Key reused with a different request"),
	is(idempotency.ErrKeyInvalid, apierr.KindInvalid, "Idempotency-Key must be 1 to 255 characters"),

	// Customers.
	as(func(_ context.Context, _ *errorWriter, e *customers.InvalidError) *apierr.Error {
		return apierr.Invalid(e.Message)
	}),

	// Outbound webhooks.
	is(outbound.ErrEndpointNotFound, apierr.KindNotFound, "Webhook endpoint not found"),
	is(outbound.ErrDeliveryNotFound, apierr.KindNotFound, "Webhook delivery not found"),
	is(outbound.ErrProgramNotFound, apierr.KindNotFound, "Program not found"),
	as(func(_ context.Context, _ *errorWriter, e *outbound.InvalidError) *apierr.Error {
		return apierr.Invalid(e.Message)
	}),
	as(func(_ context.Context, _ *errorWriter, e *outbound.DuplicateURLError) *apierr.Error {
		return apierr.New(apierr.KindConflict, e.Error())
	}),

	// Programs, workspaces, keys.
	is(programs.ErrNotFound, apierr.KindNotFound, "Program not found"),
	as(func(_ context.Context, _ *errorWriter, e *programs.CurrencyError) *apierr.Error {
		return apierr.Invalid(e.Error())
	}),
	is(apikeys.ErrNoProgram, apierr.KindNotFound, "Program not found"),
	is(programs.ErrLinkNotFound, apierr.KindNotFound, "Referral link not found"),
	is(programs.ErrPartnerNotFound, apierr.KindInvalid, "partner_id is not a partner of this program"),
	is(programs.ErrPartnerBanned, apierr.KindConflict, "The partner is banned from this program: their links stay off"),

	// Partners' enrollments and invitations.
	is(enrollment.ErrPartnerNotFound, apierr.KindNotFound, "Partner not found"),
	is(enrollment.ErrInvitationNotFound, apierr.KindNotFound, "Invitation not found"),
	as(func(_ context.Context, _ *errorWriter, e *enrollment.ConflictError) *apierr.Error {
		return apierr.New(apierr.KindConflict, e.Message)
	}),
	as(func(_ context.Context, _ *errorWriter, e *enrollment.InvalidError) *apierr.Error {
		return apierr.Invalid(e.Message)
	}),
	as(func(_ context.Context, _ *errorWriter, e *programs.ShortLinkTakenError) *apierr.Error {
		return apierr.New(apierr.KindConflict, "short_link "+e.ShortLink+" is already taken")
	}),
	// A program's settings out of range (docs/rules.md#bad-input-abuse-and-faults), worded by
	// programs.Message: the CLI prints the same words when it refuses a value before sending.
	{match: func(err error) bool { _, ok := programs.Message(err); return ok },
		build: func(_ context.Context, _ *errorWriter, err error) *apierr.Error {
			msg, _ := programs.Message(err)
			return apierr.Invalid(msg)
		}},
	is(apikeys.ErrNoKey, apierr.KindNotFound, "This program has no API key; regenerate one"),
	is(programs.ErrNotMember, apierr.KindForbidden, "You are not a member of this program's workspace"),
	is(accounts.ErrNotMember, apierr.KindForbidden, "You are not a member of this workspace"),
	is(accounts.ErrNoMembership, apierr.KindForbidden, "No advertiser found for this account — run the login command again"),
	is(accounts.ErrNotYourWorkspace, apierr.KindForbidden, "advertiser_id does not match the authenticated account"),
	is(accounts.ErrNoWorkspace, apierr.KindNotFound, "Workspace not found"),
	as(func(_ context.Context, _ *errorWriter, e *accounts.RoleError) *apierr.Error {
		return apierr.New(apierr.KindForbidden, "Your role ("+e.Role+") does not allow this ("+e.Action+")")
	}),
	is(accounts.ErrOwnerGrantOnly, apierr.KindForbidden, "Only an owner can grant the owner role"),
	is(accounts.ErrAlreadyMember, apierr.KindConflict, "This email is already a member of the workspace"),
	is(accounts.ErrInvalidRole, apierr.KindInvalid, "role must be one of: owner, admin, analyst, billing"),

	// Payment webhooks.
	is(payments.ErrNotConnected, apierr.KindInvalid, "Stripe is not connected for this program"),
	as(func(_ context.Context, _ *errorWriter, e *payments.SignatureError) *apierr.Error {
		return apierr.Invalid(signatureMessage(e.Err))
	}),
	as(func(_ context.Context, _ *errorWriter, e *payments.EventError) *apierr.Error {
		return apierr.Invalid("Invalid Stripe event: " + e.Reason)
	}),
}

func signatureMessage(err error) string {
	switch {
	case errors.Is(err, webhook.ErrNotSigned):
		return "Missing Stripe-Signature header"
	case errors.Is(err, webhook.ErrTooOld):
		return "Stripe-Signature timestamp is outside the tolerance (5 minutes)"
	case errors.Is(err, webhook.ErrNoValidSignature):
		return "Stripe-Signature does not match the payload"
	}
	return "Malformed Stripe-Signature header"
}

// checkWordings refuses a route whose x-reftrack-errors wording no answer knows (a typo in the spec).
func checkWordings(routes *route.Table) error {
	known := map[string]bool{"": true}
	for _, a := range answers {
		known[a.wording] = true
	}
	var errs []error
	for _, p := range routes.All() {
		if !known[p.Errors.Wording] {
			errs = append(errs, fmt.Errorf("%s: x-reftrack-errors wording %q has no answers", p.OperationID, p.Errors.Wording))
		}
	}
	return errors.Join(errs...)
}

// errorWriter is echo's HTTPErrorHandler: every error of every route is written here, in the envelope
// its route uses. Internals are logged with the request id and never sent.
type errorWriter struct {
	log     *slog.Logger
	docsURL string
}

// resolve is the answer to err on a route with policy: an error the handler worded itself, a refusal
// of the domain from the table, one of echo's (routing, binding), or else a failure of the service.
func (w *errorWriter) resolve(ctx context.Context, err error, policy *route.Policy) *apierr.Error {
	// First: a database outage underneath any error (a handler's own 500, a domain refusal that failed
	// half-way) is a 503 the client retries, never a 500.
	if dbfault.Unavailable(err) {
		return unavailable(err)
	}
	var e *apierr.Error
	if errors.As(err, &e) {
		cp := *e // the handler may share e; shaping must not change it
		return &cp
	}
	for _, wording := range []string{policy.Errors.Wording, ""} {
		for _, a := range answers {
			if a.wording == wording && a.match(err) {
				return a.build(ctx, w, err).WithCause(err)
			}
		}
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		return echoError(he).WithCause(err)
	}
	return apierr.Internal("", err)
}

// echoError is one of echo's own errors (no route, wrong method, a parameter or body it could not bind),
// which carry only a status.
func echoError(he *echo.HTTPError) *apierr.Error {
	var kind apierr.Kind
	switch {
	case he.Code == http.StatusNotFound:
		kind = apierr.KindNotFound
	case he.Code == http.StatusMethodNotAllowed:
		kind = apierr.KindMethodNotAllowed
	case he.Code == http.StatusRequestEntityTooLarge:
		kind = apierr.KindPayloadTooLarge
	case he.Code == http.StatusUnsupportedMediaType:
		kind = apierr.KindUnsupportedMedia
	case he.Code >= 500:
		return apierr.Internal("", nil) // never echo's message: it may name internals
	default:
		kind = apierr.KindInvalid
	}
	msg, ok := he.Message.(string)
	if !ok || msg == "" {
		msg = http.StatusText(he.Code)
	}
	return apierr.New(kind, msg)
}

func (w *errorWriter) handle(err error, c echo.Context) {
	ctx := c.Request().Context()
	id := request.ID(ctx)
	if c.Response().Committed {
		w.log.WarnContext(ctx, "error after the response was written", "request_id", id, "err", err)
		return
	}
	policy := route.FromContext(ctx)
	e := w.resolve(ctx, err, policy)
	rule := kinds[e.Kind]
	r := apierr.Response{
		Status: rule.status, Envelope: policy.Envelope.For(e.Kind), Code: e.Kind.Code(), Message: e.Message, Details: e.Details,
		RetryAfterSeconds: e.RetryAfterSeconds, Hint: e.Hint, DocsURL: e.DocsURL,
		WithStatus: rule.withStatus, TopLevel: rule.topLevel,
	}
	if r.Status >= 500 {
		w.log.ErrorContext(ctx, "request failed", "request_id", id, "route", c.Path(), "err", err)
		if r.Message == "" {
			r.Message = policy.Errors.Internal
		}
		if r.Message == "" {
			r.Message = "Internal server error"
		}
		if policy.Errors.RequestIDIn5xx {
			r.Message = fmt.Sprintf("%s (request_id: %s)", r.Message, id)
			r.Details = map[string]any{"request_id": id}
		}
		if ra := policy.Errors.RetryAfter; ra > 0 && r.RetryAfterSeconds == nil {
			r.RetryAfterSeconds = &ra
		}
	}
	if (r.Status == http.StatusTooManyRequests || r.Status == http.StatusServiceUnavailable) && r.RetryAfterSeconds != nil {
		c.Response().Header().Set("Retry-After", fmt.Sprint(*r.RetryAfterSeconds))
	}
	var werr error
	switch {
	case c.Request().Method == http.MethodHead:
		werr = c.NoContent(r.Status)
	case r.Envelope == apierr.Page && r.Status == http.StatusTooManyRequests:
		// A page refused for its rate answers plain text (docs/rules.md#limits): rendering a page for a client
		// hammering the route costs more than the answer is worth.
		werr = c.String(r.Status, r.Message)
	case r.Envelope == apierr.Page:
		body, n := pages.Render(pages.Page{Title: http.StatusText(r.Status), Error: r.Message})
		c.Response().Header().Set(echo.HeaderContentLength, strconv.FormatInt(n, 10))
		werr = c.Stream(r.Status, echo.MIMETextHTMLCharsetUTF8, body)
	default:
		werr = c.JSON(r.Status, r.Body(request.From(ctx).Warnings))
	}
	if werr != nil {
		w.log.WarnContext(ctx, "write error response", "request_id", id, "err", werr)
	}
}
