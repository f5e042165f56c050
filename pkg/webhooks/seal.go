package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// A Sealer encrypts endpoint secrets at rest (AES-256-GCM): a copy of the database alone signs nothing.
type Sealer struct{ aead cipher.AEAD }

// DevelopmentKey is the key a development server uses without WEBHOOK_SECRETS_KEY: it protects nothing,
// and production refuses to start without a key of its own.
var DevelopmentKey = func() []byte { k := sha256.Sum256([]byte("reftrack development webhook secrets")); return k[:] }()

// NewSealer takes a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("webhook secrets key: want 32 bytes, got %d", len(key))
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
func (s *Sealer) Seal(secret string) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, []byte(secret), nil), nil
}

// Open decrypts what Seal made.
func (s *Sealer) Open(sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("webhook secret: sealed value too short")
	}
	b, err := s.aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w (is WEBHOOK_SECRETS_KEY the one it was sealed with?)", err)
	}
	return string(b), nil
}
