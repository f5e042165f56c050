package manage

import (
	"context"
	"encoding/json"
	"strconv"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/enrollment"
)

func (h *Management) invitations() *enrollment.Invitations {
	return &enrollment.Invitations{DB: h.DB, BaseURL: h.BaseURL}
}

func wireInvitation(v enrollment.Invitation) gen.Invitation {
	return gen.Invitation{Id: v.ID, ProgramId: v.ProgramID, PartnerId: v.PartnerID, Email: v.Email, Name: v.Name,
		Message: v.Message, Status: gen.InvitationStatus(v.Status), SentCount: v.SentCount, LastSentAt: v.LastSentAt,
		ExpiresAt: v.ExpiresAt, AcceptedAt: v.AcceptedAt, CreatedAt: v.CreatedAt}
}

func wireInvitations(list []enrollment.Invitation) []gen.Invitation {
	out := make([]gen.Invitation, len(list))
	for i, v := range list {
		out[i] = wireInvitation(v)
	}
	return out
}

// ListInvitations lists the program's invitations to any member of its workspace.
func (h *Management) ListInvitations(ctx context.Context, req gen.ListInvitationsRequestObject) (gen.ListInvitationsResponseObject, error) {
	if _, _, err := h.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	list, err := h.invitations().List(ctx, req.ProgramId, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.ListInvitations200JSONResponse{Body: gen.InvitationListEnvelope{Data: wireInvitations(list)}}, nil
}

// CreateInvitations invites one partner or up to 50 by email (owner, admin). The body is read field by
// field here (x-reftrack-validation: handler) so that each refusal answers its documented message.
func (h *Management) CreateInvitations(ctx context.Context, req gen.CreateInvitationsRequestObject) (gen.CreateInvitationsResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	var raw *json.RawMessage
	if req.Body != nil {
		b := json.RawMessage(*req.Body)
		raw = &b
	}
	body, err := jsonbody.Parse(raw)
	if err != nil {
		return nil, err
	}
	list, batch, err := invitees(body)
	if err != nil {
		return nil, err
	}
	made, err := h.invitations().Invite(ctx, r, req.ProgramId, list, batch)
	if err != nil {
		return nil, err
	}
	return gen.CreateInvitations201JSONResponse{Body: gen.InvitationListEnvelope{Data: wireInvitations(made)}}, nil
}

// invitees reads one invitation ({email, name?, message?}) or several ({invitations: [...]}), checking
// the members' JSON types; enrollment.CheckInvitees checks their values.
func invitees(body jsonbody.Object) ([]enrollment.Invitee, bool, error) {
	_, one := body["email"]
	rawList, many := body["invitations"]
	if one == many {
		return nil, false, apierr.Invalid("Request body must have either email or invitations")
	}
	if one {
		in, err := invitee(body, "")
		return []enrollment.Invitee{in}, false, err
	}
	var items []json.RawMessage
	if json.Unmarshal(rawList, &items) != nil || len(items) < 1 || len(items) > enrollment.MaxInvitations {
		return nil, true, apierr.Invalid("invitations must hold 1 to 50 invitations")
	}
	out := make([]enrollment.Invitee, len(items))
	for i, item := range items {
		prefix := "invitations[" + strconv.Itoa(i) + "]."
		var o jsonbody.Object
		if json.Unmarshal(item, &o) != nil || o == nil {
			return nil, true, apierr.Invalid(prefix + "email must be an email address")
		}
		in, err := invitee(o, prefix)
		if err != nil {
			return nil, true, err
		}
		out[i] = in
	}
	return out, true, nil
}

func invitee(o jsonbody.Object, prefix string) (enrollment.Invitee, error) {
	email, _, ok := o.Str("email")
	if !ok || !enrollment.ValidEmail(email) {
		return enrollment.Invitee{}, apierr.Invalid(prefix + "email must be an email address")
	}
	in := enrollment.Invitee{Email: email}
	if v, present, ok := o.Str("name"); present {
		if !ok || v == "" {
			return enrollment.Invitee{}, apierr.Invalid(prefix + "name must be 1 to 200 characters")
		}
		in.Name = v
	}
	if v, present, ok := o.Str("message"); present {
		if !ok {
			return enrollment.Invitee{}, apierr.Invalid(prefix + "message must be at most 2000 characters")
		}
		in.Message = v
	}
	return in, nil
}

// ResendInvitation mails an invitation again with a new link (owner, admin).
func (h *Management) ResendInvitation(ctx context.Context, req gen.ResendInvitationRequestObject) (gen.ResendInvitationResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	v, err := h.invitations().Resend(ctx, r, req.ProgramId, req.InvitationId)
	if err != nil {
		return nil, err
	}
	return gen.ResendInvitation200JSONResponse{Body: gen.InvitationEnvelope{Data: wireInvitation(v)}}, nil
}

// CancelInvitation cancels an invitation (owner, admin).
func (h *Management) CancelInvitation(ctx context.Context, req gen.CancelInvitationRequestObject) (gen.CancelInvitationResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	v, err := h.invitations().Cancel(ctx, r, req.ProgramId, req.InvitationId)
	if err != nil {
		return nil, err
	}
	return gen.CancelInvitation200JSONResponse{Body: gen.InvitationEnvelope{Data: wireInvitation(v)}}, nil
}
