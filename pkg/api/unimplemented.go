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

func (s *Server) ListTrackingEvents(context.Context, gen.ListTrackingEventsRequestObject) (gen.ListTrackingEventsResponseObject, error) {
	return nil, notImplemented("GET /api/tracking/events/{programId}")
}
