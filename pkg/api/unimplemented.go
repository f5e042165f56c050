package api

// Operations whose issue has not landed yet. Each answers 501 in the platform envelope; an issue that
// implements one moves it to its resource's file.

import (
	"context"
	"net/http"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
)

func notImplemented(route string) error {
	return apierr.New(http.StatusNotImplemented, route+" is not implemented in this build yet")
}

func (s *Server) CliAuthStart(context.Context, gen.CliAuthStartRequestObject) (gen.CliAuthStartResponseObject, error) {
	return nil, notImplemented("POST /api/v1/cli/auth/start")
}

func (s *Server) CliAuthCallback(context.Context, gen.CliAuthCallbackRequestObject) (gen.CliAuthCallbackResponseObject, error) {
	return nil, notImplemented("POST /api/v1/cli/auth/callback")
}

func (s *Server) CliAuthPoll(context.Context, gen.CliAuthPollRequestObject) (gen.CliAuthPollResponseObject, error) {
	return nil, notImplemented("GET /api/v1/cli/auth/poll")
}

func (s *Server) CliInit(context.Context, gen.CliInitRequestObject) (gen.CliInitResponseObject, error) {
	return nil, notImplemented("POST /api/v1/cli/init")
}

func (s *Server) CliListPrograms(context.Context, gen.CliListProgramsRequestObject) (gen.CliListProgramsResponseObject, error) {
	return nil, notImplemented("GET /api/v1/cli/programs")
}

func (s *Server) CliStatus(context.Context, gen.CliStatusRequestObject) (gen.CliStatusResponseObject, error) {
	return nil, notImplemented("GET /api/v1/cli/status")
}

func (s *Server) CliTestEvent(context.Context, gen.CliTestEventRequestObject) (gen.CliTestEventResponseObject, error) {
	return nil, notImplemented("POST /api/v1/cli/test-event")
}

func (s *Server) ListTrackingEvents(context.Context, gen.ListTrackingEventsRequestObject) (gen.ListTrackingEventsResponseObject, error) {
	return nil, notImplemented("GET /api/tracking/events/{programId}")
}

func (s *Server) ListWorkspaceMembers(context.Context, gen.ListWorkspaceMembersRequestObject) (gen.ListWorkspaceMembersResponseObject, error) {
	return nil, notImplemented("GET /api/v1/workspaces/{advertiserId}/members")
}

func (s *Server) AddWorkspaceMember(context.Context, gen.AddWorkspaceMemberRequestObject) (gen.AddWorkspaceMemberResponseObject, error) {
	return nil, notImplemented("POST /api/v1/workspaces/{advertiserId}/members")
}
