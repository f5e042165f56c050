package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/pages"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/secret"
)

var errNoDevIssuer = apierr.New(apierr.KindNotFound, "No development issuer: this server signs in through OIDC_ISSUER")

// DevOidcDiscovery serves the development issuer's discovery document.
func (h *Pages) DevOidcDiscovery(context.Context, gen.DevOidcDiscoveryRequestObject) (gen.DevOidcDiscoveryResponseObject, error) {
	if h.Login.Dev == nil {
		return nil, errNoDevIssuer
	}
	return gen.DevOidcDiscovery200JSONResponse(h.Login.Dev.Discovery()), nil
}

// DevOidcJwks serves the development issuer's keys.
func (h *Pages) DevOidcJwks(context.Context, gen.DevOidcJwksRequestObject) (gen.DevOidcJwksResponseObject, error) {
	if h.Login.Dev == nil {
		return nil, errNoDevIssuer
	}
	return gen.DevOidcJwks200JSONResponse(h.Login.Dev.JWKS()), nil
}

func devAuthRequest(clientID, redirectURI, state, nonce, challenge, method *string) identity.AuthRequest {
	return identity.AuthRequest{ClientID: wire.Deref(clientID), RedirectURI: wire.Deref(redirectURI), State: wire.Deref(state),
		Nonce: wire.Deref(nonce), CodeChallenge: wire.Deref(challenge), CodeChallengeMethod: wire.Deref(method)}
}

// DevOidcAuthorize shows the development issuer's sign-in form.
func (h *Pages) DevOidcAuthorize(_ context.Context, req gen.DevOidcAuthorizeRequestObject) (gen.DevOidcAuthorizeResponseObject, error) {
	if h.Login.Dev == nil {
		body, n := pages.Render(pages.Page{Title: "Not available", Error: "No development issuer on this server."})
		return gen.DevOidcAuthorize404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	p := req.Params
	ar := devAuthRequest(p.ClientId, p.RedirectUri, p.State, p.Nonce, p.CodeChallenge, p.CodeChallengeMethod)
	if err := h.Login.Dev.Check(ar); err != nil {
		body, n := pages.Render(pages.Page{Title: "Development issuer", Error: err.Error()})
		return gen.DevOidcAuthorize400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	body, n := pages.Render(pages.Page{Title: "Development issuer", Form: true, Action: "/dev/oidc/authorize", Hidden: map[string]string{
		"client_id": ar.ClientID, "redirect_uri": ar.RedirectURI, "state": ar.State, "nonce": ar.Nonce,
		"code_challenge": ar.CodeChallenge, "code_challenge_method": ar.CodeChallengeMethod,
	}})
	return gen.DevOidcAuthorize200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{Body: body, ContentLength: n}}, nil
}

// DevOidcAuthorizeSubmit signs the email in and sends the browser back with a code.
func (h *Pages) DevOidcAuthorizeSubmit(_ context.Context, req gen.DevOidcAuthorizeSubmitRequestObject) (gen.DevOidcAuthorizeSubmitResponseObject, error) {
	if h.Login.Dev == nil {
		body, n := pages.Render(pages.Page{Title: "Not available", Error: "No development issuer on this server."})
		return gen.DevOidcAuthorizeSubmit404TexthtmlResponse{HTMLPageNotFoundTexthtmlResponse: gen.HTMLPageNotFoundTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	var f gen.DevAuthorizeForm
	if req.Body != nil {
		f = *req.Body
	}
	ar := devAuthRequest(f.ClientId, f.RedirectUri, f.State, f.Nonce, f.CodeChallenge, f.CodeChallengeMethod)
	code, err := h.Login.Dev.Authorize(ar, wire.Deref(f.Email), wire.Deref(f.Name))
	if err != nil {
		body, n := pages.Render(pages.Page{Title: "Development issuer", Error: err.Error()})
		return gen.DevOidcAuthorizeSubmit400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	u, err := url.Parse(ar.RedirectURI)
	if err != nil {
		body, n := pages.Render(pages.Page{Title: "Development issuer", Error: "redirect_uri is not a URL"})
		return gen.DevOidcAuthorizeSubmit400TexthtmlResponse{HTMLPageBadRequestTexthtmlResponse: gen.HTMLPageBadRequestTexthtmlResponse{Body: body, ContentLength: n}}, nil
	}
	q := u.Query()
	q.Set("code", code)
	q.Set("state", ar.State)
	u.RawQuery = q.Encode()
	return gen.DevOidcAuthorizeSubmit302Response{Headers: gen.RedirectResponseHeaders{Location: u.String()}}, nil
}

// DevOidcToken redeems a code for an id_token.
func (h *Pages) DevOidcToken(ctx context.Context, req gen.DevOidcTokenRequestObject) (gen.DevOidcTokenResponseObject, error) {
	if h.Login.Dev == nil {
		return nil, errNoDevIssuer
	}
	var f gen.DevTokenForm
	if req.Body != nil {
		f = *req.Body
	}
	clientID := wire.Deref(f.ClientId)
	if clientID == "" { // client_secret_basic: the client id in the Authorization header
		r := &http.Request{Header: request.From(ctx).Header}
		if user, _, ok := r.BasicAuth(); ok {
			clientID, _ = url.QueryUnescape(user)
		}
	}
	idToken, err := h.Login.Dev.Exchange(ctx, wire.Deref(f.GrantType), wire.Deref(f.Code), wire.Deref(f.RedirectUri), clientID, wire.Deref(f.CodeVerifier))
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
func (h *Pages) DevOidcIdToken(ctx context.Context, req gen.DevOidcIdTokenRequestObject) (gen.DevOidcIdTokenResponseObject, error) {
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	if h.Login.Dev == nil {
		return nil, errNoDevIssuer
	}
	var email, name string
	if req.Body != nil {
		email, name = wire.Deref(req.Body.Email), wire.Deref(req.Body.Name)
	}
	tok, err := h.Login.Dev.Mint(email, name, "")
	if errors.Is(err, identity.ErrBadEmail) {
		return nil, apierr.Invalid("A valid email is required")
	}
	if err != nil {
		return nil, err
	}
	return gen.DevOidcIdToken200JSONResponse{IdToken: tok}, nil
}
