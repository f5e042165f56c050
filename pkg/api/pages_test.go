package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/seed"
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

// hostileSegments are path segments that name nothing: NUL characters, invalid UTF-8 (also behind an
// escape the router keeps, %41 or %2F, which the binder undoes), and more than 255 bytes.
var hostileSegments = []string{"%00", "a%00b", "%ff", "%fe%ff", "%c3%28", "%41%00", "a%2Fb%ff", noise(256), noise(3000)}

// Every page with a path parameter (an open program's page, an invitation's, and the forms they post)
// answers a segment that cannot name anything with its 404 page, never a 5xx: signed out or in, before
// anything looks the value up.
func TestPagesAnswerHostileSegmentsWithNotFound(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	token := fuzzPortalSignIn(t, env, seed.PartnerEmail(r.AccountEmail))
	var pages int
	for path, item := range env.Doc.Paths.Map() {
		name, _, ok := strings.Cut(path, "{")
		if !ok {
			continue
		}
		for method, op := range item.Operations() {
			if op.Extensions["x-reftrack-envelope"] != "page" {
				continue
			}
			pages++
			for _, seg := range hostileSegments {
				for _, creds := range [][]string{nil, {"Cookie", partnerCookie + "=" + token}} {
					var body any
					headers := creds
					if method == http.MethodPost {
						body = "csrf_token=" + dashboard.CSRFToken(token)
						headers = append([]string{"Content-Type", "application/x-www-form-urlencoded"}, creds...)
					}
					res := env.Do(method, name+seg, body, headers...)
					if res.Status != http.StatusNotFound || !page(res) || !strings.Contains(string(res.Body), "Nothing is at this address.") {
						t.Errorf("%s %s (signed in %t): %d %s %.200s", method, truncate(name+seg, 60), creds != nil, res.Status,
							res.Header.Get("Content-Type"), res.Body)
					}
				}
			}
		}
	}
	if pages < 4 {
		t.Errorf("%d pages with a path parameter, want at least the program's and the invitation's GET and POST", pages)
	}
}
