package logins

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/secret"
)

// The partner portal's sign-in: the same login sessions (and issuer redirect) as the dashboard's, bound
// to the browser that started them, ending signed in as a partner person, whose verified email links
// them to their partner records in every workspace.

// PartnerTTL is how long a portal session lasts.
const PartnerTTL = 7 * 24 * time.Hour

// Refusals of a partner sign-in.
var (
	// ErrEmailUnverified: the issuer does not say the email is verified, and the email is what links a
	// person to partner records.
	ErrEmailUnverified = errors.New("the issuer does not say the email is verified")
	// ErrNoPartnerSession: no valid portal session (none, expired, or signed out).
	ErrNoPartnerSession = errors.New("no partner session")
)

// Person is a person signed in to the partner portal.
type Person struct {
	ID    int64  `db:"id"`
	Email string `db:"email"`
	Name  string `db:"name"`
}

// StartPartner creates a pending partner sign-in bound to a browser, which goes back to returnTo (a path
// of the portal, checked by the caller) once signed in. The browser keeps the returned secret (in a
// cookie) and must show it again to finish.
func StartPartner(ctx context.Context, db sqlx.ExtContext, now time.Time, returnTo string) (Session, string, error) {
	browser, err := secret.RandomString(32)
	if err != nil {
		return Session{}, "", err
	}
	s, err := start(ctx, db, now, PurposePartner, secret.Hash(browser))
	if err != nil {
		return Session{}, "", err
	}
	if _, err := db.ExecContext(ctx, `UPDATE login_sessions SET return_to = $2 WHERE state = $1`, s.State, returnTo); err != nil {
		return Session{}, "", err
	}
	s.ReturnTo = &returnTo
	return s, browser, nil
}

// PartnerSignIn is a finished partner sign-in: the portal session's token and where to go.
type PartnerSignIn struct {
	Person    Person
	Token     string
	ExpiresAt time.Time
	ReturnTo  string
}

// SignInPartner finishes a partner sign-in with an id_token, in the browser that started it: the person
// is found by issuer and subject, else by email (then the subject is recorded), else created; the login
// session is consumed and a portal session issued.
func SignInPartner(ctx context.Context, db *sqlx.DB, v IDTokenVerifier, state, idToken, nonce, browserSecret string, now time.Time) (PartnerSignIn, error) {
	s, err := Pending(ctx, db, state, now)
	switch {
	case err != nil:
		return PartnerSignIn{}, err
	case s.Purpose != PurposePartner:
		return PartnerSignIn{}, ErrSessionNotFound
	case !s.FromBrowser(browserSecret):
		return PartnerSignIn{}, ErrOtherBrowser
	}
	id, err := v.Verify(ctx, idToken, nonce)
	if err != nil {
		return PartnerSignIn{}, err
	}
	if !id.EmailVerified {
		return PartnerSignIn{}, ErrEmailUnverified
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return PartnerSignIn{}, err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if s, err = lock(ctx, tx, state); err == nil {
		err = s.completable(now)
	}
	if err != nil {
		return PartnerSignIn{}, err
	}
	p, err := person(ctx, tx, id, now)
	if err != nil {
		return PartnerSignIn{}, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE login_sessions SET status = 'consumed', partner_person_id = $2, signed_in_at = $3,
		consumed_at = $3 WHERE state = $1`, state, p.ID, now); err != nil {
		return PartnerSignIn{}, err
	}
	tok, err := secret.RandomString(43)
	if err != nil {
		return PartnerSignIn{}, err
	}
	out := PartnerSignIn{Person: p, Token: tok, ExpiresAt: now.Add(PartnerTTL), ReturnTo: "/partners"}
	if s.ReturnTo != nil {
		out.ReturnTo = *s.ReturnTo
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO partner_sessions (person_id, token_hash, expires_at) VALUES ($1, $2, $3)`,
		p.ID, secret.Hash(tok), out.ExpiresAt); err != nil {
		return PartnerSignIn{}, err
	}
	return out, tx.Commit()
}

// person finds or creates the identity's partner person, in tx. The verified email decides (it is what
// links a person to partner records): the person is the one with that email, and the identity's subject
// is recorded on them.
//   - A subject seen before under another email (the issuer changed the person's address) follows it to
//     the new one: the old address may be someone else's now, and so are its partner records.
//   - An email held before under another subject (another issuer, one that re-keyed its users, or an
//     address the issuer gave to someone else) becomes this subject's, and the sessions signed in under
//     the other subject end.
func person(ctx context.Context, tx *sqlx.Tx, id identity.Identity, now time.Time) (Person, error) {
	var rows []struct {
		Person
		Issuer  string `db:"oidc_issuer"`
		Subject string `db:"oidc_subject"`
	}
	if err := tx.SelectContext(ctx, &rows, `SELECT id, email, name, oidc_issuer, oidc_subject FROM partner_people
		WHERE (oidc_issuer = $1 AND oidc_subject = $2) OR lower(email) = lower($3) ORDER BY id FOR UPDATE`,
		id.Issuer, id.Subject, id.Email); err != nil {
		return Person{}, err
	}
	var subjectID, emailID int64 // the rows of the subject and of the email (0: none)
	for _, r := range rows {
		if r.Issuer == id.Issuer && r.Subject == id.Subject {
			subjectID = r.ID
		}
		if strings.EqualFold(r.Email, id.Email) {
			emailID = r.ID
		}
	}
	var p Person
	switch {
	case emailID != 0 && emailID == subjectID:
		err := tx.GetContext(ctx, &p, `UPDATE partner_people SET last_signed_in = $2 WHERE id = $1 RETURNING id, email, name`, emailID, now)
		return p, err
	case emailID != 0:
		// The subject's row under its old address (if any) gives way, with its sessions.
		if subjectID != 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM partner_people WHERE id = $1`, subjectID); err != nil {
				return Person{}, err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE partner_sessions SET revoked_at = $2 WHERE person_id = $1 AND revoked_at IS NULL`,
			emailID, now); err != nil {
			return Person{}, err
		}
		err := tx.GetContext(ctx, &p, `UPDATE partner_people SET oidc_issuer = $2, oidc_subject = $3, last_signed_in = $4
			WHERE id = $1 RETURNING id, email, name`, emailID, id.Issuer, id.Subject, now)
		return p, err
	case subjectID != 0:
		err := tx.GetContext(ctx, &p, `UPDATE partner_people SET email = $2, last_signed_in = $3 WHERE id = $1 RETURNING id, email, name`,
			subjectID, id.Email, now)
		return p, err
	}
	// A new person (a concurrent first sign-in with the same email makes the same one).
	err := tx.GetContext(ctx, &p, `INSERT INTO partner_people (email, name, oidc_issuer, oidc_subject, last_signed_in)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (lower(email)) DO UPDATE SET last_signed_in = EXCLUDED.last_signed_in
		RETURNING id, email, name`, id.Email, strings.TrimSpace(id.Name), id.Issuer, id.Subject, now)
	return p, err
}

// AuthenticatePartner is the person of a portal session token (ErrNoPartnerSession when it is none).
func AuthenticatePartner(ctx context.Context, db sqlx.QueryerContext, token string, now time.Time) (Person, error) {
	if token == "" {
		return Person{}, ErrNoPartnerSession
	}
	var p Person
	err := sqlx.GetContext(ctx, db, &p, `SELECT pe.id, pe.email, pe.name FROM partner_sessions s
		JOIN partner_people pe ON pe.id = s.person_id
		WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > $2`, secret.Hash(token), now)
	if errors.Is(err, sql.ErrNoRows) {
		return Person{}, ErrNoPartnerSession
	}
	return p, err
}

// RevokePartner ends a portal session (signing out); an unknown token is not an error.
func RevokePartner(ctx context.Context, db sqlx.ExecerContext, token string, now time.Time) error {
	_, err := db.ExecContext(ctx, `UPDATE partner_sessions SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL`,
		secret.Hash(token), now)
	return err
}
