package manage

import (
	"context"
	"strconv"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
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

// CreateInvitations invites one partner or up to 50 by email (owner, admin). The body is read member by
// member here (x-reftrack-validation: handler) so that each refusal answers its documented message.
func (h *Management) CreateInvitations(ctx context.Context, req gen.CreateInvitationsRequestObject) (gen.CreateInvitationsResponseObject, error) {
	r, err := h.enrollmentRequest(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	list, batch, err := invitees(req.Body)
	if err != nil {
		return nil, err
	}
	made, err := h.invitations().Invite(ctx, r, req.ProgramId, list, batch)
	if err != nil {
		return nil, err
	}
	h.mailQueued()
	return gen.CreateInvitations201JSONResponse{Body: gen.InvitationListEnvelope{Data: wireInvitations(made)}}, nil
}

// invitees reads one invitation ({email, name?, message?}) or several ({invitations: [...]}), checking
// the members' JSON types; enrollment.CheckInvitees checks their values.
func invitees(b *gen.InvitationCreate) ([]enrollment.Invitee, bool, error) {
	items, many, ok := b.Invitations.Items()
	if b.Email.Sent() == many {
		return nil, false, apierr.Invalid("Request body must have either email or invitations")
	}
	if !many {
		in, err := invitee(b.Email, b.Name, b.Message, "")
		return []enrollment.Invitee{in}, false, err
	}
	if !ok || len(items) < 1 || len(items) > enrollment.MaxInvitations {
		return nil, true, apierr.Invalid("invitations must hold 1 to 50 invitations")
	}
	out := make([]enrollment.Invitee, len(items))
	for i, item := range items {
		prefix := "invitations[" + strconv.Itoa(i) + "]."
		f, _, isObject := item.Fields()
		if !isObject {
			return nil, true, apierr.Invalid(prefix + "email must be an email address")
		}
		in, err := invitee(f.Email, f.Name, f.Message, prefix)
		if err != nil {
			return nil, true, err
		}
		out[i] = in
	}
	return out, true, nil
}

// invitee reads one invitation's members; prefix names the invitation in the messages.
func invitee(email, name, message jsonbody.Value, prefix string) (enrollment.Invitee, error) {
	var r jsonbody.Reader
	var in enrollment.Invitee
	errEmail := apierr.Invalid(prefix + "email must be an email address")
	r.Check(email.Sent(), errEmail)
	in.Email, _ = r.String(email, errEmail, enrollment.ValidEmail)
	in.Name, _ = r.String(name, apierr.Invalid(prefix+"name must be 1 to 200 characters"), jsonbody.NotEmpty)
	in.Message, _ = r.String(message, apierr.Invalid(prefix+"message must be at most 2000 characters"))
	return in, r.Err()
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
	h.mailQueued()
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
