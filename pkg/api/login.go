package api

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/config"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/secret"
)

// loginSetup is how people sign in: a configured OpenID Connect issuer (verifier and OAuth client for
// the code flow), or the development issuer (verifier and the issuer itself).
type loginSetup struct {
	verifier *identity.Verifier
	oauth    *oauth2.Config
	dev      *identity.DevIssuer
}

func newLoginSetup(ctx context.Context, cfg config.Config) (loginSetup, error) {
	if cfg.OIDCIssuer == "" {
		if cfg.Production() {
			return loginSetup{}, errors.New("OIDC_ISSUER is required in production")
		}
		dev, err := identity.NewDevIssuer(cfg.BaseURL+"/dev/oidc", cfg.OIDCClientID)
		if err != nil {
			return loginSetup{}, err
		}
		return loginSetup{verifier: dev.Verifier(), dev: dev}, nil
	}
	p, err := identity.Discover(ctx, cfg.OIDCIssuer, cfg.OIDCClientID, cfg.OIDCClientSecret, cfg.BaseURL+"/login/callback")
	if err != nil {
		return loginSetup{}, err
	}
	return loginSetup{verifier: p.Verifier, oauth: p.OAuth}, nil
}

// --- pages ---------------------------------------------------------------------------------------------

var pages = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · reftrack</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem;color:#1d2733}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.6rem 1.2rem;font:inherit;background:#1f6feb;color:#fff;border:0;border-radius:4px}
.note{color:#57606a;font-size:.9rem}.error{color:#b42318}</style></head><body>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
{{if .Message}}<p>{{.Message}}</p>{{end}}
{{if .Link}}<p><a href="{{.Link}}">{{.LinkText}}</a></p>{{end}}
{{if .Form}}<form method="post" action="{{.Action}}">
{{range $k, $v := .Hidden}}<input type="hidden" name="{{$k}}" value="{{$v}}">{{end}}
<label for="email">Email</label><input id="email" name="email" type="email" required autofocus value="{{.Email}}">
<label for="name">Name</label><input id="name" name="name" type="text" value="{{.Name}}">
<button type="submit">Sign in</button>
<p class="note">Development sign-in: this server has no OpenID Connect issuer configured, so any email signs in.</p>
</form>{{end}}
</body></html>`))

type page struct {
	Title, Message, Error, Action, Email, Name string
	Link, LinkText                             string
	Form                                       bool
	Hidden                                     map[string]string
}

func render(p page) (*bytes.Reader, int64) {
	var b bytes.Buffer
	if err := pages.Execute(&b, p); err != nil {
		b.Reset()
		b.WriteString("reftrack: page error")
	}
	return bytes.NewReader(b.Bytes()), int64(b.Len())
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// retryFor points a login page's message at the right way to start over: the CLI's command, or for a
// dashboard sign-in the dashboard.
func retryFor(msg string, dash bool) string {
	if !dash {
		return msg
	}
	return strings.Replace(msg, "Run reftrack login again.", "Open the dashboard again.", 1)
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
func (s *Server) LoginPage(ctx context.Context, req gen.LoginPageRequestObject) (gen.LoginPageResponseObject, error) {
	state := deref(req.Params.State)
	if sess, err := logins.Pending(ctx, s.deps.DB, state, s.now()); err != nil {
		if !errors.Is(err, logins.ErrSessionNotFound) && !errors.Is(err, logins.ErrSessionUsed) && !errors.Is(err, logins.ErrSessionExpired) {
			return nil, err
		}
		body, n := render(page{Title: "Sign in to reftrack", Error: retryFor(sessionProblem(err), sess.Purpose == logins.PurposeDashboard)})
		return gen.LoginPage400TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	if s.login.dev != nil {
		body, n := render(page{Title: "Sign in to reftrack", Form: true, Action: "/login", Hidden: map[string]string{"state": state}})
		return gen.LoginPage200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	verifier, nonce, err := logins.PrepareCodeFlow(ctx, s.deps.DB, state)
	if err != nil {
		return nil, err
	}
	u := s.login.oauth.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce))
	return gen.LoginPage302Response{Headers: gen.RedirectResponseHeaders{Location: u}}, nil
}

// LoginSubmit signs the session in with the development issuer.
func (s *Server) LoginSubmit(ctx context.Context, req gen.LoginSubmitRequestObject) (gen.LoginSubmitResponseObject, error) {
	if s.login.dev == nil {
		body, n := render(page{Title: "Not available", Error: "This server signs in through its OpenID Connect issuer."})
		return gen.LoginSubmit404TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	var f gen.LoginForm
	if req.Body != nil {
		f = *req.Body
	}
	state, email, name := deref(f.State), deref(f.Email), deref(f.Name)
	form := page{Title: "Sign in to reftrack", Form: true, Action: "/login", Hidden: map[string]string{"state": state}, Email: email, Name: name}
	token, err := s.login.dev.Mint(email, name, "")
	if err != nil {
		form.Error = "Enter a valid email address."
		body, n := render(form)
		return gen.LoginSubmit400TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	o, err := s.completeLoginPage(ctx, state, token, "")
	switch {
	case err != nil:
		return nil, err
	case o.status == http.StatusSeeOther:
		return gen.LoginSubmit303Response{Headers: gen.SignedInResponseHeaders{Location: o.location, SetCookie: o.cookie}}, nil
	case o.status == http.StatusForbidden:
		return gen.LoginSubmit403TexthtmlResponse{Body: o.body, ContentLength: o.n}, nil
	case o.status == http.StatusBadRequest:
		return gen.LoginSubmit400TexthtmlResponse{Body: o.body, ContentLength: o.n}, nil
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
func (s *Server) completeLoginPage(ctx context.Context, state, idToken, nonce string) (loginOutcome, error) {
	sess, err := logins.Get(ctx, s.deps.DB, state)
	dash := err == nil && sess.Purpose == logins.PurposeDashboard
	if dash && !sess.FromBrowser(cookie(ctx, dashboard.LoginCookie)) {
		return dashboardLoginRefused(logins.ErrOtherBrowser), nil
	}
	acct, err := s.completeLogin(ctx, state, idToken, nonce)
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		body, n := render(page{Title: "Account suspended", Error: "Your account has been suspended."})
		return loginOutcome{status: http.StatusForbidden, body: body, n: n}, nil
	case errors.As(err, &ae) && ae.Status < 500:
		body, n := render(page{Title: "Sign in to reftrack", Error: loginPageProblem(ae, dash)})
		return loginOutcome{status: http.StatusBadRequest, body: body, n: n}, nil
	case err != nil:
		return loginOutcome{}, err
	}
	if dash {
		return s.finishDashboardLogin(ctx, state)
	}
	body, n := render(page{Title: "You are signed in", Message: "Signed in as " + acct.Email + ". You can close this tab and return to your terminal."})
	return loginOutcome{status: http.StatusOK, body: body, n: n}, nil
}

func loginPageProblem(e *apierr.Error, dash bool) string {
	switch e.Message {
	case "Session expired":
		return retryFor(sessionProblem(logins.ErrSessionExpired), dash)
	case "Session not found or already used":
		return retryFor(sessionProblem(logins.ErrSessionNotFound), dash)
	}
	return retryFor("The identity provider's answer was refused ("+e.Message+"). Run reftrack login again.", dash)
}

// LoginCallback completes the code flow: exchange with the PKCE verifier, verify, sign in.
func (s *Server) LoginCallback(ctx context.Context, req gen.LoginCallbackRequestObject) (gen.LoginCallbackResponseObject, error) {
	state := deref(req.Params.State)
	sess, pendingErr := logins.Pending(ctx, s.deps.DB, state, s.now())
	fail := func(msg string) (gen.LoginCallbackResponseObject, error) {
		body, n := render(page{Title: "Sign in to reftrack", Error: retryFor(msg, sess.Purpose == logins.PurposeDashboard)})
		return gen.LoginCallback400TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	if s.login.oauth == nil {
		return fail("This server has no OpenID Connect issuer configured.")
	}
	if e := deref(req.Params.Error); e != "" {
		return fail("The identity provider refused the sign-in: " + e + " " + deref(req.Params.ErrorDescription))
	}
	if pendingErr != nil {
		return fail(sessionProblem(pendingErr))
	}
	if sess.CodeVerifier == nil || sess.Nonce == nil || deref(req.Params.Code) == "" {
		return fail("The sign-in did not start on this server. Run reftrack login again.")
	}
	tok, err := s.login.oauth.Exchange(ctx, deref(req.Params.Code), oauth2.VerifierOption(*sess.CodeVerifier))
	if err != nil {
		s.deps.Logger.WarnContext(ctx, "login code exchange failed", "err", err)
		return fail("The identity provider did not confirm the sign-in. Run reftrack login again.")
	}
	raw, _ := tok.Extra("id_token").(string)
	o, err := s.completeLoginPage(ctx, state, raw, *sess.Nonce)
	switch {
	case err != nil:
		return nil, err
	case o.status == http.StatusSeeOther:
		return gen.LoginCallback303Response{Headers: gen.SignedInResponseHeaders{Location: o.location, SetCookie: o.cookie}}, nil
	case o.status == http.StatusForbidden:
		return gen.LoginCallback403TexthtmlResponse{Body: o.body, ContentLength: o.n}, nil
	case o.status == http.StatusBadRequest:
		return gen.LoginCallback400TexthtmlResponse{Body: o.body, ContentLength: o.n}, nil
	}
	return gen.LoginCallback200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: o.body, ContentLength: o.n}}, nil
}

// --- development issuer ------------------------------------------------------------------------------------

var errNoDevIssuer = apierr.NotFound("No development issuer: this server signs in through OIDC_ISSUER")

// DevOidcDiscovery serves the development issuer's discovery document.
func (s *Server) DevOidcDiscovery(context.Context, gen.DevOidcDiscoveryRequestObject) (gen.DevOidcDiscoveryResponseObject, error) {
	if s.login.dev == nil {
		return nil, errNoDevIssuer
	}
	return gen.DevOidcDiscovery200JSONResponse(s.login.dev.Discovery()), nil
}

// DevOidcJwks serves the development issuer's keys.
func (s *Server) DevOidcJwks(context.Context, gen.DevOidcJwksRequestObject) (gen.DevOidcJwksResponseObject, error) {
	if s.login.dev == nil {
		return nil, errNoDevIssuer
	}
	return gen.DevOidcJwks200JSONResponse(s.login.dev.JWKS()), nil
}

func devAuthRequest(clientID, redirectURI, state, nonce, challenge, method *string) identity.AuthRequest {
	return identity.AuthRequest{ClientID: deref(clientID), RedirectURI: deref(redirectURI), State: deref(state),
		Nonce: deref(nonce), CodeChallenge: deref(challenge), CodeChallengeMethod: deref(method)}
}

// DevOidcAuthorize shows the development issuer's sign-in form.
func (s *Server) DevOidcAuthorize(_ context.Context, req gen.DevOidcAuthorizeRequestObject) (gen.DevOidcAuthorizeResponseObject, error) {
	if s.login.dev == nil {
		body, n := render(page{Title: "Not available", Error: "No development issuer on this server."})
		return gen.DevOidcAuthorize404TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	p := req.Params
	ar := devAuthRequest(p.ClientId, p.RedirectUri, p.State, p.Nonce, p.CodeChallenge, p.CodeChallengeMethod)
	if err := s.login.dev.Check(ar); err != nil {
		body, n := render(page{Title: "Development issuer", Error: err.Error()})
		return gen.DevOidcAuthorize400TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	body, n := render(page{Title: "Development issuer", Form: true, Action: "/dev/oidc/authorize", Hidden: map[string]string{
		"client_id": ar.ClientID, "redirect_uri": ar.RedirectURI, "state": ar.State, "nonce": ar.Nonce,
		"code_challenge": ar.CodeChallenge, "code_challenge_method": ar.CodeChallengeMethod,
	}})
	return gen.DevOidcAuthorize200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
}

// DevOidcAuthorizeSubmit signs the email in and sends the browser back with a code.
func (s *Server) DevOidcAuthorizeSubmit(_ context.Context, req gen.DevOidcAuthorizeSubmitRequestObject) (gen.DevOidcAuthorizeSubmitResponseObject, error) {
	if s.login.dev == nil {
		body, n := render(page{Title: "Not available", Error: "No development issuer on this server."})
		return gen.DevOidcAuthorizeSubmit404TexthtmlResponse{Body: body, ContentLength: n}, nil
	}
	var f gen.DevAuthorizeForm
	if req.Body != nil {
		f = *req.Body
	}
	ar := devAuthRequest(f.ClientId, f.RedirectUri, f.State, f.Nonce, f.CodeChallenge, f.CodeChallengeMethod)
	code, err := s.login.dev.Authorize(ar, deref(f.Email), deref(f.Name))
	if err != nil {
		body, n := render(page{Title: "Development issuer", Error: err.Error()})
		return gen.DevOidcAuthorizeSubmit400TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	u, err := url.Parse(ar.RedirectURI)
	if err != nil {
		body, n := render(page{Title: "Development issuer", Error: "redirect_uri is not a URL"})
		return gen.DevOidcAuthorizeSubmit400TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	q := u.Query()
	q.Set("code", code)
	q.Set("state", ar.State)
	u.RawQuery = q.Encode()
	return gen.DevOidcAuthorizeSubmit302Response{Headers: gen.RedirectResponseHeaders{Location: u.String()}}, nil
}

// DevOidcToken redeems a code for an id_token.
func (s *Server) DevOidcToken(ctx context.Context, req gen.DevOidcTokenRequestObject) (gen.DevOidcTokenResponseObject, error) {
	if s.login.dev == nil {
		return nil, errNoDevIssuer
	}
	var f gen.DevTokenForm
	if req.Body != nil {
		f = *req.Body
	}
	clientID := deref(f.ClientId)
	if clientID == "" { // client_secret_basic: the client id in the Authorization header
		r := &http.Request{Header: metaFrom(ctx).header}
		if user, _, ok := r.BasicAuth(); ok {
			clientID, _ = url.QueryUnescape(user)
		}
	}
	idToken, err := s.login.dev.Exchange(ctx, deref(f.GrantType), deref(f.Code), deref(f.RedirectUri), clientID, deref(f.CodeVerifier))
	var te *identity.TokenError
	if errors.As(err, &te) {
		return gen.DevOidcToken400JSONResponse{Error: te.Code, ErrorDescription: &te.Description}, nil
	}
	if err != nil {
		return nil, err
	}
	access, err := secret.RandomString(32)
	if err != nil {
		return nil, err
	}
	return gen.DevOidcToken200JSONResponse{AccessToken: access, TokenType: "Bearer",
		IdToken: idToken, ExpiresIn: int(identity.TokenTTL.Seconds())}, nil
}

// DevOidcIdToken mints an id_token for scripts and tests.
func (s *Server) DevOidcIdToken(_ context.Context, req gen.DevOidcIdTokenRequestObject) (gen.DevOidcIdTokenResponseObject, error) {
	if s.login.dev == nil {
		return nil, errNoDevIssuer
	}
	var email, name string
	if req.Body != nil {
		email, name = deref(req.Body.Email), deref(req.Body.Name)
	}
	tok, err := s.login.dev.Mint(email, name, "")
	if errors.Is(err, identity.ErrBadEmail) {
		return nil, apierr.BadRequest("A valid email is required")
	}
	if err != nil {
		return nil, err
	}
	return gen.DevOidcIdToken200JSONResponse{IdToken: tok}, nil
}
