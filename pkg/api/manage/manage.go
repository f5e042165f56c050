// Package manage is the HTTP area of the account routes the dashboard and integrators use with an
// account login token or the dashboard session: programs and their settings, partners, referral links,
// API keys, the payment processor, workspace members, the events list and daily counts, and the signed-in
// account itself.
package manage

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/programbody"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
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
		PartnerLinkCodes: p.PartnerLinkCodes, Terms: p.Terms().Describe(), CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
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
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	n, err := programbody.New(body, programbody.Fields{CookieField: "cookie_window_days", Settings: true})
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

// UpdateProgram changes a program's settings (owner, admin). The body is read field by field here
// (x-reftrack-validation: handler) and the ranges are checked by programs.Apply, so that every refusal
// answers its documented message and stores nothing.
func (h *Management) UpdateProgram(ctx context.Context, req gen.UpdateProgramRequestObject) (gen.UpdateProgramResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramWrite); err != nil {
		return nil, err
	}
	body, err := jsonbody.Parse(req.Body)
	if err != nil {
		return nil, err
	}
	u, err := programUpdate(body)
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

// programUpdate reads the fields of a program change, checking their JSON types; programs.Apply checks
// their ranges.
func programUpdate(body jsonbody.Object) (programs.Update, error) {
	var u programs.Update
	if len(body) == 0 {
		return u, apierr.Invalid("Request body must change at least one of: name, domain, allowed_origins, lead_auth, " +
			"cookie_window_days, attribution_window_days, commission_type, commission_rate, duration_months, hold_days, " +
			"commission_approval, payout_minimum_cents, enrollment, partner_approval, partner_link_codes")
	}
	if v, present, ok := body.Str("name"); present {
		if n := utf8.RuneCountInString(v); !ok || n < 1 || n > 200 {
			return u, apierr.Invalid("name must be a string of 1 to 200 characters")
		}
		u.Name = &v
	}
	if v, present, ok := body.Str("domain"); present {
		if !ok {
			return u, programs.ErrDomain
		}
		u.Domain = &v
	}
	if raw, present := body["allowed_origins"]; present {
		var list []string
		if json.Unmarshal(raw, &list) != nil || list == nil {
			return u, programs.ErrOrigin
		}
		if len(list) > programbody.MaxAllowedOrigins {
			return u, apierr.Invalid(fmt.Sprintf("allowed_origins must list at most %d origins", programbody.MaxAllowedOrigins))
		}
		u.AllowedOrigins = &list
	}
	if v, present, ok := body.Str("lead_auth"); present {
		if !ok || (v != programs.LeadAuthServerRequired && v != programs.LeadAuthBrowserAllowed) {
			return u, apierr.Invalid("lead_auth must be server_required or browser_allowed")
		}
		u.LeadAuth = &v
	}
	for _, w := range []struct {
		field string
		dst   **int64
	}{{"cookie_window_days", &u.CookieWindowDays}, {"attribution_window_days", &u.AttributionWindowDays}} {
		if v, present, ok := body.SaturatedInt(w.field); present {
			if !ok {
				return u, &programs.WindowError{Field: w.field}
			}
			*w.dst = &v
		}
	}
	if v, present, ok := body.Str("commission_type"); present {
		if !ok || !commission.Valid(v) {
			shown := v
			if !ok {
				shown = string(body["commission_type"])
			}
			return u, &programs.CommissionTypeError{Type: shown}
		}
		u.CommissionType = &v
	}
	if _, present := body["commission_rate"]; present {
		rate, ok := body.Number("commission_rate")
		if !ok {
			return u, programs.ErrRateNotPositive
		}
		u.CommissionRate = &rate
	}
	if v, present, ok := body.SaturatedInt("duration_months"); present {
		if !ok {
			return u, programs.ErrDurationMonths
		}
		u.DurationMonths = &v
	}
	return ledgerSettings(body, u)
}

// ledgerSettings reads the ledger's settings of a program change into u, checking their JSON types;
// programs.Apply checks their ranges.
func ledgerSettings(body jsonbody.Object, u programs.Update) (programs.Update, error) {
	if v, present, ok := body.SaturatedInt("hold_days"); present {
		if !ok {
			return u, programs.ErrHoldDays
		}
		u.HoldDays = &v
	}
	if v, present, ok := body.Str("commission_approval"); present {
		if !ok {
			return u, programs.ErrApproval
		}
		u.CommissionApproval = &v
	}
	if v, present, ok := body.SaturatedInt("payout_minimum_cents"); present {
		if !ok {
			return u, programs.ErrPayoutMinimum
		}
		u.PayoutMinimumCents = &v
	}
	return enrollmentSettings(body, u)
}

// enrollmentSettings reads how partners join (enrollment, partner_approval, partner_link_codes) into u,
// checking their JSON types; programs.Apply checks their values.
func enrollmentSettings(body jsonbody.Object, u programs.Update) (programs.Update, error) {
	if v, present, ok := body.Str("enrollment"); present {
		if !ok {
			return u, programs.ErrEnrollment
		}
		u.Enrollment = &v
	}
	if v, present, ok := body.Str("partner_approval"); present {
		if !ok {
			return u, programs.ErrPartnerApproval
		}
		u.PartnerApproval = &v
	}
	if v, present, ok := body.Bool("partner_link_codes"); present {
		if !ok {
			return u, programs.ErrPartnerLinkCodes
		}
		u.PartnerLinkCodes = &v
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
