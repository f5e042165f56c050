package logins

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"
)

// SignInCLI completes a CLI login session with an id_token through the CLI's callback (SignIn). A
// dashboard sign-in finishes only in the browser that started it (the login page), never this way: its
// session is ErrSessionNotFound here.
func SignInCLI(ctx context.Context, db *sqlx.DB, v IDTokenVerifier, state, idToken string, now time.Time) (Account, error) {
	if s, err := Get(ctx, db, state); err == nil && s.Purpose != PurposeCLI {
		return Account{}, ErrSessionNotFound
	}
	return SignIn(ctx, db, v, state, idToken, "", now)
}
