package identity

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
)

// DevIssuer is an OpenID Connect issuer for development and tests: a signing key generated at start,
// discovery, JWKS, an authorization endpoint whose form signs anyone in, and a token endpoint with PKCE.
// reftrackd runs one under {BASE_URL}/dev/oidc when no OIDC_ISSUER is configured, never in production.
type DevIssuer struct {
	issuer   string
	clientID string
	key      *rsa.PrivateKey
	keyID    string
	signer   jose.Signer
	now      func() time.Time

	mu    sync.Mutex
	codes map[string]authCode
}

// authCode is an issued authorization code, redeemable once within a minute.
type authCode struct {
	clientID, redirectURI, challenge, nonce, email, name string
	expires                                              time.Time
}

// TokenTTL is how long a development id_token is valid.
const TokenTTL = 10 * time.Minute

// NewDevIssuer makes an issuer at issuerURL whose tokens are for clientID, signed with key (nil: a key
// generated now) and dated by now.
func NewDevIssuer(issuerURL, clientID string, key *rsa.PrivateKey, now func() time.Time) (*DevIssuer, error) {
	if key == nil {
		var err error
		if key, err = NewSigningKey(); err != nil {
			return nil, err
		}
	}
	var kid [8]byte
	if _, err := rand.Read(kid[:]); err != nil {
		return nil, err
	}
	d := &DevIssuer{issuer: strings.TrimRight(issuerURL, "/"), clientID: clientID, key: key,
		keyID: hex.EncodeToString(kid[:]), now: now, codes: map[string]authCode{}}
	var err error
	d.signer, err = jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", d.keyID))
	if err != nil {
		return nil, err
	}
	return d, nil
}

// NewSigningKey generates a development issuer's signing key.
func NewSigningKey() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }

// Issuer is the issuer URL.
func (d *DevIssuer) Issuer() string { return d.issuer }

// ClientID is the audience of its tokens.
func (d *DevIssuer) ClientID() string { return d.clientID }

// Verifier checks this issuer's tokens with go-oidc, as a real issuer's are (its key is known in
// process, so no HTTP round trip to itself is needed).
func (d *DevIssuer) Verifier() *Verifier {
	ks := &oidc.StaticKeySet{PublicKeys: []crypto.PublicKey{&d.key.PublicKey}}
	return &Verifier{issuer: d.issuer, v: oidc.NewVerifier(d.issuer, ks, &oidc.Config{ClientID: d.clientID, Now: d.now})}
}

// ErrBadEmail refuses a sign-in without a usable email.
var ErrBadEmail = errors.New("a valid email is required")

// maxEmailLength is the longest address (RFC 5321's path limit, less its angle brackets). Accounts are
// found by email through an index, which a far longer one would not fit.
const maxEmailLength = 254

// usableEmail is email as a bare address, if it is one of at most maxEmailLength characters.
func usableEmail(email string) (string, bool) {
	email = strings.TrimSpace(email)
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || len(email) > maxEmailLength {
		return "", false
	}
	return addr.Address, true
}

// Mint signs an id_token for email (the subject is derived from it, so the same email is the same
// person across restarts).
func (d *DevIssuer) Mint(email, name, nonce string) (string, error) {
	addr, ok := usableEmail(email)
	if !ok {
		return "", ErrBadEmail
	}
	email = strings.ToLower(addr)
	sum := sha256.Sum256([]byte(email))
	now := d.now()
	claims := map[string]any{
		"iss": d.issuer, "sub": "dev|" + hex.EncodeToString(sum[:12]), "aud": d.clientID,
		"iat": now.Unix(), "exp": now.Add(TokenTTL).Unix(), "email": email, "email_verified": true,
	}
	if name != "" {
		claims["name"] = name
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	obj, err := d.signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

// Discovery is the issuer's discovery document.
func (d *DevIssuer) Discovery() map[string]any {
	return map[string]any{
		"issuer":                                d.issuer,
		"authorization_endpoint":                d.issuer + "/authorize",
		"token_endpoint":                        d.issuer + "/token",
		"jwks_uri":                              d.issuer + "/jwks",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"code_challenge_methods_supported":      []string{"S256"},
		"scopes_supported":                      []string{"openid", "email", "profile"},
		"claims_supported":                      []string{"iss", "sub", "aud", "exp", "iat", "email", "email_verified", "name", "nonce"},
	}
}

// JWKS is the issuer's public key set.
func (d *DevIssuer) JWKS() map[string]any {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &d.key.PublicKey, KeyID: d.keyID, Algorithm: "RS256", Use: "sig"}}}
	b, _ := json.Marshal(set)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// AuthRequest is an authorization request, as the authorization endpoint receives it.
type AuthRequest struct {
	ClientID, RedirectURI, State, Nonce, CodeChallenge, CodeChallengeMethod string
}

// Check refuses what this issuer does not serve: another client, a missing redirect, no PKCE.
func (d *DevIssuer) Check(r AuthRequest) error {
	switch {
	case r.ClientID != d.clientID:
		return errors.New("unknown client_id")
	case r.RedirectURI == "":
		return errors.New("redirect_uri is required")
	case r.CodeChallenge == "" || r.CodeChallengeMethod != "S256":
		return errors.New("PKCE with code_challenge_method S256 is required")
	}
	return nil
}

// Authorize signs email in for the request and returns the code to send back.
func (d *DevIssuer) Authorize(r AuthRequest, email, name string) (string, error) {
	if err := d.Check(r); err != nil {
		return "", err
	}
	if _, ok := usableEmail(email); !ok {
		return "", ErrBadEmail
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	code := base64.RawURLEncoding.EncodeToString(b[:])
	d.mu.Lock()
	defer d.mu.Unlock()
	for c, ac := range d.codes { // forget expired codes
		if d.now().After(ac.expires) {
			delete(d.codes, c)
		}
	}
	d.codes[code] = authCode{clientID: r.ClientID, redirectURI: r.RedirectURI, challenge: r.CodeChallenge,
		nonce: r.Nonce, email: email, name: name, expires: d.now().Add(time.Minute)}
	return code, nil
}

// TokenError is an RFC 6749 error of the token endpoint.
type TokenError struct{ Code, Description string }

func (e *TokenError) Error() string { return e.Code + ": " + e.Description }

// Exchange redeems a code once, checking the client, the redirect URI and the PKCE verifier.
func (d *DevIssuer) Exchange(_ context.Context, grantType, code, redirectURI, clientID, verifier string) (string, error) {
	if grantType != "authorization_code" {
		return "", &TokenError{"unsupported_grant_type", "only authorization_code is supported"}
	}
	d.mu.Lock()
	ac, ok := d.codes[code]
	delete(d.codes, code)
	d.mu.Unlock()
	sum := sha256.Sum256([]byte(verifier))
	switch {
	case !ok || d.now().After(ac.expires):
		return "", &TokenError{"invalid_grant", "unknown, used or expired code"}
	case ac.clientID != clientID || ac.redirectURI != redirectURI:
		return "", &TokenError{"invalid_grant", "client_id or redirect_uri does not match the authorization"}
	case subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(ac.challenge)) != 1:
		return "", &TokenError{"invalid_grant", "code_verifier does not match the code_challenge"}
	}
	return d.Mint(ac.email, ac.name, ac.nonce)
}
