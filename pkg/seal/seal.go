// Package seal encrypts small secrets at rest (AES-256-GCM) under the server's WEBHOOK_SECRETS_KEY: webhook
// endpoints' signing secrets (under the key itself) and partners' payout details (under a key derived
// for them), so that a copy of the database alone reveals neither.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// A Sealer encrypts secrets at rest (AES-256-GCM).
type Sealer struct{ aead cipher.AEAD }

// DevelopmentKey is the key a development server uses without WEBHOOK_SECRETS_KEY: it protects nothing,
// and production refuses to start without a key of its own.
var DevelopmentKey = func() []byte { k := sha256.Sum256([]byte("reftrack development webhook secrets")); return k[:] }()

// New takes a 32-byte key.
func New(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("secrets key: want 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// ParseKey reads WEBHOOK_SECRETS_KEY: standard base64 of 32 bytes (`openssl rand -base64 32`).
func ParseKey(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, errors.New("WEBHOOK_SECRETS_KEY must be standard base64 of 32 bytes (openssl rand -base64 32)")
	}
	return b, nil
}

// Seal encrypts a secret; the nonce leads the result.
func (s *Sealer) Seal(secret string) ([]byte, error) { return s.SealFor(secret, nil) }

// Open decrypts what Seal made.
func (s *Sealer) Open(sealed []byte) (string, error) { return s.OpenFor(sealed, nil) }

// SealFor encrypts a secret bound to its owner (AES-GCM's additional data, e.g. "partner:42"): it opens
// only for the same owner, so a sealed value copied onto another row of the table does not open there.
func (s *Sealer) SealFor(secret string, owner []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, []byte(secret), owner), nil
}

// OpenFor decrypts what SealFor made for owner.
func (s *Sealer) OpenFor(sealed, owner []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed value too short")
	}
	b, err := s.aead.Open(nil, sealed[:n], sealed[n:], owner)
	if err != nil {
		return "", fmt.Errorf("sealed value: %w (is WEBHOOK_SECRETS_KEY the one it was sealed with, and is the value on its own row?)", err)
	}
	return string(b), nil
}

// Derive is the key for one purpose derived from key (HMAC-SHA-256 of the purpose): secrets of different
// purposes are sealed under different keys, from the one key an operator keeps.
func Derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
