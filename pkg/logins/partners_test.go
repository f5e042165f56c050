package logins_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/logins"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// tokens is an id_token verifier that knows the identities of a few raw tokens.
type tokens map[string]identity.Identity

func (v tokens) Verify(_ context.Context, raw, _ string) (identity.Identity, error) {
	if id, ok := v[raw]; ok {
		return id, nil
	}
	return identity.Identity{}, fmt.Errorf("%w: unknown test token", identity.ErrInvalidToken)
}

// partnerWorld is a database, a clock and the identities the issuer vouches for.
type partnerWorld struct {
	t   *testing.T
	db  *dbtest.Database
	now time.Time
	ids tokens
}

func newPartnerWorld(t *testing.T) *partnerWorld {
	return &partnerWorld{t: t, db: dbtest.New(t), now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), ids: tokens{}}
}

// identity registers an identity of the issuer and returns its raw token.
func (w *partnerWorld) identity(issuer, subject, email string, verified bool) string {
	raw := fmt.Sprintf("tok-%d", len(w.ids))
	w.ids[raw] = identity.Identity{Issuer: issuer, Subject: subject, Email: email, EmailVerified: verified, Name: " Pat "}
	return raw
}

// start begins a partner sign-in and returns its state and browser secret.
func (w *partnerWorld) start(returnTo string) (string, string) {
	w.t.Helper()
	s, browser, err := logins.StartPartner(w.t.Context(), w.db, w.now, returnTo)
	if err != nil {
		w.t.Fatal(err)
	}
	if s.Purpose != logins.PurposePartner || s.ReturnTo == nil || *s.ReturnTo != returnTo || browser == "" {
		w.t.Fatalf("started %+v, %q", s, browser)
	}
	return s.State, browser
}

// signIn runs a whole sign-in with the raw token.
func (w *partnerWorld) signIn(raw string) logins.PartnerSignIn {
	w.t.Helper()
	state, browser := w.start("/partners")
	in, err := logins.SignInPartner(w.t.Context(), w.db.DB, w.ids, state, raw, "", browser, w.now)
	if err != nil {
		w.t.Fatalf("sign in: %v", err)
	}
	return in
}

// authenticated is the person of a session token now (ok false when it is no session).
func (w *partnerWorld) authenticated(token string) (logins.Person, bool) {
	w.t.Helper()
	p, err := logins.AuthenticatePartner(w.t.Context(), w.db, token, w.now)
	if errors.Is(err, logins.ErrNoPartnerSession) {
		return p, false
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return p, true
}

func (w *partnerWorld) count(query string, args ...any) int {
	w.t.Helper()
	var n int
	if err := w.db.Get(&n, query, args...); err != nil {
		w.t.Fatal(err)
	}
	return n
}

// A partner sign-in: the login session is consumed, a portal session of 7 days issued, and the way back
// kept; the session ends at its expiry or when revoked.
func TestSignInPartner(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	ctx := t.Context()
	state, browser := w.start("/partners/invitations/abc")
	in, err := logins.SignInPartner(ctx, w.db.DB, w.ids, state, w.identity("https://issuer.example", "sub-1", "Ann@Example.com", true), "", browser, w.now)
	if err != nil {
		t.Fatal(err)
	}
	if in.Person.Email != "Ann@Example.com" || in.Person.Name != "Pat" || in.ReturnTo != "/partners/invitations/abc" ||
		!in.ExpiresAt.Equal(w.now.Add(logins.PartnerTTL)) || len(in.Token) < 40 {
		t.Errorf("signed in = %+v", in)
	}
	if n := w.count(`SELECT count(*) FROM login_sessions WHERE state = $1 AND status = 'consumed' AND partner_person_id = $2
		AND account_id IS NULL`, state, in.Person.ID); n != 1 {
		t.Error("the login session is not consumed for the person")
	}
	if n := w.count(`SELECT count(*) FROM accounts`); n != 0 {
		t.Error("a partner sign-in made an account")
	}
	if p, ok := w.authenticated(in.Token); !ok || p != in.Person {
		t.Errorf("authenticated = %+v, %v", p, ok)
	}
	for _, tok := range []string{"", "nosuchtoken", in.Token + "x"} {
		if _, ok := w.authenticated(tok); ok {
			t.Errorf("token %q authenticates", tok)
		}
	}
	// The login session is used: it signs nobody in again, nor an account, nor a CLI poll.
	if _, err := logins.SignInPartner(ctx, w.db.DB, w.ids, state, w.identity("https://issuer.example", "sub-1", "ann@example.com", true), "", browser, w.now); !errors.Is(err, logins.ErrSessionUsed) {
		t.Errorf("again: %v", err)
	}

	// 7 days, to the second.
	w.now = w.now.Add(logins.PartnerTTL - time.Second)
	if _, ok := w.authenticated(in.Token); !ok {
		t.Error("a session ends before its 7 days")
	}
	w.now = w.now.Add(time.Second)
	if _, ok := w.authenticated(in.Token); ok {
		t.Error("a session outlives its 7 days")
	}

	// Revoked: ends at once; an unknown or revoked token revokes nothing, without an error.
	in = w.signIn(w.identity("https://issuer.example", "sub-1", "ann@example.com", true))
	for range 2 {
		if err := logins.RevokePartner(ctx, w.db, in.Token, w.now); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := w.authenticated(in.Token); ok {
		t.Error("a revoked session works")
	}
	if err := logins.RevokePartner(ctx, w.db, "nosuchtoken", w.now); err != nil {
		t.Error(err)
	}
}

// Refusals leave the login session pending and write nothing: another browser, an email the issuer does
// not say is verified, a token it does not vouch for; a login session of another purpose, expired, used
// or unknown is refused as such.
func TestSignInPartnerRefusals(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	ctx := t.Context()
	good := w.identity("https://issuer.example", "sub-1", "ann@example.com", true)
	state, browser := w.start("/partners")
	_, other := w.start("/partners")
	for _, c := range []struct {
		name, raw, browser string
		want               error
	}{
		{"no browser secret", good, "", logins.ErrOtherBrowser},
		{"another sign-in's browser", good, other, logins.ErrOtherBrowser},
		{"unverified email", w.identity("https://issuer.example", "sub-2", "bob@example.com", false), browser, logins.ErrEmailUnverified},
		{"unknown token", "forged", browser, identity.ErrInvalidToken},
	} {
		if _, err := logins.SignInPartner(ctx, w.db.DB, w.ids, state, c.raw, "", c.browser, w.now); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if n := w.count(`SELECT count(*) FROM login_sessions WHERE state = $1 AND status = 'pending'`, state); n != 1 {
		t.Error("a refusal changed the login session")
	}
	if n := w.count(`SELECT count(*) FROM partner_people`) + w.count(`SELECT count(*) FROM partner_sessions`); n != 0 {
		t.Error("a refusal made a person or a session")
	}

	// A partner sign-in completes no account login, and the CLI's poll knows nothing of it.
	if _, err := logins.Complete(ctx, w.db.DB, state, w.ids[good], w.now); !errors.Is(err, logins.ErrSessionNotFound) {
		t.Errorf("Complete of a partner sign-in: %v", err)
	}
	if _, err := logins.SignInCLI(ctx, w.db.DB, w.ids, state, good, w.now); !errors.Is(err, logins.ErrSessionNotFound) {
		t.Errorf("SignInCLI of a partner sign-in: %v", err)
	}
	if _, _, err := logins.Poll(ctx, w.db.DB, state, w.now); !errors.Is(err, logins.ErrSessionNotFound) {
		t.Errorf("Poll of a partner sign-in: %v", err)
	}

	// Login sessions of the dashboard and the CLI are not partner sign-ins.
	dash, dashBrowser, err := logins.StartDashboard(ctx, w.db, w.now)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := logins.Start(ctx, w.db, w.now)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]struct{ state, browser string }{"dashboard": {dash.State, dashBrowser}, "cli": {cli.State, ""}, "unknown": {"nosuchstate", browser}} {
		if _, err := logins.SignInPartner(ctx, w.db.DB, w.ids, s.state, good, "", s.browser, w.now); !errors.Is(err, logins.ErrSessionNotFound) {
			t.Errorf("%s session: %v", name, err)
		}
	}
	// Expired after 5 minutes.
	w.now = w.now.Add(logins.SessionTTL)
	if _, err := logins.SignInPartner(ctx, w.db.DB, w.ids, state, good, "", browser, w.now); !errors.Is(err, logins.ErrSessionExpired) {
		t.Errorf("expired: %v", err)
	}
	if n := w.count(`SELECT count(*) FROM partner_people`); n != 0 {
		t.Error("an expired sign-in made a person")
	}
}

// Who a sign-in reaches: the verified email decides. The same subject is the same person; an email held
// under another subject becomes this one's (the other subject's sessions end); a subject whose issuer
// changed its address follows it, and the old address is free for whoever has it now.
func TestSignInPartnerPeople(t *testing.T) {
	t.Parallel()
	w := newPartnerWorld(t)
	const issuer, other = "https://issuer.example", "https://other-issuer.example"
	first := w.signIn(w.identity(issuer, "sub-ann", "ann@example.com", true))
	again := w.signIn(w.identity(issuer, "sub-ann", "ann@example.com", true))
	if again.Person != first.Person {
		t.Errorf("the same subject: %+v, then %+v", first.Person, again.Person)
	}
	if _, ok := w.authenticated(first.Token); !ok {
		t.Error("a second sign-in of the same subject ended the first session")
	}

	// The email under another issuer's subject: the same person, re-keyed; sessions signed in under the
	// previous subject end.
	moved := w.signIn(w.identity(other, "sub-x", "ANN@example.com", true))
	if moved.Person.ID != first.Person.ID {
		t.Errorf("the same email under another subject is person %d, want %d", moved.Person.ID, first.Person.ID)
	}
	if n := w.count(`SELECT count(*) FROM partner_people WHERE id = $1 AND oidc_issuer = $2 AND oidc_subject = 'sub-x'`, first.Person.ID, other); n != 1 {
		t.Error("the person's subject is not the new one")
	}
	for _, tok := range []string{first.Token, again.Token} {
		if _, ok := w.authenticated(tok); ok {
			t.Error("a session of the email's previous subject still works")
		}
	}
	if _, ok := w.authenticated(moved.Token); !ok {
		t.Error("the new subject's session does not work")
	}

	// The issuer changed the subject's address: the person is known by the new one from now on, and the
	// old one reaches them no more.
	renamed := w.signIn(w.identity(other, "sub-x", "ann.new@example.com", true))
	if renamed.Person.ID != first.Person.ID || renamed.Person.Email != "ann.new@example.com" {
		t.Errorf("after the issuer's change of address: %+v", renamed.Person)
	}
	if p, ok := w.authenticated(moved.Token); !ok || p.Email != "ann.new@example.com" {
		t.Errorf("the subject's earlier session reads %+v, %v", p, ok)
	}
	// Whoever has the old address now is another person.
	newcomer := w.signIn(w.identity(issuer, "sub-newcomer", "ann@example.com", true))
	if newcomer.Person.ID == first.Person.ID || newcomer.Person.Email != "ann@example.com" {
		t.Errorf("the old address's new holder = %+v", newcomer.Person)
	}

	// A subject whose new address another person held: that person is this subject's now, and the subject's
	// row under its old address is gone (with its sessions).
	bob := w.signIn(w.identity(issuer, "sub-bob", "bob@example.com", true))
	took := w.signIn(w.identity(issuer, "sub-bob", "ann@example.com", true))
	if took.Person.ID != newcomer.Person.ID {
		t.Errorf("took = %+v, want the address's person %d", took.Person, newcomer.Person.ID)
	}
	if _, ok := w.authenticated(bob.Token); ok {
		t.Error("the subject's session under its old address still works")
	}
	if _, ok := w.authenticated(newcomer.Token); ok {
		t.Error("the address's previous subject's session still works")
	}
	if n := w.count(`SELECT count(*) FROM partner_people WHERE lower(email) = 'bob@example.com'`); n != 0 {
		t.Error("the subject's row under its old address is left")
	}
	if n := w.count(`SELECT count(*) FROM partner_people`); n != 2 {
		t.Errorf("%d people, want 2 (ann.new@ and ann@)", n)
	}
}
