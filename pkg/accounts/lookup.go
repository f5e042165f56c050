package accounts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// ErrNoAccount means no account has the email.
var ErrNoAccount = errors.New("no account with that email")

// ByEmail finds an account by its email, case-insensitively.
func ByEmail(ctx context.Context, db sqlx.QueryerContext, email string) (Account, error) {
	var a Account
	err := sqlx.GetContext(ctx, db, &a, `SELECT id, email, suspended_at FROM accounts WHERE lower(email) = lower($1)`, email)
	if errors.Is(err, sql.ErrNoRows) {
		return Account{}, fmt.Errorf("%w: %s", ErrNoAccount, email)
	}
	return a, err
}
