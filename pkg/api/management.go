package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/programs"
)

// Account-token answers of the management routes.
var (
	errAccountMissing   = apierr.Unauthorized("Authentication required — run reftrack login first")
	errAccountInvalid   = apierr.Unauthorized("Invalid or expired token — run the login command again")
	errProgramNotFound  = apierr.NotFound("Program not found")
	errLinkNotFound     = apierr.NotFound("Referral link not found")
	errNotMember        = apierr.Forbidden("You are not a member of this program's workspace")
	errAccountSuspended = apierr.Forbidden("Your account has been suspended.").WithDetail("code", "ACCOUNT_BLOCKED")
)

// requireAccount authenticates the account login token, from the Bearer header or the dashboard's
// session cookie. A change authenticated by the cookie alone must carry the page's CSRF token: the
// browser sends the cookie on its own, a Bearer header never.
func (s *Server) requireAccount(ctx context.Context) (accounts.Account, error) {
	m := metaFrom(ctx)
	token := parseBearer(m.header.Get("Authorization")).token
	if token == "" {
		token = cookie(ctx, dashboard.SessionCookie)
		if token != "" && !safeMethod(m.method) && !dashboard.ValidCSRF(token, m.header.Get(dashboard.CSRFHeader)) {
			return accounts.Account{}, errCSRF
		}
	}
	return s.authenticateAccount(ctx, token, errAccountMissing, errAccountInvalid)
}

// authenticateAccount checks an account login token, answering the route family's messages for a
// missing or invalid one.
func (s *Server) authenticateAccount(ctx context.Context, token string, missing, invalid error) (accounts.Account, error) {
	if token == "" {
		return accounts.Account{}, missing
	}
	a, err := accounts.Authenticate(ctx, s.deps.DB, token)
	switch {
	case errors.Is(err, accounts.ErrInvalidToken):
		return accounts.Account{}, invalid
	case errors.Is(err, accounts.ErrSuspended):
		return accounts.Account{}, errAccountSuspended
	}
	return a, err
}

// programAccess authenticates the account and checks its role in the program's workspace allows action.
func (s *Server) programAccess(ctx context.Context, programID int64, action string) (accounts.Account, programs.Program, error) {
	a, err := s.requireAccount(ctx)
	if err != nil {
		return a, programs.Program{}, err
	}
	p, err := programs.Get(ctx, s.deps.DB, programID)
	if errors.Is(err, programs.ErrNotFound) {
		return a, p, errProgramNotFound
	}
	if err != nil {
		return a, p, err
	}
	role, err := accounts.Role(ctx, s.deps.DB, a.ID, p.WorkspaceID)
	if errors.Is(err, accounts.ErrNotMember) {
		return a, p, errNotMember
	}
	if err != nil {
		return a, p, err
	}
	if !accounts.Can(role, action) {
		return a, p, apierr.Forbidden("Your role (" + role + ") does not allow this (" + action + ")")
	}
	return a, p, nil
}

func (s *Server) wireProgram(ctx context.Context, p programs.Program) (gen.Program, error) {
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
	k, err := apikeys.Current(ctx, s.deps.DB, p.ID)
	switch {
	case err == nil:
		out.ApiKeyMasked = ptr(k.Masked())
	case !errors.Is(err, apikeys.ErrUnknown):
		return gen.Program{}, err
	}
	return out, nil
}

// GetProgram shows a program's settings to any member of its workspace.
func (s *Server) GetProgram(ctx context.Context, req gen.GetProgramRequestObject) (gen.GetProgramResponseObject, error) {
	_, p, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead)
	if err != nil {
		return nil, err
	}
	out, err := s.wireProgram(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.GetProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

// UpdateProgram changes a program's settings (owner, admin).
func (s *Server) UpdateProgram(ctx context.Context, req gen.UpdateProgramRequestObject) (gen.UpdateProgramResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramWrite); err != nil {
		return nil, err
	}
	b := req.Body
	u := programs.Update{Name: b.Name, Domain: b.Domain, AllowedOrigins: b.AllowedOrigins,
		CookieWindowDays: b.CookieWindowDays, AttributionWindowDays: b.AttributionWindowDays}
	if b.LeadAuth != nil {
		u.LeadAuth = ptr(string(*b.LeadAuth))
	}
	if b.CommissionType != nil {
		u.CommissionType = ptr(string(*b.CommissionType))
	}
	if b.CommissionRate != nil {
		u.CommissionRate = ptr(strconv.FormatFloat(*b.CommissionRate, 'f', -1, 64))
	}
	p, err := programs.Apply(ctx, s.deps.DB, req.ProgramId, u)
	if errors.Is(err, programs.ErrInvalid) {
		return nil, apierr.BadRequest("Invalid request body: allowed_origins: " + err.Error())
	}
	if err != nil {
		return nil, err
	}
	s.origins.forget()
	out, err := s.wireProgram(ctx, p)
	if err != nil {
		return nil, err
	}
	return gen.UpdateProgram200JSONResponse{Body: gen.ProgramEnvelope{Data: out}}, nil
}

func wirePartner(p programs.Partner) gen.Partner {
	return gen.Partner{Id: p.ID, Name: p.Name, Email: p.Email, ProgramId: p.ProgramID, PartnerProgramId: p.PartnerProgramID,
		Synthetic: p.Synthetic, CreatedAt: p.CreatedAt}
}

// ListPartners lists a program's partners.
func (s *Server) ListPartners(ctx context.Context, req gen.ListPartnersRequestObject) (gen.ListPartnersResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	list, err := programs.Partners(ctx, s.deps.DB, req.ProgramId)
	if err != nil {
		return nil, err
	}
	out := make([]gen.Partner, len(list))
	for i, p := range list {
		out[i] = wirePartner(p)
	}
	return gen.ListPartners200JSONResponse{Body: gen.PartnerListEnvelope{Data: out}}, nil
}

// CreatePartner adds a partner to a program (owner, admin).
func (s *Server) CreatePartner(ctx context.Context, req gen.CreatePartnerRequestObject) (gen.CreatePartnerResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionPartnersWrite); err != nil {
		return nil, err
	}
	p, err := programs.AddPartner(ctx, s.deps.DB, req.ProgramId, programs.NewPartner{Name: req.Body.Name, Email: string(req.Body.Email)})
	if err != nil {
		return nil, err
	}
	return gen.CreatePartner201JSONResponse{Body: gen.PartnerEnvelope{Data: wirePartner(p)}}, nil
}

func wireLink(l programs.Link) gen.Link {
	return gen.Link{Id: l.ID, ShortLink: l.ShortLink, PartnerId: l.PartnerID, ProgramId: l.ProgramID, Enabled: l.Enabled,
		ReferralUrl: l.ReferralURL(), CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
}

// ListLinks lists a program's referral links.
func (s *Server) ListLinks(ctx context.Context, req gen.ListLinksRequestObject) (gen.ListLinksResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	list, err := programs.Links(ctx, s.deps.DB, req.ProgramId)
	if err != nil {
		return nil, err
	}
	out := make([]gen.Link, len(list))
	for i, l := range list {
		out[i] = wireLink(l)
	}
	return gen.ListLinks200JSONResponse{Body: gen.LinkListEnvelope{Data: out}}, nil
}

// CreateLink makes a referral link for a partner of the program (owner, admin).
func (s *Server) CreateLink(ctx context.Context, req gen.CreateLinkRequestObject) (gen.CreateLinkResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionLinksWrite); err != nil {
		return nil, err
	}
	short := ""
	if req.Body.ShortLink != nil {
		short = *req.Body.ShortLink
	}
	l, err := programs.CreateLink(ctx, s.deps.DB, req.ProgramId, req.Body.PartnerId, short)
	switch {
	case errors.Is(err, programs.ErrPartnerNotFound):
		return nil, apierr.BadRequest("partner_id is not a partner of this program")
	case errors.Is(err, programs.ErrShortLinkTaken):
		return nil, apierr.Conflict("short_link " + short + " is already taken")
	case err != nil:
		return nil, err
	}
	return gen.CreateLink201JSONResponse{Body: gen.LinkEnvelope{Data: wireLink(l)}}, nil
}

// UpdateLink turns a referral link on or off (owner, admin of its program's workspace).
func (s *Server) UpdateLink(ctx context.Context, req gen.UpdateLinkRequestObject) (gen.UpdateLinkResponseObject, error) {
	if _, err := s.requireAccount(ctx); err != nil {
		return nil, err
	}
	l, err := programs.GetLink(ctx, s.deps.DB, req.LinkId)
	if errors.Is(err, programs.ErrNotFound) || (err == nil && l.ProgramID == nil) {
		return nil, errLinkNotFound
	}
	if err != nil {
		return nil, err
	}
	if _, _, err := s.programAccess(ctx, *l.ProgramID, accounts.ActionLinksWrite); err != nil {
		if errors.Is(err, errProgramNotFound) {
			return nil, errLinkNotFound
		}
		return nil, err
	}
	l, err = programs.SetLinkEnabled(ctx, s.deps.DB, req.LinkId, req.Body.Enabled)
	if err != nil {
		return nil, err
	}
	return gen.UpdateLink200JSONResponse{Body: gen.LinkEnvelope{Data: wireLink(l)}}, nil
}

// GetApiKey shows the program's key, masked, and its rotation state.
func (s *Server) GetApiKey(ctx context.Context, req gen.GetApiKeyRequestObject) (gen.GetApiKeyResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	k, err := apikeys.Current(ctx, s.deps.DB, req.ProgramId)
	if errors.Is(err, apikeys.ErrUnknown) {
		return nil, apierr.NotFound("This program has no API key; regenerate one")
	}
	if err != nil {
		return nil, err
	}
	out := gen.ApiKeyInfo{Masked: k.Masked(), CreatedAt: k.CreatedAt}
	if k.RotateBy != nil {
		out.Rotation = &struct {
			MarkedAt time.Time `json:"marked_at"`
			RotateBy time.Time `json:"rotate_by"`
		}{MarkedAt: *k.MarkedAt, RotateBy: *k.RotateBy}
	}
	return gen.GetApiKey200JSONResponse{Body: gen.ApiKeyEnvelope{Data: out}}, nil
}

// RegenerateApiKey issues a new program key (owner only); the old one stops matching at once.
func (s *Server) RegenerateApiKey(ctx context.Context, req gen.RegenerateApiKeyRequestObject) (gen.RegenerateApiKeyResponseObject, error) {
	a, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionKeysRegenerate)
	if err != nil {
		return nil, err
	}
	k, plain, err := apikeys.Regenerate(ctx, s.deps.DB, req.ProgramId, a.ID)
	if errors.Is(err, apikeys.ErrNoProgram) {
		return nil, errProgramNotFound
	}
	if err != nil {
		return nil, err
	}
	body := gen.ApiKeyIssuedEnvelope{}
	body.Data.ApiKey, body.Data.Masked, body.Data.CreatedAt = plain, k.Masked(), k.CreatedAt
	return gen.RegenerateApiKey200JSONResponse{Body: body}, nil
}
