package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/logins"
)

// DashboardPage serves the page to a signed-in session, and sends anyone else to sign in.
func (h *Pages) DashboardPage(ctx context.Context, _ gen.DashboardPageRequestObject) (gen.DashboardPageResponseObject, error) {
	token := request.Cookie(ctx, dashboard.SessionCookie)
	a, err := accounts.Authenticate(ctx, h.DB, token)
	if errors.Is(err, accounts.ErrInvalidToken) || errors.Is(err, accounts.ErrSuspended) {
		return gen.DashboardPage302Response{Headers: gen.RedirectResponseHeaders{Location: "/dashboard/login"}}, nil
	}
	if err != nil {
		return nil, err
	}
	b, err := h.Dashboard.Page(a.Email, dashboard.CSRFToken(token))
	if err != nil {
		return nil, err
	}
	return gen.DashboardPage200TexthtmlResponse{DashboardPageTexthtmlResponse: gen.DashboardPageTexthtmlResponse{
		Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: gen.DashboardPageResponseHeaders{CacheControl: "no-store", ContentSecurityPolicy: dashboard.ContentSecurityPolicy},
	}}, nil
}

// DashboardLogin starts a sign-in bound to this browser and sends it to the login page.
func (h *Pages) DashboardLogin(ctx context.Context, _ gen.DashboardLoginRequestObject) (gen.DashboardLoginResponseObject, error) {
	sess, browser, err := logins.StartDashboard(ctx, h.DB, h.Now())
	if err != nil {
		return nil, err
	}
	return gen.DashboardLogin302Response{Headers: gen.DashboardLogin302ResponseHeaders{
		Location:  "/login?state=" + sess.State,
		SetCookie: dashboard.Cookie(dashboard.LoginCookie, browser, h.SecureCookies, logins.SessionTTL),
	}}, nil
}

// finishDashboardLogin turns a signed-in dashboard session into the session cookie, for the browser
// that started it.
func (h *Pages) finishDashboardLogin(ctx context.Context, state string) (loginOutcome, error) {
	tok, err := logins.FinishDashboard(ctx, h.DB, state, request.Cookie(ctx, dashboard.LoginCookie), h.Now())
	switch {
	case errors.Is(err, logins.ErrOtherBrowser), errors.Is(err, logins.ErrSessionNotFound), errors.Is(err, logins.ErrSessionUsed):
		return dashboardLoginRefused(err), nil
	case err != nil:
		return loginOutcome{}, err
	}
	return loginOutcome{status: http.StatusSeeOther, location: "/dashboard",
		cookie: dashboard.Cookie(dashboard.SessionCookie, tok.Plain, h.SecureCookies, logins.DashboardTTL)}, nil
}

// dashboardLoginRefused is the page (400) for a dashboard sign-in that cannot finish in this browser.
func dashboardLoginRefused(err error) loginOutcome {
	msg := retryFor(sessionProblem(err), logins.PurposeDashboard)
	if errors.Is(err, logins.ErrOtherBrowser) {
		msg = "This sign-in was started in another browser. Open the dashboard again to sign in here."
	}
	body, n := pages.Render(pages.Page{Title: "Sign in to reftrack", Error: msg, Link: "/dashboard", LinkText: "Open the dashboard"})
	return loginOutcome{status: http.StatusBadRequest, body: body, n: n}
}

// DashboardLogout revokes the session and clears its cookie; the form must carry the page's CSRF token.
func (h *Pages) DashboardLogout(ctx context.Context, req gen.DashboardLogoutRequestObject) (gen.DashboardLogoutResponseObject, error) {
	token := request.Cookie(ctx, dashboard.SessionCookie)
	var csrf string
	if req.Body != nil {
		csrf = wire.Deref(req.Body.CsrfToken)
	}
	if !dashboard.ValidCSRF(token, csrf) {
		body, n := pages.Render(pages.Page{Title: "Not signed out", Error: "This sign-out did not come from your dashboard page. Open the dashboard and sign out there."})
		return gen.DashboardLogout403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if err := logins.Revoke(ctx, h.DB, token, h.Now()); err != nil {
		return nil, err
	}
	body, n := pages.Render(pages.Page{Title: "You are signed out", Message: "Your dashboard session has ended.", Link: "/dashboard", LinkText: "Sign in again"})
	return gen.DashboardLogout200TexthtmlResponse{Body: body, ContentLength: n,
		Headers: gen.DashboardLogout200ResponseHeaders{SetCookie: dashboard.Cookie(dashboard.SessionCookie, "", h.SecureCookies, -1)}}, nil
}

// Versioned URLs (?v=) change with the files, so browsers may keep them a day.
const dashboardAssetCacheControl = "public, max-age=86400"

// DashboardAsset serves the page's script and style sheet.
func (h *Pages) DashboardAsset(_ context.Context, req gen.DashboardAssetRequestObject) (gen.DashboardAssetResponseObject, error) {
	f, ok := h.Dashboard.Files[req.Asset]
	if !ok {
		return nil, apierr.New(apierr.KindNotFound, "No such file of the dashboard")
	}
	if m := req.Params.IfNoneMatch; m != nil && request.ETagMatches(*m, f.ETag) {
		return gen.DashboardAsset304Response{Headers: gen.DashboardAsset304ResponseHeaders{ETag: f.ETag, CacheControl: dashboardAssetCacheControl}}, nil
	}
	hdr := gen.DashboardAsset200ResponseHeaders{ETag: f.ETag, CacheControl: dashboardAssetCacheControl}
	if req.Asset == "app.css" {
		return gen.DashboardAsset200TextcssResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: hdr}, nil
	}
	return gen.DashboardAsset200TextjavascriptResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: hdr}, nil
}
