package api

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/programs"
)

// errCSRF answers a cookie-authenticated change without the page's CSRF token.
var errCSRF = apierr.Forbidden("Missing or invalid CSRF token — reload the dashboard")

// secureCookies is whether the dashboard's cookies get Secure: the server is reached over https.
func (s *Server) secureCookies() bool {
	return strings.HasPrefix(strings.ToLower(s.deps.Config.BaseURL), "https://")
}

// cookie is the request's value of a cookie ("" without one).
func cookie(ctx context.Context, name string) string {
	if c, err := (&http.Request{Header: metaFrom(ctx).header}).Cookie(name); err == nil {
		return c.Value
	}
	return ""
}

// safeMethod reports whether a method only reads (no CSRF token needed).
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// DashboardPage serves the page to a signed-in session, and sends anyone else to sign in.
func (s *Server) DashboardPage(ctx context.Context, _ gen.DashboardPageRequestObject) (gen.DashboardPageResponseObject, error) {
	token := cookie(ctx, dashboard.SessionCookie)
	a, err := accounts.Authenticate(ctx, s.deps.DB, token)
	if errors.Is(err, accounts.ErrInvalidToken) || errors.Is(err, accounts.ErrSuspended) {
		return gen.DashboardPage302Response{Headers: gen.RedirectResponseHeaders{Location: "/dashboard/login"}}, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := s.dashboard.Page(a.Email, dashboard.CSRFToken(token))
	if err != nil {
		return nil, err
	}
	return gen.DashboardPage200TexthtmlResponse{DashboardPageTexthtmlResponse: gen.DashboardPageTexthtmlResponse{
		Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: gen.DashboardPageResponseHeaders{CacheControl: "no-store", ContentSecurityPolicy: dashboard.ContentSecurityPolicy},
	}}, nil
}

// DashboardLogin starts a sign-in bound to this browser and sends it to the login page.
func (s *Server) DashboardLogin(ctx context.Context, _ gen.DashboardLoginRequestObject) (gen.DashboardLoginResponseObject, error) {
	sess, browser, err := logins.StartDashboard(ctx, s.deps.DB, s.now())
	if err != nil {
		return nil, err
	}
	return gen.DashboardLogin302Response{Headers: gen.DashboardLogin302ResponseHeaders{
		Location:  "/login?state=" + sess.State,
		SetCookie: dashboard.Cookie(dashboard.LoginCookie, browser, s.secureCookies(), logins.SessionTTL),
	}}, nil
}

// finishDashboardLogin turns a signed-in dashboard session into the session cookie, for the browser
// that started it.
func (s *Server) finishDashboardLogin(ctx context.Context, state string) (loginOutcome, error) {
	tok, err := logins.FinishDashboard(ctx, s.deps.DB, state, cookie(ctx, dashboard.LoginCookie), s.now())
	switch {
	case errors.Is(err, logins.ErrOtherBrowser), errors.Is(err, logins.ErrSessionNotFound), errors.Is(err, logins.ErrSessionUsed):
		return dashboardLoginRefused(err), nil
	case err != nil:
		return loginOutcome{}, err
	}
	return loginOutcome{status: http.StatusSeeOther, location: "/dashboard",
		cookie: dashboard.Cookie(dashboard.SessionCookie, tok.Plain, s.secureCookies(), logins.DashboardTTL)}, nil
}

// dashboardLoginRefused is the page (400) for a dashboard sign-in that cannot finish in this browser.
func dashboardLoginRefused(err error) loginOutcome {
	msg := retryFor(sessionProblem(err), true)
	if errors.Is(err, logins.ErrOtherBrowser) {
		msg = "This sign-in was started in another browser. Open the dashboard again to sign in here."
	}
	body, n := render(page{Title: "Sign in to reftrack", Error: msg})
	return loginOutcome{status: http.StatusBadRequest, body: body, n: n}
}

// DashboardLogout revokes the session and clears its cookie; the form must carry the page's CSRF token.
func (s *Server) DashboardLogout(ctx context.Context, req gen.DashboardLogoutRequestObject) (gen.DashboardLogoutResponseObject, error) {
	token := cookie(ctx, dashboard.SessionCookie)
	var csrf string
	if req.Body != nil {
		csrf = deref(req.Body.CsrfToken)
	}
	if !dashboard.ValidCSRF(token, csrf) {
		body, n := render(page{Title: "Not signed out", Error: "This sign-out did not come from your dashboard page. Open the dashboard and sign out there."})
		return gen.DashboardLogout403TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if err := logins.Revoke(ctx, s.deps.DB, token, s.now()); err != nil {
		return nil, err
	}
	body, n := render(page{Title: "You are signed out", Message: "Your dashboard session has ended.", Link: "/dashboard", LinkText: "Sign in again"})
	return gen.DashboardLogout200TexthtmlResponse{Body: body, ContentLength: n,
		Headers: gen.DashboardLogout200ResponseHeaders{SetCookie: dashboard.Cookie(dashboard.SessionCookie, "", s.secureCookies(), -1)}}, nil
}

// Versioned URLs (?v=) change with the files, so browsers may keep them a day.
const dashboardAssetCacheControl = "public, max-age=86400"

// DashboardAsset serves the page's script and style sheet.
func (s *Server) DashboardAsset(_ context.Context, req gen.DashboardAssetRequestObject) (gen.DashboardAssetResponseObject, error) {
	f, ok := s.dashboard.Files[req.Asset]
	if !ok {
		return nil, apierr.NotFound("No such file of the dashboard")
	}
	if m := req.Params.IfNoneMatch; m != nil && etagMatches(*m, f.ETag) {
		return gen.DashboardAsset304Response{Headers: gen.DashboardAsset304ResponseHeaders{ETag: f.ETag, CacheControl: dashboardAssetCacheControl}}, nil
	}
	h := gen.DashboardAsset200ResponseHeaders{ETag: f.ETag, CacheControl: dashboardAssetCacheControl}
	if req.Asset == "app.css" {
		return gen.DashboardAsset200TextcssResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: h}, nil
	}
	return gen.DashboardAsset200TextjavascriptResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: h}, nil
}

// GetMe answers the account, its workspaces (role and allowed actions) and their programs.
func (s *Server) GetMe(ctx context.Context, _ gen.GetMeRequestObject) (gen.GetMeResponseObject, error) {
	a, err := s.requireAccount(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := accounts.Workspaces(ctx, s.deps.DB, a.ID)
	if err != nil {
		return nil, err
	}
	var out gen.MeEnvelope
	out.Data.Account.Id, out.Data.Account.Email = a.ID, a.Email
	out.Data.Workspaces = make([]struct {
		Actions      []string       `json:"actions"`
		AdvertiserId int64          `json:"advertiser_id"`
		Name         string         `json:"name"`
		Role         gen.MemberRole `json:"role"`
	}, len(ws))
	for i, w := range ws {
		d := &out.Data.Workspaces[i]
		d.AdvertiserId, d.Name, d.Role, d.Actions = w.ID, w.Name, gen.MemberRole(w.Role), accounts.Actions(w.Role)
	}
	progs, err := programs.OfAccount(ctx, s.deps.DB, a.ID)
	if err != nil {
		return nil, err
	}
	out.Data.Programs = make([]struct {
		AdvertiserId int64  `json:"advertiser_id"`
		Domain       string `json:"domain"`
		Id           int64  `json:"id"`
		Name         string `json:"name"`
		Status       string `json:"status"`
	}, len(progs))
	for i, p := range progs {
		d := &out.Data.Programs[i]
		d.Id, d.Name, d.Domain, d.Status, d.AdvertiserId = p.ID, p.Name, p.Domain, p.Status, p.WorkspaceID
	}
	return gen.GetMe200JSONResponse{Body: out}, nil
}

// GetProgramReadiness answers the readiness checks to any member of the program's workspace.
func (s *Server) GetProgramReadiness(ctx context.Context, req gen.GetProgramReadinessRequestObject) (gen.GetProgramReadinessResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionProgramRead); err != nil {
		return nil, err
	}
	r, err := s.readiness(ctx, req.ProgramId)
	if err != nil {
		return nil, err
	}
	return gen.GetProgramReadiness200JSONResponse{Body: r}, nil
}

// ListDailyEventCounts counts the program's events per UTC day for the dashboard's chart.
func (s *Server) ListDailyEventCounts(ctx context.Context, req gen.ListDailyEventCountsRequestObject) (gen.ListDailyEventCountsResponseObject, error) {
	if _, _, err := s.programAccess(ctx, req.ProgramId, accounts.ActionTrackingList); err != nil {
		return nil, err
	}
	p := req.Params
	to := s.now().UTC().Truncate(24 * time.Hour)
	if p.DateTo != nil {
		to = p.DateTo.Time
	}
	from := to.AddDate(0, 0, -29)
	if p.DateFrom != nil {
		from = p.DateFrom.Time
	}
	switch {
	case from.After(to):
		return nil, apierr.BadRequest("dateFrom must not be after dateTo")
	case to.Sub(from) >= events.MaxDays*24*time.Hour:
		return nil, apierr.BadRequest("The span from dateFrom to dateTo is limited to 366 days")
	}
	test := p.Test != nil && *p.Test
	days, err := events.Daily(ctx, s.deps.DB, req.ProgramId, test, from, to)
	if err != nil {
		return nil, err
	}
	out := gen.DailyEventCountsResponse{Data: make([]gen.DailyEventCount, len(days))}
	for i, d := range days {
		out.Data[i] = gen.DailyEventCount{Clicks: d.Clicks, Leads: d.Leads, Conversions: d.Conversions}
		out.Data[i].Date.Time = d.Date
	}
	out.Meta.DateFrom.Time, out.Meta.DateTo.Time, out.Meta.Test = from, to, test
	return gen.ListDailyEventCounts200JSONResponse{Body: out}, nil
}
