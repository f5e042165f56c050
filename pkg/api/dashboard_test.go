package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// browserLike is a client with its own cookie jar that does not follow redirects, like a browser tab
// the test steps through.
type browserLike struct {
	t   *testing.T
	env *apitest.Env
	c   *http.Client
}

func newBrowserLike(t *testing.T, env *apitest.Env) *browserLike {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browserLike{t: t, env: env, c: &http.Client{Jar: jar, Transport: env.Client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browserLike) get(path string) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.Get(b.env.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	return res, readAll(b.t, res)
}

func (b *browserLike) post(path string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	res, err := b.c.PostForm(b.env.URL+path, form)
	if err != nil {
		b.t.Fatal(err)
	}
	return res, readAll(b.t, res)
}

// cookie is the jar's value of a cookie ("" without it).
func (b *browserLike) cookie(name string) string {
	u, _ := url.Parse(b.env.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// startDashboardLogin opens /dashboard/login and returns the login session's state.
func (b *browserLike) startDashboardLogin() string {
	b.t.Helper()
	res, _ := b.get("/dashboard/login")
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || loc.Path != "/login" || loc.Query().Get("state") == "" {
		b.t.Fatalf("dashboard login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	return loc.Query().Get("state")
}

// signIn signs the browser in to the dashboard as email and returns the page's CSRF token.
func (b *browserLike) signIn(email string) string {
	b.t.Helper()
	state := b.startDashboardLogin()
	res, body := b.post("/login", url.Values{"state": {state}, "email": {email}, "name": {"Dana"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		b.t.Fatalf("sign in: %d %s %s", res.StatusCode, res.Header, body)
	}
	res, page := b.get("/dashboard")
	if res.StatusCode != http.StatusOK {
		b.t.Fatalf("dashboard: %d %s", res.StatusCode, page)
	}
	m := regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]+)">`).FindStringSubmatch(page)
	if m == nil {
		b.t.Fatalf("no CSRF token in the page: %s", page)
	}
	return m[1]
}

// The dashboard signs in through the same login page as the CLI and ends with an HttpOnly, SameSite=Lax
// session cookie; the page carries the session's CSRF token.
func TestDashboardSignIn(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	b := newBrowserLike(t, env)
	if res, _ := b.get("/dashboard"); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/dashboard/login" {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ := b.get("/dashboard/login")
	set := res.Header.Get("Set-Cookie")
	if !strings.HasPrefix(set, "reftrack_login=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") ||
		!strings.Contains(set, "Max-Age=300") || strings.Contains(set, "Secure") {
		t.Errorf("login cookie: %s", set)
	}
	state := regexp.MustCompile(`state=(\w+)`).FindStringSubmatch(res.Header.Get("Location"))[1]
	if _, page := b.get("/login?state=" + state); !strings.Contains(page, `<form method="post" action="/login">`) {
		t.Fatalf("login page: %s", page)
	}
	res, _ = b.post("/login", url.Values{"state": {state}, "email": {r.AccountEmail}})
	set = res.Header.Get("Set-Cookie")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" || !strings.HasPrefix(set, "reftrack_session=rtu_") ||
		!strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") || !strings.Contains(set, "Max-Age=604800") || strings.Contains(set, "Secure") {
		t.Fatalf("signed in: %d %s", res.StatusCode, res.Header)
	}
	session := b.cookie(dashboard.SessionCookie)
	if n := env.Count(`SELECT count(*) FROM login_tokens t JOIN accounts a ON a.id = t.account_id
		WHERE t.kind = 'dashboard' AND a.email = $1 AND t.expires_at BETWEEN now() + interval '6 days' AND now() + interval '8 days'`, r.AccountEmail); n != 1 {
		t.Errorf("%d dashboard tokens of 7 days", n)
	}
	res, page := b.get("/dashboard")
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy ||
		!strings.Contains(page, r.AccountEmail) || !strings.Contains(page, `content="`+dashboard.CSRFToken(session)+`"`) {
		t.Fatalf("dashboard: %d %v %s", res.StatusCode, res.Header, page)
	}
	// The session is the dashboard's: the CLI cannot poll it, and it cannot be signed in twice.
	platformError(t, env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+state, nil), 404, "NotFoundError", "Session not found")
	if res, page := b.post("/login", url.Values{"state": {state}, "email": {r.AccountEmail}}); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(page, "Open the dashboard again.") || !strings.Contains(page, `href="/dashboard"`) {
		t.Errorf("replay: %d %s", res.StatusCode, page)
	}
	// An expired dashboard sign-in says to open the dashboard again (not to run the CLI).
	expired := b.startDashboardLogin()
	if _, err := env.DB.Exec(`UPDATE login_sessions SET expires_at = now() - interval '1 second' WHERE state = $1`, expired); err != nil {
		t.Fatal(err)
	}
	if res, page := b.get("/login?state=" + expired); res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "has expired") ||
		!strings.Contains(page, "Open the dashboard again.") || !strings.Contains(page, `href="/dashboard"`) {
		t.Errorf("expired: %d %s", res.StatusCode, page)
	}
	// The page's script and style sheet, with their ETags.
	for _, asset := range []string{"app.js", "app.css"} {
		res, body := b.get("/dashboard/assets/" + asset)
		etag := res.Header.Get("ETag")
		if res.StatusCode != http.StatusOK || etag == "" || len(body) < 1000 {
			t.Fatalf("%s: %d %v", asset, res.StatusCode, res.Header)
		}
		req, _ := http.NewRequest(http.MethodGet, env.URL+"/dashboard/assets/"+asset, nil)
		req.Header.Set("If-None-Match", etag)
		if res := env.Send(req); res.Status != http.StatusNotModified {
			t.Errorf("%s revalidated: %d", asset, res.Status)
		}
	}
	platformError(t, env.Do(http.MethodGet, "/dashboard/assets/page.html", nil), 404, "NotFoundError", "No such file of the dashboard")
}

// A dashboard sign-in finishes only in the browser that started it: a login link forwarded to someone
// else cannot sign their browser in to the sender's account, nor be completed through the API.
func TestDashboardSignInBoundToBrowser(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	starter := newBrowserLike(t, env)
	state := starter.startDashboardLogin()
	other := newBrowserLike(t, env)
	res, page := other.post("/login", url.Values{"state": {state}, "email": {"mallory@example.com"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(page, "This sign-in was started in another browser.") || other.cookie(dashboard.SessionCookie) != "" {
		t.Fatalf("other browser: %d %s", res.StatusCode, page)
	}
	platformError(t, env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": state, "id_token": devIDToken(t, env, "mallory@example.com")}),
		404, "NotFoundError", "Session not found or already used")
	if n := env.Count(`SELECT count(*) FROM login_sessions WHERE state = $1 AND status = 'pending'`, state); n != 1 {
		t.Fatal("the refused attempts changed the session")
	}
	if n := env.Count(`SELECT count(*) FROM accounts WHERE email = 'mallory@example.com'`); n != 0 {
		t.Error("the refused attempts created an account")
	}
	res, _ = starter.post("/login", url.Values{"state": {state}, "email": {r.AccountEmail}})
	if res.StatusCode != http.StatusSeeOther || starter.cookie(dashboard.SessionCookie) == "" {
		t.Fatalf("starter: %d %v", res.StatusCode, res.Header)
	}
}

// With a configured issuer the dashboard sign-in runs the code flow and the callback sets the cookie.
func TestDashboardSignInCodeFlow(t *testing.T) {
	t.Parallel()
	issuerEnv := apitest.New(t)
	env := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.OIDCIssuer = issuerEnv.URL + "/dev/oidc" }})
	b := newBrowserLike(t, env)
	state := b.startDashboardLogin()
	res, _ := b.get("/login?state=" + state)
	authorize := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound || !strings.HasPrefix(authorize, issuerEnv.URL+"/dev/oidc/authorize?") {
		t.Fatalf("login page: %d %s", res.StatusCode, authorize)
	}
	issuer := newBrowserLike(t, issuerEnv)
	res, err := issuer.c.Get(authorize)
	if err != nil {
		t.Fatal(err)
	}
	fields := url.Values{"email": {"flow@example.com"}}
	for _, m := range regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`).FindAllStringSubmatch(readAll(t, res), -1) {
		fields.Set(m[1], strings.ReplaceAll(m[2], "&amp;", "&"))
	}
	res, _ = issuer.post("/dev/oidc/authorize", fields)
	back := res.Header.Get("Location")
	if !strings.HasPrefix(back, env.URL+"/login/callback?") {
		t.Fatalf("issuer redirect: %d %s", res.StatusCode, back)
	}
	res, _ = b.get(strings.TrimPrefix(back, env.URL))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" || b.cookie(dashboard.SessionCookie) == "" {
		t.Fatalf("callback: %d %v", res.StatusCode, res.Header)
	}
	if res, page := b.get("/dashboard"); res.StatusCode != http.StatusOK || !strings.Contains(page, "flow@example.com") {
		t.Errorf("dashboard: %d", res.StatusCode)
	}
}

// Served over https, the dashboard's cookies are Secure.
func TestDashboardCookiesSecureOnHTTPS(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.BaseURL = "https://track.example.com" }})
	b := newBrowserLike(t, env)
	res, _ := b.get("/dashboard/login")
	if set := res.Header.Get("Set-Cookie"); !strings.Contains(set, "; Secure") || !strings.Contains(set, "HttpOnly") {
		t.Errorf("login cookie over https: %s", set)
	}
}

// A change authenticated by the session cookie needs the page's CSRF token; a Bearer token does not.
// Without the token nothing changes.
func TestDashboardCSRF(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	b := newBrowserLike(t, env)
	csrf := b.signIn(r.AccountEmail)
	session := "reftrack_session=" + b.cookie(dashboard.SessionCookie)
	link := "/api/v1/links/" + itoa(r.LinkID)
	off := map[string]any{"enabled": false}
	const msg = "Missing or invalid CSRF token — reload the dashboard"
	platformError(t, env.Do(http.MethodPatch, link, off, "Cookie", session), 403, "ForbiddenError", msg)
	platformError(t, env.Do(http.MethodPatch, link, off, "Cookie", session, "X-CSRF-Token", dashboard.CSRFToken("rtu_other")), 403, "ForbiddenError", msg)
	platformError(t, env.Do(http.MethodPost, "/api/v1/programs/"+itoa(r.ProgramID)+"/api-key", nil, "Cookie", session), 403, "ForbiddenError", msg)
	if n := env.Count(`SELECT count(*) FROM referral_links WHERE id = $1 AND enabled`, r.LinkID); n != 1 {
		t.Fatal("a refused change switched the link off")
	}
	if res := env.Do(http.MethodGet, "/api/v1/programs/"+itoa(r.ProgramID)+"/api-key", nil, "Cookie", session, "X-CSRF-Token", csrf); res.Status != http.StatusOK {
		t.Fatalf("the key was regenerated or is unreadable: %d", res.Status)
	}
	if res := env.Do(http.MethodPatch, link, off, "Cookie", session, "X-CSRF-Token", csrf); res.Status != http.StatusOK || res.JSON(t)["data"].(map[string]any)["enabled"] != false {
		t.Fatalf("with the token: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodPatch, link, map[string]any{"enabled": true}, apitest.Bearer(r.AccountToken)...); res.Status != http.StatusOK {
		t.Fatalf("Bearer: %d %s", res.Status, res.Body)
	}
	// Reads need no token.
	if res := env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", session); res.Status != http.StatusOK {
		t.Fatalf("me: %d", res.Status)
	}

	// Sign-out: refused without the token (the session lives on), then done with it.
	if res, page := b.post("/dashboard/logout", url.Values{}); res.StatusCode != http.StatusForbidden || !strings.Contains(page, "did not come from your dashboard page") {
		t.Fatalf("logout without token: %d %s", res.StatusCode, page)
	}
	if res := env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", session); res.Status != http.StatusOK {
		t.Fatalf("a refused sign-out ended the session: %d", res.Status)
	}
	res, page := b.post("/dashboard/logout", url.Values{"csrf_token": {csrf}})
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "You are signed out") || !strings.Contains(res.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %v %s", res.StatusCode, res.Header, page)
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", session), 401, "UnauthorizedError", "Invalid or expired token — run the login command again")
	if res, _ := b.get("/dashboard"); res.StatusCode != http.StatusFound {
		t.Errorf("after sign-out the page answers %d", res.StatusCode)
	}
}

// A session is authenticated before its CSRF token is checked: on every change (and read) of the
// dashboard's routes and the partner portal's, a missing, invalid or expired session answers 401 in the
// route's envelope, whatever the method; a valid session without the page's token answers 403, and
// nothing changes.
func TestSessionCheckedBeforeCSRF(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{LimitStore: unlimited{}})
	r := env.Seed(seed.Options{})
	b := newBrowserLike(t, env)
	b.signIn(r.AccountEmail)
	dashboardSession := b.cookie(dashboard.SessionCookie)
	partnerSession := fuzzPortalSignIn(t, env, seed.PartnerEmail(r.AccountEmail))
	// What the routes below could change, to show that refused requests change none of it.
	state := func() string {
		var s string
		if err := env.DB.Get(&s, `SELECT concat_ws(' ', (SELECT count(*) FROM audit_log), (SELECT count(*) FROM referral_links),
			(SELECT count(*) FROM referral_links WHERE enabled), (SELECT count(*) FROM webhook_endpoints), (SELECT count(*) FROM partners),
			(SELECT string_agg(status, ',' ORDER BY partner_id) FROM partner_programs), (SELECT count(*) FROM api_keys),
			(SELECT count(*) FROM payouts), (SELECT count(*) FROM partner_invitations), (SELECT count(*) FROM programs),
			(SELECT max(updated_at) FROM programs))`); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := state()
	kinds := []struct {
		auth, cookie, valid, invalid, expire string
		noSession, badSession, noToken       string
	}{
		{"account-or-session", dashboard.SessionCookie, dashboardSession, "rtu_" + strings.Repeat("x", 40),
			`UPDATE login_tokens SET expires_at = now() - interval '1 second' WHERE kind = 'dashboard'`,
			"Authentication required — run reftrack login first", "Invalid or expired token — run the login command again",
			"Missing or invalid CSRF token — reload the dashboard"},
		{"partner-session", partnerCookie, partnerSession, strings.Repeat("x", 43),
			`UPDATE partner_sessions SET expires_at = now() - interval '1 second'`,
			"Sign in to the partner portal first: open /partners", "Sign in to the partner portal first: open /partners",
			"Missing or invalid CSRF token — reload the page"},
	}
	ids := strings.NewReplacer("{programId}", itoa(r.ProgramID), "{linkId}", itoa(r.LinkID), "{advertiserId}", itoa(r.AdvertiserID),
		"{partnerId}", itoa(r.PartnerID))
	type call struct{ method, path, body string }
	for _, k := range kinds {
		var calls []call
		for path, item := range env.Doc.Paths.Map() {
			for method, op := range item.Operations() {
				if op.Extensions["x-reftrack-auth"] != k.auth {
					continue
				}
				c := call{method: method, path: regexp.MustCompile(`\{[A-Za-z]+\}`).ReplaceAllString(ids.Replace(path), "1")}
				if rb := op.RequestBody; rb != nil && rb.Value.Content.Get("application/json") != nil {
					// The spec's example: a body the contract accepts, so that the request reaches authentication.
					media := rb.Value.Content.Get("application/json")
					ex := media.Example
					for _, named := range media.Examples {
						if ex == nil {
							ex = named.Value.Value
						}
					}
					enc, err := json.Marshal(ex)
					if err != nil || ex == nil {
						t.Fatalf("%s %s: no example body", method, path)
					}
					c.body = string(enc)
				}
				calls = append(calls, c)
			}
		}
		send := func(c call, cookie string) *apitest.Response {
			var body any
			if c.body != "" {
				body = c.body
			}
			var headers []string
			if cookie != "" {
				headers = []string{"Cookie", k.cookie + "=" + cookie}
			}
			return env.Do(c.method, c.path, body, headers...)
		}
		writes := 0
		for _, c := range calls {
			if c.method == http.MethodGet {
				continue
			}
			writes++
			// A valid session without the page's token: 403, before anything changes.
			if res := send(c, k.valid); res.Status != http.StatusForbidden || !errorSays(t, res, k.noToken) {
				t.Errorf("%s %s, valid session without CSRF token: %d %s", c.method, c.path, res.Status, res.Body)
			}
		}
		if writes < 2 {
			t.Fatalf("%s: %d write routes", k.auth, writes)
		}
		if _, err := env.DB.Exec(k.expire); err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			for _, s := range []struct{ name, cookie, message string }{
				{"no session", "", k.noSession}, {"invalid session", k.invalid, k.badSession}, {"expired session", k.valid, k.badSession},
			} {
				if res := send(c, s.cookie); res.Status != http.StatusUnauthorized || !errorSays(t, res, s.message) {
					t.Errorf("%s %s, %s: %d %s", c.method, c.path, s.name, res.Status, res.Body)
				}
			}
		}
	}
	if after := state(); after != before {
		t.Errorf("refused requests changed the database: %s, was %s", after, before)
	}
}

// errorSays reports whether res is an error whose error.message is message (in either envelope).
func errorSays(t *testing.T, res *apitest.Response, message string) bool {
	t.Helper()
	e, _ := res.JSON(t)["error"].(map[string]any)
	return e["message"] == message
}

// /api/v1/me lists the account's workspaces with the role's actions, and their programs.
func TestMe(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{ProgramName: "Shoes"})
	token := member(t, env, r.AdvertiserID, "analyst")
	res := env.Do(http.MethodGet, "/api/v1/me", nil, apitest.Bearer(token)...)
	var me struct {
		Data struct {
			Account    struct{ Email string }
			Workspaces []struct {
				AdvertiserID int64 `json:"advertiser_id"`
				Role         string
				Actions      []string
			}
			Programs []struct {
				ID           int64
				Name         string
				AdvertiserID int64 `json:"advertiser_id"`
			}
		}
	}
	res.Decode(t, &me)
	ws, progs := me.Data.Workspaces, me.Data.Programs
	if !strings.HasPrefix(me.Data.Account.Email, "analyst-") || len(ws) != 1 || ws[0].AdvertiserID != r.AdvertiserID || ws[0].Role != "analyst" ||
		strings.Join(ws[0].Actions, ",") != "commissions:read,program:read,tracking:list" {
		t.Errorf("me = %+v", me.Data)
	}
	if len(progs) != 1 || progs[0].ID != r.ProgramID || progs[0].Name != "Shoes" || progs[0].AdvertiserID != r.AdvertiserID {
		t.Errorf("programs = %+v", progs)
	}
	platformError(t, env.Do(http.MethodGet, "/api/v1/me", nil), 401, "UnauthorizedError", "Authentication required — run reftrack login first")
}

// The chart's counts per day: real events by default, the test chain's with test=true, every day present.
func TestDailyEventCounts(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	auth := apitest.Bearer(r.AccountToken)
	click(t, env, r)
	if res := env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"type": "chain"}, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("chain: %d %s", res.Status, res.Body)
	}
	base := "/api/tracking/events/" + itoa(r.ProgramID) + "/daily"
	today := time.Now().UTC().Format("2006-01-02")
	type day struct {
		Date                       string
		Clicks, Leads, Conversions int64
	}
	var got struct {
		Data []day
		Meta struct {
			DateFrom string `json:"dateFrom"`
			DateTo   string `json:"dateTo"`
			Test     bool
		}
	}
	env.Do(http.MethodGet, base, nil, auth...).Decode(t, &got)
	if len(got.Data) != 30 || got.Meta.DateTo != today || got.Data[29] != (day{today, 1, 0, 0}) || got.Meta.Test {
		t.Fatalf("real: %+v", got)
	}
	env.Do(http.MethodGet, base+"?test=true&dateFrom="+today+"&dateTo="+today, nil, auth...).Decode(t, &got)
	if len(got.Data) != 1 || got.Data[0] != (day{today, 1, 1, 1}) || !got.Meta.Test {
		t.Fatalf("test: %+v", got)
	}
	platformError(t, env.Do(http.MethodGet, base+"?dateFrom=2026-02-02&dateTo=2026-02-01", nil, auth...), 400, "BadRequestError", "dateFrom must not be after dateTo")
	platformError(t, env.Do(http.MethodGet, base+"?dateFrom=2025-01-01&dateTo=2026-01-02", nil, auth...), 400, "BadRequestError", "The span from dateFrom to dateTo is limited to 366 days")
	if res := env.Do(http.MethodGet, base+"?dateFrom=2025-01-01&dateTo=2026-01-01", nil, auth...); res.Status != http.StatusOK || len(res.JSON(t)["data"].([]any)) != 366 {
		t.Errorf("366 days: %d", res.Status)
	}
	platformError(t, env.Do(http.MethodGet, base+"?dateFrom=yesterday", nil, auth...), 400, "BadRequestError",
		"Invalid query parameter dateFrom: must be a date in the form YYYY-MM-DD, such as 2026-01-31")
	// The events list's test-data view shows the chain's three events, newest first.
	res := env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID)+"?test=true", nil, auth...)
	var list struct {
		Data []struct {
			EventType string `json:"event_type"`
		}
		Meta struct{ Pagination struct{ Total int } }
	}
	res.Decode(t, &list)
	if list.Meta.Pagination.Total != 3 || len(list.Data) != 3 || list.Data[0].EventType != "conversion" || list.Data[2].EventType != "click" {
		t.Errorf("test events: %s", res.Body)
	}
	res = env.Do(http.MethodGet, "/api/tracking/events/"+itoa(r.ProgramID), nil, auth...)
	res.Decode(t, &list)
	if list.Meta.Pagination.Total != 1 || list.Data[0].EventType != "click" {
		t.Errorf("real events: %s", res.Body)
	}
}
