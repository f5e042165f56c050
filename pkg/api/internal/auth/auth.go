// Package auth authenticates a request's credential: a program API key (Bearer), an account login token
// (Bearer), or the dashboard's session cookie. It answers sentinel errors; the HTTP layer's error table
// words them as the route's policy says. The authenticated principal is kept in the request context.
package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/secret"
)

// Refusals. A key that matches no program is apikeys.ErrUnknown, an unknown or expired login token
// accounts.ErrInvalidToken, a suspended account accounts.ErrSuspended.
var (
	// ErrMalformedHeader: no Authorization header, or not "Bearer <token>".
	ErrMalformedHeader = errors.New("authorization header missing or not Bearer")
	// ErrEmptyToken: "Bearer" with nothing after it.
	ErrEmptyToken = errors.New("empty bearer token")
	// ErrNoAccountToken: no account login token (nor session cookie) was sent.
	ErrNoAccountToken = errors.New("no account login token")
	// ErrProgramKeyForAccount: a program API key was sent where an account login token is needed.
	ErrProgramKeyForAccount = errors.New("program API key sent for an account login token")
	// ErrCSRF: a change authenticated by the session cookie alone without the page's CSRF token.
	ErrCSRF = errors.New("missing or invalid CSRF token")
	// ErrAccountTokenForKey: an account login token sent where a program API key is needed. It is
	// apikeys.ErrUnknown (no program matches it: the interface's message), and the answer adds a hint.
	ErrAccountTokenForKey = fmt.Errorf("account login token sent for a program API key: %w", apikeys.ErrUnknown)
)

// RetiredKeyError refuses a key whose rotation deadline has passed.
type RetiredKeyError struct{ RotateBy time.Time }

func (e *RetiredKeyError) Error() string {
	return "api key retired at " + e.RotateBy.UTC().Format(time.RFC3339)
}

// Bearer is an Authorization header as the interface reads it.
type Bearer struct {
	Present    bool   // a header was sent
	WellFormed bool   // it starts with "Bearer " (or is exactly "Bearer": Go's server trims trailing spaces)
	Token      string // the token, trimmed; "" when empty
}

// ParseBearer reads an Authorization header.
func ParseBearer(h string) Bearer {
	b := Bearer{Present: h != ""}
	switch {
	case h == "Bearer":
		b.WellFormed = true
	case strings.HasPrefix(h, "Bearer "):
		b.WellFormed = true
		b.Token = strings.TrimSpace(h[len("Bearer "):])
	}
	return b
}

// Authenticator checks credentials against the database.
type Authenticator struct {
	DB sqlx.QueryerContext
	// Keys looks program keys up (in batches).
	Keys *apikeys.Lookups
	Now  func() time.Time
	// DocsURL is where key rotation is documented (rotation warnings point there).
	DocsURL string
}

// Key authenticates the request's required program API key.
func (a *Authenticator) Key(ctx context.Context) (apikeys.Key, error) {
	b := ParseBearer(request.From(ctx).Header.Get("Authorization"))
	switch {
	case !b.WellFormed:
		return apikeys.Key{}, ErrMalformedHeader
	case b.Token == "":
		return apikeys.Key{}, ErrEmptyToken
	}
	return a.check(ctx, b.Token)
}

// OptionalKey authenticates a key when one is sent (lead, test-mode click): (key, true) for a valid key,
// (zero, false) when the header is missing, malformed or its token empty, and an error for a token that
// matches no program or a retired key.
func (a *Authenticator) OptionalKey(ctx context.Context) (apikeys.Key, bool, error) {
	b := ParseBearer(request.From(ctx).Header.Get("Authorization"))
	if !b.WellFormed || b.Token == "" {
		return apikeys.Key{}, false, nil
	}
	k, err := a.check(ctx, b.Token)
	return k, err == nil, err
}

// check looks token up, refuses retired keys and notes a marked key for the rotation signals.
func (a *Authenticator) check(ctx context.Context, token string) (apikeys.Key, error) {
	if strings.HasPrefix(token, secret.AccountTokenPrefix) {
		return apikeys.Key{}, ErrAccountTokenForKey // never a program's key: no lookup
	}
	k, err := a.Keys.Authenticate(ctx, token)
	if err != nil {
		return apikeys.Key{}, err
	}
	now := a.Now()
	if k.Retired(now) {
		return apikeys.Key{}, &RetiredKeyError{RotateBy: *k.RotateBy}
	}
	if k.Marked(now) {
		m := request.From(ctx)
		m.Rotation = &k
		m.Warnings = []apierr.Warning{{
			Code: string(apierr.KindKeyRotationRequired),
			Message: "This API key is marked for mandatory rotation and stops working at " +
				k.RotateBy.UTC().Format(time.RFC3339) + ".",
			Hint:     "A workspace owner regenerates the key in the program's settings (API keys); deploy the new key before the deadline.",
			RotateBy: k.RotateBy.UTC().Format(time.RFC3339),
			DocsURL:  a.DocsURL,
		}}
	}
	return k, nil
}

// Account authenticates the request's Bearer account login token (CLI routes: no cookie).
func (a *Authenticator) Account(ctx context.Context) (accounts.Account, error) {
	b := ParseBearer(request.From(ctx).Header.Get("Authorization"))
	if !b.WellFormed {
		return a.account(ctx, "")
	}
	if isProgramKey(b.Token) {
		return accounts.Account{}, ErrProgramKeyForAccount
	}
	return a.account(ctx, b.Token)
}

// AccountOrSession authenticates the account login token from the Bearer header or the dashboard's
// session cookie. A change authenticated by the cookie alone must carry the page's CSRF token: the
// browser sends the cookie on its own, a Bearer header never. The session is checked first: a missing,
// invalid or expired one answers 401 whatever the method, and only a valid one can be refused for its
// CSRF token (403).
func (a *Authenticator) AccountOrSession(ctx context.Context) (accounts.Account, error) {
	m := request.From(ctx)
	token := ParseBearer(m.Header.Get("Authorization")).Token
	if isProgramKey(token) {
		return accounts.Account{}, ErrProgramKeyForAccount
	}
	if token != "" {
		return a.account(ctx, token)
	}
	token = request.Cookie(ctx, dashboard.SessionCookie)
	acc, err := a.account(ctx, token)
	if err != nil {
		return accounts.Account{}, err
	}
	if !request.SafeMethod(m.Method) && !dashboard.ValidCSRF(token, m.Header.Get(dashboard.CSRFHeader)) {
		return accounts.Account{}, ErrCSRF
	}
	return acc, nil
}

// isProgramKey recognises a program API key by its prefix (account login tokens have their own), so
// that the answer can say which credential the route needs instead of calling the key invalid.
func isProgramKey(token string) bool {
	return strings.HasPrefix(token, secret.ProgramKeyPrefix)
}

func (a *Authenticator) account(ctx context.Context, token string) (accounts.Account, error) {
	if token == "" {
		return accounts.Account{}, ErrNoAccountToken
	}
	return accounts.Authenticate(ctx, a.DB, token)
}

type keyKey struct{}
type accountKey struct{}

// WithKey stores the authenticated program key.
func WithKey(ctx context.Context, k apikeys.Key) context.Context {
	return context.WithValue(ctx, keyKey{}, k)
}

// errNotAuthenticated is a route whose policy did not authenticate the credential its handler asks for:
// a mistake in the spec's x-reftrack-auth, answered as a 500.
var errNotAuthenticated = errors.New("auth: the route's x-reftrack-auth did not authenticate this credential")

// ProgramKey is the program key the middleware authenticated (x-reftrack-auth: program-key).
func ProgramKey(ctx context.Context) (apikeys.Key, error) {
	if k, ok := ctx.Value(keyKey{}).(apikeys.Key); ok {
		return k, nil
	}
	return apikeys.Key{}, errNotAuthenticated
}

// WithAccount stores the authenticated account.
func WithAccount(ctx context.Context, a accounts.Account) context.Context {
	return context.WithValue(ctx, accountKey{}, a)
}

// SignedIn is the account the middleware authenticated (x-reftrack-auth: account or
// account-or-session).
func SignedIn(ctx context.Context) (accounts.Account, error) {
	if a, ok := ctx.Value(accountKey{}).(accounts.Account); ok {
		return a, nil
	}
	return accounts.Account{}, errNotAuthenticated
}
