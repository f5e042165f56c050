package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/logins"
)

// partnerSignIn finishes a partner portal sign-in (one started at /partners/login) in the browser that
// started it: the portal's session cookie, and back to where the sign-in began.
func (h *Pages) partnerSignIn(ctx context.Context, state, idToken, nonce string) (loginOutcome, error) {
	in, err := logins.SignInPartner(ctx, h.DB, h.Login.Verifier, state, idToken, nonce,
		request.Cookie(ctx, auth.PartnerLoginCookie), h.Now())
	refuse := func(msg string) (loginOutcome, error) {
		body, n := pages.Render(pages.Page{Title: "Sign in to the partner portal", Error: msg, Link: "/partners", LinkText: "Open the partner portal"})
		return loginOutcome{status: http.StatusBadRequest, body: body, n: n}, nil
	}
	switch {
	case errors.Is(err, logins.ErrOtherBrowser):
		return refuse("This sign-in was started in another browser. Open the partner portal again to sign in here.")
	case errors.Is(err, logins.ErrEmailUnverified):
		return refuse("Your identity provider did not confirm your email address, which is what links you to your partner records.")
	case refusedSignIn(err):
		return refuse(loginPageProblem(err, logins.PurposePartner))
	case err != nil:
		return loginOutcome{}, err
	}
	return loginOutcome{status: http.StatusSeeOther, location: in.ReturnTo,
		cookie: dashboard.Cookie(auth.PartnerCookie, in.Token, h.SecureCookies, logins.PartnerTTL)}, nil
}
