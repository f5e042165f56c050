// Package manage is the HTTP area of the account routes the dashboard and integrators use with an
// account login token or the dashboard session: programs and their settings, partners, referral links,
// API keys, the payment processor, workspace members, the events list and daily counts, and the signed-in
// account itself.
package manage

import (
	"context"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/programbody"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/portal"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// Management implements the management operations of the strict server interface.
type Management struct {
	// DB is the primary: every write, and every read that authenticates, authorizes or must see what
	// was just written (programs, roles, partners, links, keys).
	DB *sqlx.DB
	// ReadDB serves the reads that tolerate replica lag, and only those: the events list, its daily
	// counts and the dashboard's readiness report. It is the read replica when READ_DATABASE_URL is set,
	// else DB itself.
	ReadDB *sqlx.DB
	Now    func() time.Time
	// BaseURL is this service's public address (the payment webhook's URL).
	BaseURL string
	// Origins is forgotten when a program's allowed origins change.
	Origins *origins.Cache
	// DNS looks the program's domain verification record up (readiness requests).
	DNS programs.TXTResolver
	// Webhooks manages webhook endpoints and their delivery logs.
	Webhooks *webhooks.Store
	// Details opens partners' payout details (their PayPal address in the payouts CSV).
	Details *portal.Details
	// MailQueued is told when an invitation's mail is queued (api.Deps.MailQueued); nil: nobody.
	MailQueued func()
}

// mailQueued tells MailQueued, when set, that mail waits in the outbox.
func (h *Management) mailQueued() {
	if h.MailQueued != nil {
		h.MailQueued()
	}
}

// programAccess is the program, once the signed-in account's role in its workspace allows action.
func (h *Management) programAccess(ctx context.Context, programID int64, action string) (accounts.Account, programs.Program, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return a, programs.Program{}, err
	}
	p, err := programs.Access(ctx, h.DB, a.ID, programID, action)
	return a, p, err
}

func wireProgram(p programs.Shown) (gen.Program, error) {
	rate, err := strconv.ParseFloat(p.CommissionRate, 64)
	if err != nil {
		return gen.Program{}, err
	}
	out := gen.Program{
		Id: p.ID, AdvertiserId: p.WorkspaceID, Name: p.Name, Domain: p.Domain, Slug: p.Slug,
		Status: gen.ProgramStatus(p.Status), LeadAuth: gen.LeadAuth(p.LeadAuth), CookieWindowDays: p.CookieWindowDays,
		AttributionWindowDays: p.AttributionWindowDays, CommissionType: gen.CommissionType(p.CommissionType),
		CommissionRate: rate, DurationMonths: p.DurationMonths, AllowedOrigins: append([]string{}, p.AllowedOrigins...),
		HoldDays: p.HoldDays, CommissionApproval: gen.CommissionApproval(p.CommissionApproval), PayoutMinimumCents: p.PayoutMinimumCents,
		Enrollment: gen.ProgramEnrollment(p.Enrollment), PartnerApproval: gen.ProgramPartnerApproval(p.PartnerApproval),
		PartnerLinkCodes: p.PartnerLinkCodes, Currencies: append([]string{}, p.Currencies...), DefaultCurrency: p.DefaultCurrency,
		Terms: p.Terms().Describe(), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
	if p.KeyMasked != "" {
		out.ApiKeyMasked = wire.Ptr(p.KeyMasked)
	}
	return out, nil
}

// GetProgram shows a program's settings to any member of its workspace.
func (h *Management) GetProgram(ctx context.Context, req gen.GetProgramRequestObject) (gen.GetProgramResponseObject, error) {
	_, p, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead)
	if err != nil {
		return nil, err
	}
	out, err := h.show(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.GetProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

// show is a program as the answers show it: its settings and its key's masked form.
func (h *Management) show(ctx context.Context, p programs.Program) (gen.Program, error) {
	shown, err := programs.Show(ctx, h.DB, p)
	if err != nil {
		return gen.Program{}, err
	}
	return wireProgram(shown)
}

// CreateProgram makes a program in a workspace with its API key (owner, admin), as cli/init does.
func (h *Management) CreateProgram(ctx context.Context, req gen.CreateProgramRequestObject) (gen.CreateProgramResponseObject, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	role, err := h.workspaceRole(ctx, req.AdvertiserId)
	if err != nil {
		return nil, err
	}
	if err := accounts.Authorize(role, accounts.ActionProgramWrite); err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	b := req.Body
	n, err := programbody.New(programbody.Body{Name: b.Name, Domain: b.Domain, CommissionType: b.CommissionType,
		CommissionRate: b.CommissionRate, DurationMonths: b.DurationMonths, Cookie: b.CookieWindowDays, CookieField: "cookie_window_days",
		LeadAuth: b.LeadAuth, AllowedOrigins: b.AllowedOrigins, NameAtMost200: true})
	if err != nil {
		return nil, err
	}
	n.WorkspaceID, n.CreatedBy = req.AdvertiserId, a.ID
	p, key, err := programs.Create(ctx, h.DB, n)
	h.Origins.Forget() // a new program's origins
	if err != nil {
		return nil, err
	}
	out, err := h.show(ctx, p)
	if err != nil {
		return nil, err
	}
	created := gen.ProgramCreatedEnvelope{}
	created.Data.Program, created.Data.ApiKey = out, key
	return gen.CreateProgram201JSONResponse{Body: created}, nil
}

// UpdateProgram changes a program's settings (owner, admin). The body is read member by member here
// (x-reftrack-validation: handler) and the ranges are checked by programs.Apply, so that every refusal
// answers its documented message and stores nothing.
func (h *Management) UpdateProgram(ctx context.Context, req gen.UpdateProgramRequestObject) (gen.UpdateProgramResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramWrite); err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	u, err := programUpdate(req.Body)
	if err != nil {
		return nil, err
	}
	p, err := programs.Change(ctx, h.DB, req.ProgramId, u)
	// The allowed origins may have changed, even when showing the stored change failed; forgetting them
	// after a refused change costs one reload.
	h.Origins.Forget()
	if err != nil {
		return nil, err
	}
	out, err := wireProgram(p)
	if err != nil {
		return nil, err
	}
	return gen.UpdateProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

// errNothingToChange refuses a program change that names no setting.
var errNothingToChange = apierr.Invalid("Request body must change at least one of: name, domain, allowed_origins, lead_auth, " +
	"cookie_window_days, attribution_window_days, commission_type, commission_rate, duration_months, hold_days, " +
	"commission_approval, payout_minimum_cents, enrollment, partner_approval, partner_link_codes, currencies, default_currency")

// The refusals of the currencies' JSON types (their values: commission.CheckCurrencies).
var (
	errCurrencies      = apierr.Invalid("currencies must be a list of ISO 4217 codes, such as [\"USD\", \"GBP\"]")
	errDefaultCurrency = apierr.Invalid("default_currency must be an ISO 4217 code, such as \"USD\"")
)

// programUpdate reads the members of a program change, checking their JSON types; programs.Apply checks
// their values.
func programUpdate(b *gen.ProgramUpdate) (programs.Update, error) {
	var r jsonbody.Reader
	var u programs.Update
	u.Name = jsonbody.Ptr(r.String(b.Name, apierr.Invalid("name must be a string of 1 to 200 characters"), jsonbody.Runes(1, 200)))
	u.Domain = jsonbody.Ptr(r.String(b.Domain, programs.ErrDomain))
	if origins, ok := r.Strings(b.AllowedOrigins, programs.ErrOrigin); ok && r.Check(len(origins) <= programbody.MaxAllowedOrigins, programbody.ErrTooManyOrigins) {
		u.AllowedOrigins = &origins
	}
	u.LeadAuth = jsonbody.Ptr(r.String(b.LeadAuth, programbody.ErrLeadAuth, jsonbody.OneOf(programs.LeadAuthServerRequired, programs.LeadAuthBrowserAllowed)))
	u.CookieWindowDays = jsonbody.Ptr(r.Int(b.CookieWindowDays, &programs.WindowError{Field: "cookie_window_days"}))
	u.AttributionWindowDays = jsonbody.Ptr(r.Int(b.AttributionWindowDays, &programs.WindowError{Field: "attribution_window_days"}))
	u.CommissionType = jsonbody.Ptr(r.String(b.CommissionType, &programs.CommissionTypeError{Type: b.CommissionType.Shown()}, commission.Valid))
	u.CommissionRate = jsonbody.Ptr(r.Number(b.CommissionRate, programs.ErrRateNotPositive))
	u.DurationMonths = jsonbody.Ptr(r.Int(b.DurationMonths, programs.ErrDurationMonths))
	u.HoldDays = jsonbody.Ptr(r.Int(b.HoldDays, programs.ErrHoldDays))
	u.CommissionApproval = jsonbody.Ptr(r.String(b.CommissionApproval, programs.ErrApproval))
	u.PayoutMinimumCents = jsonbody.Ptr(r.Int(b.PayoutMinimumCents, programs.ErrPayoutMinimum))
	u.Enrollment = jsonbody.Ptr(r.String(b.Enrollment, programs.ErrEnrollment))
	u.PartnerApproval = jsonbody.Ptr(r.String(b.PartnerApproval, programs.ErrPartnerApproval))
	u.PartnerLinkCodes = jsonbody.Ptr(r.Bool(b.PartnerLinkCodes, programs.ErrPartnerLinkCodes))
	u.Currencies = jsonbody.Ptr(r.Strings(b.Currencies, errCurrencies))
	u.DefaultCurrency = jsonbody.Ptr(r.String(b.DefaultCurrency, errDefaultCurrency))
	if err := r.Err(); err != nil {
		return u, err
	}
	// Nothing read and no other member either: an empty body (unknown members are ignored, but they make
	// the body say something).
	if u == (programs.Update{}) && len(b.AdditionalProperties) == 0 {
		return u, errNothingToChange
	}
	return u, nil
}

// GetProgramReadiness answers the readiness checks to any member of the program's workspace.
func (h *Management) GetProgramReadiness(ctx context.Context, req gen.GetProgramReadinessRequestObject) (gen.GetProgramReadinessResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	// The DNS check writes (it claims the lookup, records a verification): the primary. The report is
	// read from ReadDB.
	r, err := readiness.Assess(ctx, readiness.Sources{Primary: h.DB, Read: h.ReadDB, DNS: h.DNS}, req.ProgramId, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.GetProgramReadiness200JSONResponse{Body: wire.Readiness(r)}, nil
}
