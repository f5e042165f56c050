package manage

import (
	"context"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/pkg/programs"
)

func wirePartner(p programs.Partner) gen.Partner { return wire.Partner(p) }

// enrollmentRequest is who changes an enrollment: an owner or admin of the program's workspace.
func (h *Management) enrollmentRequest(ctx context.Context, programID int64) (enrollment.Request, error) {
	a, _, err := h.programAccess(ctx, programID, accounts.ActionPartnersWrite)
	return enrollment.Request{AccountID: a.ID, Email: a.Email, Now: h.Now()}, err
}

func reasonOf(body *gen.PartnerStatusReason) *string {
	if body == nil {
		return nil
	}
	return body.Reason
}

// ApprovePartner approves a partner's application (owner, admin).
func (h *Management) ApprovePartner(ctx context.Context, req gen.ApprovePartnerRequestObject) (gen.ApprovePartnerResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	p, err := enrollment.Approve(ctx, h.DB, r, req.ProgramId, req.PartnerId)
	if err != nil {
		return nil, err
	}
	return gen.ApprovePartner200JSONResponse{Body: gen.PartnerEnvelope{Data: wirePartner(p)}}, nil
}

// RejectPartner rejects a partner's application (owner, admin).
func (h *Management) RejectPartner(ctx context.Context, req gen.RejectPartnerRequestObject) (gen.RejectPartnerResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	p, err := enrollment.Reject(ctx, h.DB, r, req.ProgramId, req.PartnerId, reasonOf(req.Body))
	if err != nil {
		return nil, err
	}
	return gen.RejectPartner200JSONResponse{Body: gen.PartnerEnvelope{Data: wirePartner(p)}}, nil
}

// BanPartner bans an approved partner (owner, admin): links off, open commissions rejected.
func (h *Management) BanPartner(ctx context.Context, req gen.BanPartnerRequestObject) (gen.BanPartnerResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	p, err := enrollment.Ban(ctx, h.DB, r, req.ProgramId, req.PartnerId, reasonOf(req.Body))
	if err != nil {
		return nil, err
	}
	return gen.BanPartner200JSONResponse{Body: gen.PartnerEnvelope{Data: wirePartner(p)}}, nil
}

// ListPartners lists a program's partners.
func (h *Management) ListPartners(ctx context.Context, req gen.ListPartnersRequestObject) (gen.ListPartnersResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	list, err := programs.Partners(ctx, h.DB, req.ProgramId)
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
func (h *Management) CreatePartner(ctx context.Context, req gen.CreatePartnerRequestObject) (gen.CreatePartnerResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionPartnersWrite); err != nil {
		return nil, err
	}
	p, mailed, err := h.invitations().Add(ctx, req.ProgramId, programs.NewPartner{Name: req.Body.Name, Email: string(req.Body.Email)},
		wire.Deref(req.Body.SendPortalInvitation), h.Now())
	if err != nil {
		return nil, err
	}
	return gen.CreatePartner201JSONResponse{Body: gen.PartnerEnvelope{Data: wirePartner(p), PortalInvitationSent: &mailed}}, nil
}

func wireLink(l programs.Link) gen.Link { return wire.Link(l) }

// ListLinks lists a program's referral links.
func (h *Management) ListLinks(ctx context.Context, req gen.ListLinksRequestObject) (gen.ListLinksResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	list, err := programs.Links(ctx, h.DB, req.ProgramId)
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
func (h *Management) CreateLink(ctx context.Context, req gen.CreateLinkRequestObject) (gen.CreateLinkResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionLinksWrite); err != nil {
		return nil, err
	}
	short := ""
	if req.Body.ShortLink != nil {
		short = *req.Body.ShortLink
	}
	l, err := programs.CreateLink(ctx, h.DB, req.ProgramId, req.Body.PartnerId, short)
	if err != nil {
		return nil, err
	}
	return gen.CreateLink201JSONResponse{Body: gen.LinkEnvelope{Data: wireLink(l)}}, nil
}

// UpdateLink turns a referral link on or off (owner, admin of its program's workspace).
func (h *Management) UpdateLink(ctx context.Context, req gen.UpdateLinkRequestObject) (gen.UpdateLinkResponseObject, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := programs.AccessLink(ctx, h.DB, a.ID, req.LinkId, accounts.ActionLinksWrite); err != nil {
		return nil, err
	}
	l, err := programs.SetLinkEnabled(ctx, h.DB, req.LinkId, req.Body.Enabled)
	if err != nil {
		return nil, err
	}
	return gen.UpdateLink200JSONResponse{Body: gen.LinkEnvelope{Data: wireLink(l)}}, nil
}

// GetApiKey shows the program's key, masked, and its rotation state.
func (h *Management) GetApiKey(ctx context.Context, req gen.GetApiKeyRequestObject) (gen.GetApiKeyResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	k, err := apikeys.Current(ctx, h.DB, req.ProgramId)
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
func (h *Management) RegenerateApiKey(ctx context.Context, req gen.RegenerateApiKeyRequestObject) (gen.RegenerateApiKeyResponseObject, error) {
	a, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionKeysRegenerate)
	if err != nil {
		return nil, err
	}
	k, plain, err := apikeys.Regenerate(ctx, h.DB, req.ProgramId, audit.Account(a.ID, a.Email), h.Now())
	if err != nil {
		return nil, err
	}
	body := gen.ApiKeyIssuedEnvelope{}
	body.Data.ApiKey, body.Data.Masked, body.Data.CreatedAt = plain, k.Masked(), k.CreatedAt
	return gen.RegenerateApiKey200JSONResponse{Body: body}, nil
}
