package portal

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/enrollment"
	"github.com/reftrack/reftrack/pkg/logins"
)

// person is the signed-in person of the portal's cookie (ok false when there is none).
func (h *Portal) person(ctx context.Context) (logins.Person, string, bool, error) {
	token := request.Cookie(ctx, auth.PartnerCookie)
	p, err := logins.AuthenticatePartner(ctx, h.DB, token, h.Now())
	if errors.Is(err, logins.ErrNoPartnerSession) {
		return logins.Person{}, "", false, nil
	}
	return p, token, err == nil, err
}

// signIn is where a signed-out browser goes to come back to path.
func signIn(path string) string { return "/partners/login?return_to=" + url.QueryEscape(path) }

// PartnerPortalPage serves the portal to a signed-in person, and sends anyone else to sign in.
func (h *Portal) PartnerPortalPage(ctx context.Context, req gen.PartnerPortalPageRequestObject) (gen.PartnerPortalPageResponseObject, error) {
	p, token, ok, err := h.person(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return gen.PartnerPortalPage302Response{Headers: gen.RedirectResponseHeaders{Location: "/partners/login"}}, nil
	}
	b, err := h.Assets.Page(p.Email, dashboard.CSRFToken(token), wire.Deref(req.Params.Program))
	if err != nil {
		return nil, err
	}
	return gen.PartnerPortalPage200TexthtmlResponse{DashboardPageTexthtmlResponse: gen.DashboardPageTexthtmlResponse{
		Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: gen.DashboardPageResponseHeaders{CacheControl: "no-store", ContentSecurityPolicy: dashboard.ContentSecurityPolicy},
	}}, nil
}

// returnTo keeps a sign-in's way back within the portal's own pages.
func returnTo(s string) string {
	if (strings.HasPrefix(s, "/partners") || strings.HasPrefix(s, "/p/")) && !strings.HasPrefix(s, "//") &&
		!strings.ContainsAny(s, "\\\r\n") {
		return s
	}
	return "/partners"
}

// PartnerLogin starts a portal sign-in bound to this browser and sends it to the login page.
func (h *Portal) PartnerLogin(ctx context.Context, req gen.PartnerLoginRequestObject) (gen.PartnerLoginResponseObject, error) {
	sess, browser, err := logins.StartPartner(ctx, h.DB, h.Now(), returnTo(wire.Deref(req.Params.ReturnTo)))
	if err != nil {
		return nil, err
	}
	return gen.PartnerLogin302Response{Headers: gen.PartnerLogin302ResponseHeaders{
		Location:  "/login?state=" + sess.State,
		SetCookie: dashboard.Cookie(auth.PartnerLoginCookie, browser, h.SecureCookies, logins.SessionTTL),
	}}, nil
}

// PartnerLogout ends the portal session; the form must carry the page's CSRF token.
func (h *Portal) PartnerLogout(ctx context.Context, req gen.PartnerLogoutRequestObject) (gen.PartnerLogoutResponseObject, error) {
	token := request.Cookie(ctx, auth.PartnerCookie)
	csrf := ""
	if req.Body != nil {
		csrf = wire.Deref(req.Body.CsrfToken)
	}
	if !dashboard.ValidCSRF(token, csrf) {
		body, n := pages.Render(pages.Page{Title: "Not signed out", Error: "This sign-out did not come from your portal page. Open the portal and sign out there."})
		return gen.PartnerLogout403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if err := logins.RevokePartner(ctx, h.DB, token, h.Now()); err != nil {
		return nil, err
	}
	body, n := pages.Render(pages.Page{Title: "You are signed out", Message: "Your partner portal session has ended.", Link: "/partners", LinkText: "Sign in again"})
	return gen.PartnerLogout200TexthtmlResponse{Body: body, ContentLength: n,
		Headers: gen.PartnerLogout200ResponseHeaders{SetCookie: dashboard.Cookie(auth.PartnerCookie, "", h.SecureCookies, -1)}}, nil
}

// invitationProblem is the page of an invitation link that cannot be used, and its status.
func invitationProblem(err error) (status int, page pages.Page) {
	var other *enrollment.OtherEmailError
	var conflict *enrollment.ConflictError
	switch {
	case errors.Is(err, enrollment.ErrInvitationExpired):
		return 410, pages.Page{Title: "Invitation expired", Error: "This invitation link has expired (links are valid for 30 days). Ask the brand to send it again."}
	case errors.As(err, &other):
		return 403, pages.Page{Title: "Another address", Error: other.Error() + ".", Link: "/partners", LinkText: "Open the portal"}
	case errors.As(err, &conflict):
		return 409, pages.Page{Title: "Invitation", Error: conflict.Message + "."}
	}
	return 404, pages.Page{Title: "Invitation not found", Error: "This invitation link is not valid: it was canceled, or sent again with a new link."}
}

// PartnerInvitationPage shows an invitation to a signed-in person, with a button to accept it.
func (h *Portal) PartnerInvitationPage(ctx context.Context, req gen.PartnerInvitationPageRequestObject) (gen.PartnerInvitationPageResponseObject, error) {
	inv, err := enrollment.Peek(ctx, h.DB, req.Token, h.Now())
	if err != nil && !errors.Is(err, enrollment.ErrInvitationUnknown) && !errors.Is(err, enrollment.ErrInvitationExpired) {
		return nil, err
	}
	if err != nil {
		status, page := invitationProblem(err)
		body, n := pages.Render(page)
		if status == 410 {
			return gen.PartnerInvitationPage410TexthtmlResponse{HTMLPageGoneTexthtmlResponse: gen.HTMLPageGoneTexthtmlResponse{Body: body, ContentLength: n}}, nil
		}
		return gen.PartnerInvitationPage404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	p, token, ok, err := h.person(ctx)
	if err != nil {
		return nil, err
	}
	path := "/partners/invitations/" + url.PathEscape(req.Token)
	if !ok {
		return gen.PartnerInvitationPage302Response{Headers: gen.RedirectResponseHeaders{Location: signIn(path)}}, nil
	}
	body, n := pages.Render(invitationPage(inv, p, token, path))
	return gen.PartnerInvitationPage200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
}

// invitationPage is what an invitation's page shows the signed-in person p: the program and a button to
// accept it, or why they cannot (it was sent to another address), or that it was accepted.
func invitationPage(inv enrollment.Invited, p logins.Person, token, path string) pages.Page {
	mine := strings.EqualFold(p.Email, inv.Email)
	switch {
	case inv.Status == enrollment.InvitationAccepted && mine:
		return pages.Page{Title: "Join " + inv.Program, Message: "You accepted this invitation.",
			Link: "/partners?program=" + strconv.FormatInt(inv.ProgramID, 10), LinkText: "Open " + inv.Program + " in the portal"}
	case inv.Status == enrollment.InvitationAccepted:
		return pages.Page{Title: "Join " + inv.Program, Message: "This invitation was accepted.", Link: "/partners", LinkText: "Open the portal"}
	case !mine:
		return pages.Page{Title: "Join " + inv.Program, Error: (&enrollment.OtherEmailError{Invited: inv.Email}).Error() + ".",
			Link: "/partners", LinkText: "Open the portal"}
	}
	msg := inv.Program + " (" + inv.Domain + ") invites " + inv.Email + " to its partner program. " + inv.Describe()
	if inv.Message != nil {
		msg += " Their note: “" + *inv.Message + "”"
	}
	return pages.Page{Title: "Join " + inv.Program, Message: msg,
		Post: &pages.Post{Action: path, CSRF: dashboard.CSRFToken(token), Button: "Accept the invitation"}}
}

// PartnerInvitationAccept accepts the invitation for the signed-in person and opens its program.
func (h *Portal) PartnerInvitationAccept(ctx context.Context, req gen.PartnerInvitationAcceptRequestObject) (gen.PartnerInvitationAcceptResponseObject, error) {
	p, token, ok, err := h.person(ctx)
	if err != nil {
		return nil, err
	}
	path := "/partners/invitations/" + url.PathEscape(req.Token)
	if !ok {
		return gen.PartnerInvitationAccept302Response{Headers: gen.RedirectResponseHeaders{Location: signIn(path)}}, nil
	}
	csrf := ""
	if req.Body != nil {
		csrf = wire.Deref(req.Body.CsrfToken)
	}
	if !dashboard.ValidCSRF(token, csrf) {
		body, n := pages.Render(pages.Page{Title: "Not accepted", Error: "This form did not come from the invitation's page. Open the link again.", Link: path, LinkText: "Open the invitation"})
		return gen.PartnerInvitationAccept403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	programID, err := enrollment.Accept(ctx, h.DB, req.Token, p.Email, h.Now())
	var other *enrollment.OtherEmailError
	var conflict *enrollment.ConflictError
	if errors.Is(err, enrollment.ErrInvitationUnknown) || errors.Is(err, enrollment.ErrInvitationExpired) || errors.As(err, &other) || errors.As(err, &conflict) {
		status, page := invitationProblem(err)
		body, n := pages.Render(page)
		switch status {
		case 410:
			return gen.PartnerInvitationAccept410TexthtmlResponse{HTMLPageGoneTexthtmlResponse: gen.HTMLPageGoneTexthtmlResponse{Body: body, ContentLength: n}}, nil
		case 403:
			return gen.PartnerInvitationAccept403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: body, ContentLength: n}}, nil
		case 409:
			return gen.PartnerInvitationAccept409TexthtmlResponse{HTMLPageConflictTexthtmlResponse: gen.HTMLPageConflictTexthtmlResponse{Body: body, ContentLength: n}}, nil
		}
		return gen.PartnerInvitationAccept404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if err != nil {
		return nil, err
	}
	return gen.PartnerInvitationAccept303Response{Headers: gen.PartnerInvitationAccept303ResponseHeaders{
		Location: "/partners?program=" + strconv.FormatInt(programID, 10)}}, nil
}

// ProgramApplicationPage shows an open program's terms and a form to apply (or a way to sign in first).
func (h *Portal) ProgramApplicationPage(ctx context.Context, req gen.ProgramApplicationPageRequestObject) (gen.ProgramApplicationPageResponseObject, error) {
	prog, err := enrollment.Open(ctx, h.DB, req.Slug)
	if errors.Is(err, enrollment.ErrNotOpen) {
		body, n := pages.Render(pages.Page{Title: "Program not found", Error: "No program takes applications at this address."})
		return gen.ProgramApplicationPage404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if err != nil {
		return nil, err
	}
	_, token, ok, err := h.person(ctx)
	if err != nil {
		return nil, err
	}
	page := pages.Page{Title: "Become a partner of " + prog.Name, Message: prog.Name + " (" + prog.Domain + "): " + prog.Describe()}
	path := "/p/" + url.PathEscape(prog.Slug)
	if ok {
		page.Post = &pages.Post{Action: path, CSRF: dashboard.CSRFToken(token), Button: "Apply", Apply: true}
	} else {
		page.Link, page.LinkText = signIn(path), "Sign in to apply"
	}
	body, n := pages.Render(page)
	return gen.ProgramApplicationPage200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
}

// ProgramApply enrolls the signed-in person in the open program and opens it in the portal.
func (h *Portal) ProgramApply(ctx context.Context, req gen.ProgramApplyRequestObject) (gen.ProgramApplyResponseObject, error) {
	p, token, ok, err := h.person(ctx)
	if err != nil {
		return nil, err
	}
	path := "/p/" + url.PathEscape(req.Slug)
	if !ok {
		return gen.ProgramApply302Response{Headers: gen.RedirectResponseHeaders{Location: signIn(path)}}, nil
	}
	var f gen.ApplicationForm
	if req.Body != nil {
		f = *req.Body
	}
	if !dashboard.ValidCSRF(token, wire.Deref(f.CsrfToken)) {
		body, n := pages.Render(pages.Page{Title: "Not sent", Error: "This form did not come from the program's page. Open it again.", Link: path, LinkText: "Open the page"})
		return gen.ProgramApply403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	_, err = enrollment.Apply(ctx, h.DB, req.Slug, p.Name, p.Email, enrollment.Application{Message: wire.Deref(f.Message),
		Website: strings.TrimSpace(wire.Deref(f.Website))}, h.Now())
	var invalid *enrollment.InvalidError
	var conflict *enrollment.ConflictError
	switch {
	case errors.Is(err, enrollment.ErrNotOpen):
		body, n := pages.Render(pages.Page{Title: "Program not found", Error: "No program takes applications at this address."})
		return gen.ProgramApply404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	case errors.As(err, &invalid):
		body, n := pages.Render(pages.Page{Title: "Not sent", Error: invalid.Message + ".", Link: path, LinkText: "Try again"})
		return gen.ProgramApply400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	case errors.As(err, &conflict):
		body, n := pages.Render(pages.Page{Title: "Not sent", Error: conflict.Message + ".", Link: "/partners", LinkText: "Open the portal"})
		return gen.ProgramApply409TexthtmlResponse{HTMLPageConflictTexthtmlResponse: gen.HTMLPageConflictTexthtmlResponse{Body: body, ContentLength: n}}, nil
	case err != nil:
		return nil, err
	}
	prog, err := enrollment.Open(ctx, h.DB, req.Slug)
	if err != nil {
		return nil, err
	}
	return gen.ProgramApply303Response{Headers: gen.ProgramApply303ResponseHeaders{Location: "/partners?program=" + strconv.FormatInt(prog.ID, 10)}}, nil
}

// Versioned URLs (?v=) change with the files, so browsers may keep them a day.
const assetCacheControl = "public, max-age=86400"

// PartnerPortalAsset serves the portal page's script and style sheet.
func (h *Portal) PartnerPortalAsset(_ context.Context, req gen.PartnerPortalAssetRequestObject) (gen.PartnerPortalAssetResponseObject, error) {
	f, ok := h.Assets.Files[req.Asset]
	if !ok {
		return nil, apierr.New(apierr.KindNotFound, "No such file of the partner portal")
	}
	if m := req.Params.IfNoneMatch; m != nil && request.ETagMatches(*m, f.ETag) {
		return gen.PartnerPortalAsset304Response{Headers: gen.PartnerPortalAsset304ResponseHeaders{ETag: f.ETag, CacheControl: assetCacheControl}}, nil
	}
	hdr := gen.PartnerPortalAsset200ResponseHeaders{ETag: f.ETag, CacheControl: assetCacheControl}
	if strings.HasSuffix(req.Asset, ".css") {
		return gen.PartnerPortalAsset200TextcssResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: hdr}, nil
	}
	return gen.PartnerPortalAsset200TextjavascriptResponse{Body: bytes.NewReader(f.Body), ContentLength: int64(len(f.Body)), Headers: hdr}, nil
}
