// Package manage is the HTTP area of the account routes the dashboard and integrators use with an
// account login token or the dashboard session: programs and their settings, partners, referral links,
// API keys, the payment processor, workspace members, the events list and daily counts, and the signed-in
// account itself.
package manage

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Management implements the management operations of the strict server interface.
type Management struct {
	DB  *sqlx.DB
	Now func() time.Time
	// BaseURL is this service's public address (the payment webhook's URL).
	BaseURL string
	// Origins is forgotten when a program's allowed origins change.
	Origins *origins.Cache
}

// ErrNotProgramMember refuses an account that is not a member of the program's workspace.
var ErrNotProgramMember = errors.New("not a member of the program's workspace")

// programAccess checks that the signed-in account's role in the program's workspace allows action.
func (h *Management) programAccess(ctx context.Context, programID int64, action string) (accounts.Account, programs.Program, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return a, programs.Program{}, err
	}
	p, err := programs.Get(ctx, h.DB, programID)
	if err != nil {
		return a, p, err
	}
	role, err := accounts.Role(ctx, h.DB, a.ID, p.WorkspaceID)
	if errors.Is(err, accounts.ErrNotMember) {
		return a, p, ErrNotProgramMember
	}
	if err != nil {
		return a, p, err
	}
	return a, p, accounts.Authorize(role, action)
}

func (h *Management) wireProgram(ctx context.Context, p programs.Program) (gen.Program, error) {
	rate, err := strconv.ParseFloat(p.CommissionRate, 64)
	if err != nil {
		return gen.Program{}, err
	}
	out := gen.Program{
		Id: p.ID, AdvertiserId: p.WorkspaceID, Name: p.Name, Domain: p.Domain, Slug: p.Slug,
		Status: gen.ProgramStatus(p.Status), LeadAuth: gen.LeadAuth(p.LeadAuth), CookieWindowDays: p.CookieWindowDays,
		AttributionWindowDays: p.AttributionWindowDays, CommissionType: gen.CommissionType(p.CommissionType),
		CommissionRate: rate, DurationMonths: p.DurationMonths, AllowedOrigins: append([]string{}, p.AllowedOrigins...),
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
	k, err := apikeys.Current(ctx, h.DB, p.ID)
	switch {
	case err == nil:
		out.ApiKeyMasked = wire.Ptr(k.Masked())
	case !errors.Is(err, apikeys.ErrNoKey):
		return gen.Program{}, err
	}
	return out, nil
}

// GetProgram shows a program's settings to any member of its workspace.
func (h *Management) GetProgram(ctx context.Context, req gen.GetProgramRequestObject) (gen.GetProgramResponseObject, error) {
	_, p, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead)
	if err != nil {
		return nil, err
	}
	out, err := h.wireProgram(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.GetProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

// UpdateProgram changes a program's settings (owner, admin).
func (h *Management) UpdateProgram(ctx context.Context, req gen.UpdateProgramRequestObject) (gen.UpdateProgramResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramWrite); err != nil {
		return nil, err
	}
	b := req.Body
	u := programs.Update{Name: b.Name, Domain: b.Domain, AllowedOrigins: b.AllowedOrigins,
		CookieWindowDays: b.CookieWindowDays, AttributionWindowDays: b.AttributionWindowDays}
	if b.LeadAuth != nil {
		u.LeadAuth = wire.Ptr(string(*b.LeadAuth))
	}
	if b.CommissionType != nil {
		u.CommissionType = wire.Ptr(string(*b.CommissionType))
	}
	if b.CommissionRate != nil {
		u.CommissionRate = wire.Ptr(strconv.FormatFloat(*b.CommissionRate, 'f', -1, 64))
	}
	p, err := programs.Apply(ctx, h.DB, req.ProgramId, u)
	if err != nil {
		return nil, err
	}
	h.Origins.Forget()
	out, err := h.wireProgram(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.UpdateProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

// GetProgramReadiness answers the readiness checks to any member of the program's workspace.
func (h *Management) GetProgramReadiness(ctx context.Context, req gen.GetProgramReadinessRequestObject) (gen.GetProgramReadinessResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	r, err := readinessOf(ctx, h.DB, req.ProgramId)
	if err != nil {
		return nil, err
	}
	return gen.GetProgramReadiness200JSONResponse{Body: r}, nil
}
