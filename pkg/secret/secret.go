// Package secret makes the bearer secrets reftrack issues (program API keys, account login tokens):
// random, prefixed, stored only as a SHA-256 hash and shown afterwards only masked.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
)

// Prefixes of the secrets, so that a leaked one is recognisable (and scanners can find it).
const (
	ProgramKeyPrefix   = "rt_"
	AccountTokenPrefix = "rtu_"
)

// bodyLen is the number of base62 characters after the prefix (about 238 bits).
const bodyLen = 40

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Secret is a freshly issued secret: Plain is shown once, Hash and Last4 are stored.
type Secret struct {
	Plain string
	Hash  []byte
	Last4 string
}

// New issues a secret with prefix.
func New(prefix string) (Secret, error) {
	body, err := randomString(bodyLen)
	if err != nil {
		return Secret{}, err
	}
	plain := prefix + body
	return Secret{Plain: plain, Hash: Hash(plain), Last4: plain[len(plain)-4:]}, nil
}

// Hash is what the database stores for a secret.
func Hash(plain string) []byte {
	sum := sha256.Sum256([]byte(plain))
	return sum[:]
}

// Mask is how a stored secret is shown: its prefix, an ellipsis and its last four characters.
func Mask(prefix, last4 string) string { return prefix + "…" + last4 }

// randomString returns n base62 characters from crypto/rand, without modulo bias.
func randomString(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random: %w", err)
		}
		for _, b := range buf {
			if b >= 248 { // 248 = 4 × 62: keep only bytes that map evenly
				continue
			}
			out = append(out, base62[b%62])
			if len(out) == n {
				break
			}
		}
	}
	return string(out), nil
}

// RandomString returns n unguessable characters from [0-9A-Za-z] (for short links and slugs).
func RandomString(n int) (string, error) { return randomString(n) }
