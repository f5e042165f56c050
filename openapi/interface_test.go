package openapi_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/openapi"
)

// interfaceRoutes lists every method and path of ../shared/interface.md (CLI paths there are relative to
// /api/v1/cli), plus the management routes the foundation issue adds (the spec describes each).
var interfaceRoutes = []string{
	"POST /api/v1/track/click",
	"POST /api/v1/track/lead",
	"POST /api/v1/track/sale",
	"POST /api/v1/track/refund",
	"GET /api/v1/programs/me/readiness",
	"POST /api/v1/cli/auth/start",
	"POST /api/v1/cli/auth/callback",
	"GET /api/v1/cli/auth/poll",
	"POST /api/v1/cli/init",
	"GET /api/v1/cli/programs",
	"GET /api/v1/cli/status",
	"POST /api/v1/cli/test-event",
	"POST /api/v1/cli/stripe-connect",
	"GET /api/tracking/events/{programId}",
	// Management routes.
	"PATCH /api/v1/programs/{programId}",
	"POST /api/v1/programs/{programId}/partners",
	"POST /api/v1/programs/{programId}/links",
	"PATCH /api/v1/links/{linkId}",
	"POST /api/v1/programs/{programId}/api-key",
	"PUT /api/v1/programs/{programId}/payment-processor",
	"POST /api/v1/workspaces/{advertiserId}/members",
	// Foundation issue: webhook, probes, the spec itself, the tracker script.
	"POST /api/v1/webhooks/stripe/{programId}",
	"GET /healthz",
	"GET /readyz",
	"GET /openapi.yaml",
	"GET /openapi.json",
	"GET /js/svc-tracker.js",
	"GET /js/svc.js",
}

func TestSpecHasEveryInterfaceRoute(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, route := range interfaceRoutes {
		method, path, _ := strings.Cut(route, " ")
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("spec lacks %s", route)
		}
	}
}

// TestRouteListCoversInterfaceDocument reads the interface document, when this checkout sits beside the
// shared folder (as in CI), and checks the table above misses none of its routes.
func TestRouteListCoversInterfaceDocument(t *testing.T) {
	t.Parallel()
	text, err := os.ReadFile("../../shared/interface.md")
	if os.IsNotExist(err) {
		t.Skip("../../shared/interface.md not present")
	}
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range interfaceRoutes {
		listed[r] = true
	}
	re := regexp.MustCompile("(GET|POST|PUT|PATCH|DELETE) (/[A-Za-z0-9_/:.{}-]+)")
	found := 0
	for _, m := range re.FindAllStringSubmatch(string(text), -1) {
		path := m[2]
		if !strings.HasPrefix(path, "/api/") {
			path = "/api/v1/cli" + path
		}
		path = regexp.MustCompile(`:(\w+)`).ReplaceAllString(path, "{$1}")
		route := m[1] + " " + path
		found++
		if !listed[route] {
			t.Errorf("interface.md names %s, missing from interfaceRoutes", route)
		}
	}
	if found < 14 {
		t.Errorf("found only %d routes in interface.md; has its format changed?", found)
	}
}
