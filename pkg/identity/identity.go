// Package identity verifies OpenID Connect id_tokens with go-oidc, and provides the development issuer
// that stands in for a real one on a developer's machine and in tests.
package identity

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Identity is who an id_token names.
type Identity struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}

// Verifier checks id_tokens of one issuer for one client id (signature through the issuer's keys,
// issuer, audience, expiry).
type Verifier struct {
	issuer string
	v      *oidc.IDTokenVerifier
}

// ErrInvalidToken wraps every reason an id_token is refused.
var ErrInvalidToken = errors.New("invalid id_token")

// Verify checks raw and, when nonce is not empty, that the token carries it.
func (v *Verifier) Verify(ctx context.Context, raw, nonce string) (Identity, error) {
	tok, err := v.v.Verify(ctx, raw)
	if err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if nonce != "" && tok.Nonce != nonce {
		return Identity{}, fmt.Errorf("%w: nonce does not match the login session", ErrInvalidToken)
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified *bool  `json:"email_verified"`
		Name          string `json:"name"`
	}
	if err := tok.Claims(&claims); err != nil {
		return Identity{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if claims.Email == "" {
		return Identity{}, fmt.Errorf("%w: no email claim (ask for the email scope)", ErrInvalidToken)
	}
	return Identity{
		Issuer: tok.Issuer, Subject: tok.Subject, Email: claims.Email,
		EmailVerified: claims.EmailVerified != nil && *claims.EmailVerified, Name: claims.Name,
	}, nil
}

// Provider is a configured issuer: its verifier and the OAuth 2.0 client for the login page's
// authorization-code flow.
type Provider struct {
	Verifier *Verifier
	OAuth    *oauth2.Config
}

// Discover reads a real issuer's discovery document and keys (OIDC_ISSUER); now dates the tokens' checks.
func Discover(ctx context.Context, issuer, clientID, clientSecret, redirectURL string, now func() time.Time) (*Provider, error) {
	p, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("OpenID Connect discovery of %s: %w", issuer, err)
	}
	return &Provider{
		Verifier: &Verifier{issuer: issuer, v: p.Verifier(&oidc.Config{ClientID: clientID, Now: now})},
		OAuth: &oauth2.Config{
			ClientID: clientID, ClientSecret: clientSecret, Endpoint: p.Endpoint(), RedirectURL: redirectURL,
			Scopes: []string{oidc.ScopeOpenID, "email", "profile"},
		},
	}, nil
}

// Login is how people sign in on this server: a configured issuer (its verifier and the OAuth client of
// the login page's code flow), or the development issuer (its verifier and the issuer itself).
type Login struct {
	Verifier *Verifier
	// OAuth is the code flow's client; nil with the development issuer.
	OAuth *oauth2.Config
	// Dev is the development issuer; nil with a configured issuer.
	Dev *DevIssuer
}

// LoginOptions configure NewLogin.
type LoginOptions struct {
	// Issuer is OIDC_ISSUER; "" runs the development issuer under BaseURL/dev/oidc.
	Issuer, ClientID, ClientSecret string
	BaseURL                        string
	// Production refuses to run without a configured issuer.
	Production bool
	Now        func() time.Time
	// DevKey signs the development issuer's tokens (nil: generated).
	DevKey *rsa.PrivateKey
}

// ErrIssuerRequired refuses production without OIDC_ISSUER.
var ErrIssuerRequired = errors.New("OIDC_ISSUER is required in production")

// NewLogin sets up the sign-in: discovery of the configured issuer, or the development issuer.
func NewLogin(ctx context.Context, o LoginOptions) (*Login, error) {
	if o.Issuer == "" {
		if o.Production {
			return nil, ErrIssuerRequired
		}
		dev, err := NewDevIssuer(o.BaseURL+"/dev/oidc", o.ClientID, o.DevKey, o.Now)
		if err != nil {
			return nil, err
		}
		return &Login{Verifier: dev.Verifier(), Dev: dev}, nil
	}
	p, err := Discover(ctx, o.Issuer, o.ClientID, o.ClientSecret, o.BaseURL+"/login/callback", o.Now)
	if err != nil {
		return nil, err
	}
	return &Login{Verifier: p.Verifier, OAuth: p.OAuth}, nil
}
