package manage

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
)

// workspaceRole is the signed-in account's role in the workspace.
func (h *Management) workspaceRole(ctx context.Context, workspaceID int64) (string, error) {
	a, err := auth.SignedIn(ctx)
	if err != nil {
		return "", err
	}
	return accounts.WorkspaceRole(ctx, h.DB, a.ID, workspaceID)
}

func wireMember(m accounts.Member) gen.Member {
	return gen.Member{AccountId: m.AccountID, Email: m.Email, Role: gen.MemberRole(m.Role), CreatedAt: m.CreatedAt}
}

// ListWorkspaceMembers lists the members and pending invitations (any member).
func (h *Management) ListWorkspaceMembers(ctx context.Context, req gen.ListWorkspaceMembersRequestObject) (gen.ListWorkspaceMembersResponseObject, error) {
	if _, err := h.workspaceRole(ctx, req.AdvertiserId); err != nil {
		return nil, err
	}
	list, err := accounts.Members(ctx, h.DB, req.AdvertiserId)
	if err != nil {
		return nil, err
	}
	out := gen.MemberListEnvelope{Data: make([]gen.Member, len(list))}
	for i, m := range list {
		out.Data[i] = wireMember(m)
	}
	return gen.ListWorkspaceMembers200JSONResponse{Body: out}, nil
}

// AddWorkspaceMember invites an email with a role (owner or admin; only an owner grants owner).
func (h *Management) AddWorkspaceMember(ctx context.Context, req gen.AddWorkspaceMemberRequestObject) (gen.AddWorkspaceMemberResponseObject, error) {
	role, err := h.workspaceRole(ctx, req.AdvertiserId)
	if err != nil {
		return nil, err
	}
	if err := accounts.Authorize(role, accounts.ActionMembersWrite); err != nil {
		return nil, err
	}
	m, err := accounts.Invite(ctx, h.DB, req.AdvertiserId, string(req.Body.Email), string(req.Body.Role), role)
	if err != nil {
		return nil, err
	}
	return gen.AddWorkspaceMember201JSONResponse{Body: gen.MemberEnvelope{Data: wireMember(m)}}, nil
}
