// Package logins runs the CLI's browser login: a session keyed by state (pending for five minutes),
// completed by a verified OpenID Connect identity, whose first poll returns an account login token once.
package logins

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/secret"
)

// SessionTTL is how long a login link stays valid.
const SessionTTL = 5 * time.Minute

// TokenTTL is how long an account login token is valid.
const TokenTTL = 90 * 24 * time.Hour

// DashboardTTL is how long a dashboard session lasts: a browser is left signed in for a week, not for
// the CLI token's ninety days.
const DashboardTTL = 7 * 24 * time.Hour

// Purposes of a login session.
const (
	PurposeCLI       = "cli"
	PurposeDashboard = "dashboard"
	// PurposePartner signs a person in to the partner portal (partners.go), not to an account.
	PurposePartner = "partner"
)

// Errors, one per documented refusal.
var (
	ErrSessionNotFound = errors.New("session not found")
	ErrSessionUsed     = errors.New("session already used")
	ErrSessionExpired  = errors.New("session expired")
	ErrConsumed        = errors.New("session already consumed")
	ErrSuspended       = errors.New("account suspended")
	ErrEmailTaken      = errors.New("the email belongs to another account and the issuer does not say it is verified")
	ErrOtherBrowser    = errors.New("the dashboard sign-in was started in another browser")
)

// Session is a login session.
type Session struct {
	State        string    `db:"state"`
	Status       string    `db:"status"`
	AccountID    *int64    `db:"account_id"`
	CodeVerifier *string   `db:"code_verifier"`
	Nonce        *string   `db:"nonce"`
	ExpiresAt    time.Time `db:"expires_at"`
	Purpose      string    `db:"purpose"`
	BrowserHash  []byte    `db:"browser_hash"`
	// ReturnTo is where a partner sign-in goes back to (a path of the portal).
	ReturnTo *string `db:"return_to"`
}

// Expired reports whether a pending session is past its five minutes.
func (s Session) Expired(now time.Time) bool {
	return s.Status == "pending" && !now.Before(s.ExpiresAt)
}

// Start creates a pending session of the CLI.
func Start(ctx context.Context, db sqlx.ExtContext, now time.Time) (Session, error) {
	return start(ctx, db, now, PurposeCLI, nil)
}

const sessionColumns = `state, status, account_id, code_verifier, nonce, expires_at, purpose, browser_hash, return_to`

// StartDashboard creates a pending dashboard session bound to a browser: the browser keeps the returned
// secret (in a cookie) and must show it again to finish the sign-in.
func StartDashboard(ctx context.Context, db sqlx.ExtContext, now time.Time) (Session, string, error) {
	browser, err := secret.RandomString(32)
	if err != nil {
		return Session{}, "", err
	}
	s, err := start(ctx, db, now, PurposeDashboard, secret.Hash(browser))
	return s, browser, err
}

func start(ctx context.Context, db sqlx.ExtContext, now time.Time, purpose string, browserHash []byte) (Session, error) {
	state, err := secret.RandomString(32)
	if err != nil {
		return Session{}, err
	}
	var s Session
	err = sqlx.GetContext(ctx, db, &s, `INSERT INTO login_sessions (state, expires_at, purpose, browser_hash) VALUES ($1, $2, $3, $4)
		RETURNING `+sessionColumns, state, now.Add(SessionTTL), purpose, browserHash)
	return s, err
}

// FromBrowser reports whether browserSecret is the one the dashboard's (or the partner portal's) session
// was started with.
func (s Session) FromBrowser(browserSecret string) bool {
	return s.Purpose != PurposeCLI && browserSecret != "" && subtle.ConstantTimeCompare(s.BrowserHash, secret.Hash(browserSecret)) == 1
}

// FinishDashboard consumes a signed-in dashboard session started by this browser and issues the
// dashboard's session token.
func FinishDashboard(ctx context.Context, db *sqlx.DB, state, browserSecret string, now time.Time) (Token, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Token{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	s, err := lock(ctx, tx, state)
	switch {
	case err != nil:
		return Token{}, err
	case s.Purpose != PurposeDashboard:
		return Token{}, ErrSessionNotFound
	case !s.FromBrowser(browserSecret):
		return Token{}, ErrOtherBrowser
	case s.Status != "signed_in" || s.AccountID == nil:
		return Token{}, ErrSessionUsed
	}
	if _, err := tx.ExecContext(ctx, `UPDATE login_sessions SET status = 'consumed', consumed_at = $2 WHERE state = $1`, state, now); err != nil {
		return Token{}, err
	}
	tok, err := MintToken(ctx, tx, *s.AccountID, "dashboard", now)
	if err != nil {
		return Token{}, err
	}
	return tok, tx.Commit()
}

// Revoke ends the login token (a dashboard sign-out); an unknown token is not an error.
func Revoke(ctx context.Context, db sqlx.ExecerContext, token string, now time.Time) error {
	_, err := db.ExecContext(ctx, `UPDATE login_tokens SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL`, secret.Hash(token), now)
	return err
}

// Get returns a session by state.
func Get(ctx context.Context, db sqlx.QueryerContext, state string) (Session, error) {
	return get(ctx, db, state, "")
}

// lock reads a session by state and locks it for the transaction.
func lock(ctx context.Context, tx *sqlx.Tx, state string) (Session, error) {
	return get(ctx, tx, state, " FOR UPDATE")
}

func get(ctx context.Context, db sqlx.QueryerContext, state, suffix string) (Session, error) {
	var s Session
	err := sqlx.GetContext(ctx, db, &s, `SELECT `+sessionColumns+` FROM login_sessions WHERE state = $1`+suffix, state)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, ErrSessionNotFound
	}
	return s, err
}

// completable is nil for a session that may still be completed: ErrSessionUsed once signed in,
// ErrSessionExpired after five minutes.
func (s Session) completable(now time.Time) error {
	switch {
	case s.Status != "pending":
		return ErrSessionUsed
	case s.Expired(now):
		return ErrSessionExpired
	}
	return nil
}

// Pending returns a session that may still be completed, else ErrSessionNotFound, ErrSessionUsed or
// ErrSessionExpired. A used or expired session is returned with its error, so that the caller can tell
// whose it was (its purpose).
func Pending(ctx context.Context, db sqlx.QueryerContext, state string, now time.Time) (Session, error) {
	s, err := Get(ctx, db, state)
	if err != nil {
		return Session{}, err
	}
	return s, s.completable(now)
}

// PrepareCodeFlow stores a PKCE verifier and nonce on a pending session, for the login page's redirect
// to a real issuer.
func PrepareCodeFlow(ctx context.Context, db sqlx.ExecerContext, state string) (verifier, nonce string, err error) {
	if verifier, err = secret.RandomString(43); err != nil { // RFC 7636: 43 to 128 characters
		return "", "", err
	}
	if nonce, err = secret.RandomString(22); err != nil {
		return "", "", err
	}
	_, err = db.ExecContext(ctx, `UPDATE login_sessions SET code_verifier = $2, nonce = $3 WHERE state = $1 AND status = 'pending'`,
		state, verifier, nonce)
	return verifier, nonce, err
}

// Account is the account a login reaches.
type Account struct {
	ID    int64
	Email string
}

// Complete signs a pending session in as the identity's account, creating the account and its
// workspace on a first login.
func Complete(ctx context.Context, db *sqlx.DB, state string, id identity.Identity, now time.Time) (Account, error) {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Account{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	s, err := lock(ctx, tx, state)
	if err == nil && s.Purpose == PurposePartner {
		err = ErrSessionNotFound // a partner sign-in never reaches an account
	}
	if err == nil {
		err = s.completable(now)
	}
	if err != nil {
		return Account{}, err
	}
	acct, err := login(ctx, tx, id)
	if err != nil {
		return Account{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE login_sessions SET status = 'signed_in', account_id = $2, signed_in_at = $3
		WHERE state = $1`, state, acct.ID, now); err != nil {
		return Account{}, err
	}
	return acct, tx.Commit()
}

// login finds the identity's account (by issuer and subject, else by a verified email, then recording
// the subject) or creates it with its own workspace, and links invitations sent to its email.
func login(ctx context.Context, tx *sqlx.Tx, id identity.Identity) (Account, error) {
	var a struct {
		ID        int64      `db:"id"`
		Email     string     `db:"email"`
		Suspended *time.Time `db:"suspended_at"`
		Subject   *string    `db:"oidc_subject"`
	}
	err := tx.GetContext(ctx, &a, `SELECT id, email, suspended_at, oidc_subject FROM accounts
		WHERE oidc_issuer = $1 AND oidc_subject = $2`, id.Issuer, id.Subject)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.GetContext(ctx, &a, `SELECT id, email, suspended_at, oidc_subject FROM accounts WHERE lower(email) = lower($1)`, id.Email)
		switch {
		case err == nil && !id.EmailVerified:
			return Account{}, ErrEmailTaken
		case err == nil && a.Subject == nil:
			if err := accounts.RecordSubject(ctx, tx, a.ID, id.Issuer, id.Subject); err != nil {
				return Account{}, err
			}
		case err == nil:
			// The email is another subject's (another issuer, or the issuer re-keyed its users): the
			// verified email decides, the recorded subject stays.
		case errors.Is(err, sql.ErrNoRows):
			return create(ctx, tx, id)
		default:
			return Account{}, err
		}
	} else if err != nil {
		return Account{}, err
	}
	if a.Suspended != nil {
		return Account{}, ErrSuspended
	}
	if err := accounts.LinkInvitations(ctx, tx, a.ID, a.Email); err != nil {
		return Account{}, err
	}
	return Account{ID: a.ID, Email: a.Email}, nil
}

func create(ctx context.Context, tx *sqlx.Tx, id identity.Identity) (Account, error) {
	name := strings.TrimSpace(id.Name)
	acctID, err := accounts.Create(ctx, tx, accounts.NewAccount{Email: id.Email, Name: name, Issuer: id.Issuer, Subject: id.Subject})
	if err != nil {
		return Account{}, err
	}
	if name == "" {
		name = id.Email
	}
	if _, err := accounts.CreateWorkspace(ctx, tx, name+"'s workspace", acctID, id.Email); err != nil {
		return Account{}, err
	}
	return Account{ID: acctID, Email: id.Email}, accounts.LinkInvitations(ctx, tx, acctID, id.Email)
}

// Token is a minted account login token.
type Token struct {
	Plain       string
	AccountID   int64
	Email       string
	WorkspaceID *int64
	ExpiresAt   time.Time
}

// Poll answers a poll: the session's status, and for the first poll after sign-in a new login token
// (the session is consumed). A pending session past its five minutes is "expired".
func Poll(ctx context.Context, db *sqlx.DB, state string, now time.Time) (string, *Token, error) {
	s, err := Get(ctx, db, state)
	if err != nil {
		return "", nil, err
	}
	switch {
	case s.Purpose != PurposeCLI:
		return "", nil, ErrSessionNotFound // a dashboard sign-in never hands its token to a poller
	case s.Status == "consumed":
		return "", nil, ErrConsumed
	case s.Expired(now):
		return "expired", nil, nil
	case s.Status == "pending":
		return "pending", nil, nil
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return "", nil, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var accountID int64
	err = tx.GetContext(ctx, &accountID, `UPDATE login_sessions SET status = 'consumed', consumed_at = $2
		WHERE state = $1 AND status = 'signed_in' AND purpose = 'cli' RETURNING account_id`, state, now)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, ErrConsumed // a concurrent poll took it
	}
	if err != nil {
		return "", nil, err
	}
	tok, err := MintToken(ctx, tx, accountID, "cli", now)
	if err != nil {
		return "", nil, err
	}
	return "complete", &tok, tx.Commit()
}

// MintToken issues a login token of kind (cli, dashboard, or seed for `reftrackd seed`) for the account,
// in the caller's transaction if any. Its WorkspaceID is the account's first workspace (one it owns, if
// any).
func MintToken(ctx context.Context, tx sqlx.ExtContext, accountID int64, kind string, now time.Time) (Token, error) {
	s, err := secret.New(secret.AccountTokenPrefix)
	if err != nil {
		return Token{}, err
	}
	ttl := TokenTTL
	if kind == "dashboard" {
		ttl = DashboardTTL
	}
	t := Token{Plain: s.Plain, AccountID: accountID, ExpiresAt: now.Add(ttl)}
	if _, err := tx.ExecContext(ctx, `INSERT INTO login_tokens (account_id, kind, token_hash, last4, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		accountID, kind, s.Hash, s.Last4, t.ExpiresAt); err != nil {
		return Token{}, err
	}
	if err := sqlx.GetContext(ctx, tx, &t.Email, `SELECT email FROM accounts WHERE id = $1`, accountID); err != nil {
		return Token{}, err
	}
	ms, err := accounts.Memberships(ctx, tx, accountID)
	if err != nil {
		return Token{}, err
	}
	if len(ms) > 0 {
		t.WorkspaceID = &ms[0].WorkspaceID
	}
	return t, nil
}
