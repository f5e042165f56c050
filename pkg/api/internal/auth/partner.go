package auth

import (
	"context"
	"errors"

	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/logins"
)

// Partner portal cookies.
const (
	// PartnerCookie holds the portal session's token.
	PartnerCookie = "reftrack_partner"
	// PartnerLoginCookie binds a portal sign-in to the browser that started it.
	PartnerLoginCookie = "reftrack_partner_login"
)

// ErrPartnerCSRF: a change by the portal's cookie without the page's CSRF token.
var ErrPartnerCSRF = errors.New("missing or invalid partner portal CSRF token")

// PartnerSession authenticates the portal's session cookie; a change must carry the page's CSRF token
// (the same derivation as the dashboard's, from the portal's own session). As on the dashboard, the
// session is checked first (401), the CSRF token of a valid one after (403).
func (a *Authenticator) PartnerSession(ctx context.Context) (logins.Person, error) {
	m := request.From(ctx)
	token := request.Cookie(ctx, PartnerCookie)
	p, err := logins.AuthenticatePartner(ctx, a.DB, token, a.Now())
	if err != nil {
		return logins.Person{}, err
	}
	if !request.SafeMethod(m.Method) && !dashboard.ValidCSRF(token, m.Header.Get(dashboard.CSRFHeader)) {
		return logins.Person{}, ErrPartnerCSRF
	}
	return p, nil
}

type personKey struct{}

// WithPerson stores the authenticated partner person.
func WithPerson(ctx context.Context, p logins.Person) context.Context {
	return context.WithValue(ctx, personKey{}, p)
}

// Person is the partner person the middleware authenticated (x-reftrack-auth: partner-session).
func Person(ctx context.Context) (logins.Person, error) {
	if p, ok := ctx.Value(personKey{}).(logins.Person); ok {
		return p, nil
	}
	return logins.Person{}, errNotAuthenticated
}
