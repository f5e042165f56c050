package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Every answer says not to sniff its type and keeps its path and query from other sites' referrers; every
// HTML page refuses to be framed (a sign-in form in another site's frame is clickjacking), whether it sets
// its own policy (the dashboard, the portal, the reference) or not (the login and issuer pages, the
// mailbox, the front page, errors).
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, path := range []string{"/", "/login?state=stale", "/login/callback?state=stale", "/dev/oidc/authorize", "/dev/mail",
		"/dashboard/x", "/partners/invitations/unknown", "/p/unknown", "/docs", "/healthz", "/api/v1/nothing-here", "/openapi.json"} {
		res := env.Do(http.MethodGet, path, nil)
		h := res.Header
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "strict-origin-when-cross-origin" {
			t.Errorf("GET %s (%d): X-Content-Type-Options %q, Referrer-Policy %q", path, res.Status,
				h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
		if strings.HasPrefix(h.Get("Content-Type"), "text/html") && !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("GET %s (%d): an HTML page with Content-Security-Policy %q", path, res.Status, h.Get("Content-Security-Policy"))
		}
	}
}

// A mistyped address under the pages' paths answers a page a person can read; under the API, JSON.
func TestUnknownAddressesAnswerInTheirKind(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, path := range []string{"/dashboard/x", "/partners/nothing/here", "/login/nope", "/dev/nothing"} {
		res := env.Do(http.MethodGet, path, nil)
		if res.Status != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(res.Body), "Not Found") {
			t.Errorf("GET %s: %d %s %.80s", path, res.Status, res.Header.Get("Content-Type"), res.Body)
		}
	}
	res := env.Do(http.MethodGet, "/api/v1/nothing-here", nil)
	if res.Status != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET /api/v1/nothing-here: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
}

// The identity provider's return address, reached without a sign-in through one (the development issuer
// signs in with the login page's form), says so truthfully. (A dashboard sign-in's refusals link back to
// the dashboard: TestDashboardSignIn.)
func TestLoginCallbackPagesSayWhatHappened(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	res := env.Do(http.MethodGet, "/login/callback?state=stale&code=x", nil)
	page := string(res.Body)
	if res.Status != http.StatusBadRequest || strings.Contains(page, "no OpenID Connect issuer configured") ||
		!strings.Contains(page, "signs in with its own form") {
		t.Errorf("callback without a provider: %d %s", res.Status, page)
	}
}
