package logins

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/identity"
)

// IDTokenVerifier checks an id_token (identity.Verifier); its refusals wrap identity.ErrInvalidToken.
type IDTokenVerifier interface {
	Verify(ctx context.Context, raw, nonce string) (identity.Identity, error)
}

// SignIn completes a pending session with an id_token: the one path of the CLI's callback, the login
// page's development form and the issuer's redirect. The session is checked before the token, so a
// stale link says so whatever token comes with it.
func SignIn(ctx context.Context, db *sqlx.DB, v IDTokenVerifier, state, idToken, nonce string, now time.Time) (Account, error) {
	if _, err := Pending(ctx, db, state, now); err != nil {
		return Account{}, err
	}
	id, err := v.Verify(ctx, idToken, nonce)
	if err != nil {
		return Account{}, err
	}
	return Complete(ctx, db, state, id, now)
}
