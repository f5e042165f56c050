package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/logins"
)

// retryFor points a login page's message at the right way to start over: the CLI's command, or for a
// dashboard (or partner portal) sign-in the dashboard (or the portal).
func retryFor(msg string, purpose string) string {
	switch purpose {
	case logins.PurposeDashboard:
		return strings.Replace(msg, "Run reftrack login again.", "Open the dashboard again.", 1)
	case logins.PurposePartner:
		return strings.Replace(msg, "Run reftrack login again.", "Open the partner portal again.", 1)
	}
	return msg
}

// retryPage is a sign-in's refusal, with a link to start over where the sign-in began (the dashboard or
// the partner portal; the CLI's is a command to run).
func retryPage(msg, purpose string) pages.Page {
	p := pages.Page{Title: "Sign in to reftrack", Error: retryFor(msg, purpose)}
	switch purpose {
	case logins.PurposeDashboard:
		p.Link, p.LinkText = "/dashboard", "Open the dashboard"
	case logins.PurposePartner:
		p.Link, p.LinkText = "/partners", "Open the partner portal"
	}
	return p
}

func sessionProblem(err error) string {
	switch {
	case errors.Is(err, logins.ErrSessionExpired):
		return "This login link has expired (links are valid for 5 minutes). Run reftrack login again."
	case errors.Is(err, logins.ErrSessionNotFound), errors.Is(err, logins.ErrSessionUsed):
		return "This login link is unknown or was already used. Run reftrack login again."
	}
	return "The login failed. Run reftrack login again."
}

// LoginPage opens a login session in the browser: a redirect to the issuer, or the development form.
func (h *Pages) LoginPage(ctx context.Context, req gen.LoginPageRequestObject) (gen.LoginPageResponseObject, error) {
	state := wire.Deref(req.Params.State)
	if sess, err := logins.Pending(ctx, h.DB, state, h.Now()); err != nil {
		if !errors.Is(err, logins.ErrSessionNotFound) && !errors.Is(err, logins.ErrSessionUsed) && !errors.Is(err, logins.ErrSessionExpired) {
			return nil, err
		}
		body, n := pages.Render(retryPage(sessionProblem(err), sess.Purpose))
		return gen.LoginPage400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if h.Login.Dev != nil {
		body, n := pages.Render(pages.Page{Title: "Sign in to reftrack", Form: true, Action: "/login", Hidden: map[string]string{"state": state}})
		return gen.LoginPage200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	verifier, nonce, err := logins.PrepareCodeFlow(ctx, h.DB, state)
	if err != nil {
		return nil, err
	}
	u := h.Login.OAuth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce))
	return gen.LoginPage302Response{Headers: gen.RedirectResponseHeaders{Location: u}}, nil
}

// LoginSubmit signs the session in with the development issuer.
func (h *Pages) LoginSubmit(ctx context.Context, req gen.LoginSubmitRequestObject) (gen.LoginSubmitResponseObject, error) {
	if h.Login.Dev == nil {
		body, n := pages.Render(pages.Page{Title: "Not available", Error: "This server signs in through its OpenID Connect issuer."})
		return gen.LoginSubmit404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	var f gen.LoginForm
	if req.Body != nil {
		f = *req.Body
	}
	state, email, name := wire.Deref(f.State), wire.Deref(f.Email), wire.Deref(f.Name)
	form := pages.Page{Title: "Sign in to reftrack", Form: true, Action: "/login", Hidden: map[string]string{"state": state}, Email: email, Name: name}
	token, err := h.Login.Dev.Mint(email, name, "")
	if err != nil {
		form.Error = "Enter a valid email address."
		body, n := pages.Render(form)
		return gen.LoginSubmit400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	o, err := h.completeLoginPage(ctx, state, token, "")
	switch {
	case err != nil:
		return nil, err
	case o.status == http.StatusSeeOther:
		return gen.LoginSubmit303Response{Headers: gen.SignedInResponseHeaders{Location: o.location, SetCookie: o.cookie}}, nil
	case o.status == http.StatusForbidden:
		return gen.LoginSubmit403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
	case o.status == http.StatusBadRequest:
		return gen.LoginSubmit400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
	}
	return gen.LoginSubmit200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
}

// loginOutcome is how a login through the browser went: a page (200 signed in, 403 suspended, 400 any
// other refusal), or for a dashboard sign-in a redirect (303) with the session cookie.
type loginOutcome struct {
	status           int
	body             *bytes.Reader
	n                int64
	location, cookie string
}

// completeLoginPage completes the login and says how it went (a server error is returned as such). A
// dashboard sign-in must finish in the browser that started it; it then gets its session cookie.
func (h *Pages) completeLoginPage(ctx context.Context, state, idToken, nonce string) (loginOutcome, error) {
	sess, err := logins.Get(ctx, h.DB, state)
	if err == nil && sess.Purpose == logins.PurposePartner {
		return h.partnerSignIn(ctx, state, idToken, nonce)
	}
	dash := err == nil && sess.Purpose == logins.PurposeDashboard
	if dash && !sess.FromBrowser(request.Cookie(ctx, dashboard.LoginCookie)) {
		return dashboardLoginRefused(logins.ErrOtherBrowser), nil
	}
	acct, err := logins.SignIn(ctx, h.DB, h.Login.Verifier, state, idToken, nonce, h.Now())
	switch {
	case errors.Is(err, logins.ErrSuspended):
		body, n := pages.Render(pages.Page{Title: "Account suspended", Error: "Your account has been suspended."})
		return loginOutcome{status: http.StatusForbidden, body: body, n: n}, nil
	case refusedSignIn(err):
		body, n := pages.Render(retryPage(loginPageProblem(err, ""), sess.Purpose))
		return loginOutcome{status: http.StatusBadRequest, body: body, n: n}, nil
	case err != nil:
		return loginOutcome{}, err
	}
	if dash {
		return h.finishDashboardLogin(ctx, state)
	}
	body, n := pages.Render(pages.Page{Title: "You are signed in", Message: "Signed in as " + acct.Email + ". You can close this tab and return to your terminal."})
	return loginOutcome{status: http.StatusOK, body: body, n: n}, nil
}

// refusedSignIn reports whether a sign-in was refused for the person's reasons (a stale link, a token the
// issuer's keys do not vouch for), as opposed to a failure of the service.
func refusedSignIn(err error) bool {
	for _, r := range []error{logins.ErrSessionNotFound, logins.ErrSessionUsed, logins.ErrSessionExpired,
		logins.ErrEmailTaken, identity.ErrInvalidToken} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

func loginPageProblem(err error, purpose string) string {
	switch {
	case errors.Is(err, logins.ErrSessionExpired), errors.Is(err, logins.ErrSessionNotFound), errors.Is(err, logins.ErrSessionUsed):
		return retryFor(sessionProblem(err), purpose)
	}
	return retryFor("The identity provider's answer was refused (Invalid id_token). Run reftrack login again.", purpose)
}

// LoginCallback completes the code flow: exchange with the PKCE verifier, verify, sign in.
func (h *Pages) LoginCallback(ctx context.Context, req gen.LoginCallbackRequestObject) (gen.LoginCallbackResponseObject, error) {
	state := wire.Deref(req.Params.State)
	sess, pendingErr := logins.Pending(ctx, h.DB, state, h.Now())
	fail := func(msg string) (gen.LoginCallbackResponseObject, error) {
		body, n := pages.Render(retryPage(msg, sess.Purpose))
		return gen.LoginCallback400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	if h.Login.OAuth == nil {
		// The development issuer signs in with the login page's own form: nothing redirects here.
		return fail("This address ends a sign-in through an identity provider, and this server signs in with its own form. Run reftrack login again.")
	}
	if e := wire.Deref(req.Params.Error); e != "" {
		return fail("The identity provider refused the sign-in: " + e + " " + wire.Deref(req.Params.ErrorDescription))
	}
	if pendingErr != nil {
		return fail(sessionProblem(pendingErr))
	}
	if sess.CodeVerifier == nil || sess.Nonce == nil || wire.Deref(req.Params.Code) == "" {
		return fail("The sign-in did not start on this server. Run reftrack login again.")
	}
	tok, err := h.Login.OAuth.Exchange(ctx, wire.Deref(req.Params.Code), oauth2.VerifierOption(*sess.CodeVerifier))
	if err != nil {
		h.Log.WarnContext(ctx, "login code exchange failed", "err", err)
		return fail("The identity provider did not confirm the sign-in. Run reftrack login again.")
	}
	raw, _ := tok.Extra("id_token").(string)
	o, err := h.completeLoginPage(ctx, state, raw, *sess.Nonce)
	switch {
	case err != nil:
		return nil, err
	case o.status == http.StatusSeeOther:
		return gen.LoginCallback303Response{Headers: gen.SignedInResponseHeaders{Location: o.location, SetCookie: o.cookie}}, nil
	case o.status == http.StatusForbidden:
		return gen.LoginCallback403TexthtmlResponse{HTMLPageForbiddenTexthtmlResponse: gen.HTMLPageForbiddenTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
	case o.status == http.StatusBadRequest:
		return gen.LoginCallback400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
	}
	return gen.LoginCallback200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
}
