package api

import (
	"context"
	"errors"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apierr"
)

// workspaceAccess authenticates the account and returns its role in the workspace.
func (s *Server) workspaceAccess(ctx context.Context, workspaceID int64) (string, error) {
	a, err := s.requireAccount(ctx)
	if err != nil {
		return "", err
	}
	role, err := accounts.WorkspaceRole(ctx, s.deps.DB, a.ID, workspaceID)
	switch {
	case errors.Is(err, accounts.ErrNoWorkspace):
		return "", apierr.NotFound("Workspace not found")
	case errors.Is(err, accounts.ErrNotMember):
		return "", apierr.Forbidden("You are not a member of this workspace")
	}
	return role, err
}

func wireMember(m accounts.Member) gen.Member {
	return gen.Member{AccountId: m.AccountID, Email: m.Email, Role: gen.MemberRole(m.Role), CreatedAt: m.CreatedAt}
}

// ListWorkspaceMembers lists the members and pending invitations (any member).
func (s *Server) ListWorkspaceMembers(ctx context.Context, req gen.ListWorkspaceMembersRequestObject) (gen.ListWorkspaceMembersResponseObject, error) {
	if _, err := s.workspaceAccess(ctx, req.AdvertiserId); err != nil {
		return nil, err
	}
	list, err := accounts.Members(ctx, s.deps.DB, req.AdvertiserId)
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
func (s *Server) AddWorkspaceMember(ctx context.Context, req gen.AddWorkspaceMemberRequestObject) (gen.AddWorkspaceMemberResponseObject, error) {
	role, err := s.workspaceAccess(ctx, req.AdvertiserId)
	if err != nil {
		return nil, err
	}
	if !accounts.Can(role, accounts.ActionMembersWrite) {
		return nil, apierr.Forbidden("Your role (" + role + ") does not allow this (" + accounts.ActionMembersWrite + ")")
	}
	m, err := accounts.Invite(ctx, s.deps.DB, req.AdvertiserId, string(req.Body.Email), string(req.Body.Role), role)
	switch {
	case errors.Is(err, accounts.ErrOwnerGrantOnly):
		return nil, apierr.Forbidden("Only an owner can grant the owner role")
	case errors.Is(err, accounts.ErrAlreadyMember):
		return nil, apierr.Conflict("This email is already a member of the workspace")
	case errors.Is(err, accounts.ErrInvalidRole):
		return nil, apierr.BadRequest("role must be one of: owner, admin, analyst, billing")
	case err != nil:
		return nil, err
	}
	return gen.AddWorkspaceMember201JSONResponse{Body: gen.MemberEnvelope{Data: wireMember(m)}}, nil
}
