package seal_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seal"
)

func key(label string) []byte {
	k := sha256.Sum256([]byte(label))
	return k[:]
}

func sealer(t *testing.T, k []byte) *seal.Sealer {
	t.Helper()
	s, err := seal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewTakes32Bytes(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := seal.New(make([]byte, n)); err == nil {
			t.Errorf("a key of %d bytes is taken", n)
		}
	}
	if _, err := seal.New(make([]byte, 32)); err != nil {
		t.Error(err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := sealer(t, key("round trip"))
	for _, secret := range []string{"", "whsec_abc", `{"method":"paypal","paypal_email":"ada@example.com"}`, "IBAN DE89 — Zürich 🏦",
		strings.Repeat("x", 10000), "a\x00b\xff"} {
		sealed, err := s.Seal(secret)
		if err != nil {
			t.Fatal(err)
		}
		if secret != "" && bytes.Contains(sealed, []byte(secret)) {
			t.Errorf("the sealed value holds the secret %.20q", secret)
		}
		again, err := s.Seal(secret)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(sealed, again) {
			t.Errorf("%.20q sealed twice the same (the nonce does not change)", secret)
		}
		for _, v := range [][]byte{sealed, again} {
			if got, err := s.Open(v); err != nil || got != secret {
				t.Errorf("Open = %.20q, %v; want %.20q", got, err, secret)
			}
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	k := key("right")
	s := sealer(t, k)
	sealed, err := s.Seal("the secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sealer(t, key("wrong")).Open(sealed); err == nil || !strings.Contains(err.Error(), "WEBHOOK_SECRETS_KEY") {
		t.Errorf("another key: %v", err)
	}
	// A key derived from the right one is another key too.
	if _, err := sealer(t, seal.Derive(k, "reftrack partner payout details v1")).Open(sealed); err == nil {
		t.Error("a derived key opens what the key sealed")
	}
	for name, v := range map[string][]byte{
		"empty":         nil,
		"short":         sealed[:11],
		"nonce only":    sealed[:12],
		"one byte less": sealed[:len(sealed)-1],
		"tampered":      append(append([]byte{}, sealed[:len(sealed)-1]...), sealed[len(sealed)-1]^1),
		"nonce changed": append([]byte{sealed[0] ^ 1}, sealed[1:]...),
	} {
		if got, err := s.Open(v); err == nil {
			t.Errorf("%s: opened as %q", name, got)
		}
	}
}

// A value sealed for an owner opens for that owner only (nor without one), and one sealed without an
// owner opens only without one.
func TestSealForOwner(t *testing.T) {
	s := sealer(t, key("owners"))
	sealed, err := s.SealFor("ada@example.com", []byte("partner:42"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.OpenFor(sealed, []byte("partner:42")); err != nil || got != "ada@example.com" {
		t.Errorf("OpenFor its owner = %q, %v", got, err)
	}
	for _, other := range [][]byte{[]byte("partner:43"), []byte("partner:4"), nil, {}} {
		if got, err := s.OpenFor(sealed, other); err == nil {
			t.Errorf("opened for %q as %q", other, got)
		}
	}
	if got, err := s.Open(sealed); err == nil {
		t.Errorf("Open without an owner = %q", got)
	}
	plain, err := s.Seal("whsec_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.OpenFor(plain, []byte("partner:42")); err == nil {
		t.Error("a value sealed without an owner opens for one")
	}
}

func TestDerive(t *testing.T) {
	k := key("master")
	a, b := seal.Derive(k, "reftrack partner payout details v1"), seal.Derive(k, "reftrack something else v1")
	if len(a) != 32 || len(b) != 32 {
		t.Fatalf("derived keys of %d and %d bytes", len(a), len(b))
	}
	if !bytes.Equal(a, seal.Derive(k, "reftrack partner payout details v1")) {
		t.Error("Derive is not deterministic")
	}
	if bytes.Equal(a, b) || bytes.Equal(a, k) || bytes.Equal(b, k) {
		t.Error("different purposes share a key, or a purpose has the master key")
	}
	if bytes.Equal(a, seal.Derive(key("another master"), "reftrack partner payout details v1")) {
		t.Error("different master keys derive the same key")
	}
	// What one purpose sealed, another purpose's key does not open.
	sealed, err := sealer(t, a).Seal("payout details")
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range [][]byte{b, k} {
		if _, err := sealer(t, other).Open(sealed); err == nil {
			t.Error("another purpose's key opens the sealed value")
		}
	}
}

func TestParseKey(t *testing.T) {
	raw := key("parse")
	got, err := seal.ParseKey(base64.StdEncoding.EncodeToString(raw))
	if err != nil || !bytes.Equal(got, raw) {
		t.Errorf("ParseKey = %x, %v", got, err)
	}
	for _, s := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(raw[:31]), base64.StdEncoding.EncodeToString(append(raw, 0)),
		base64.RawURLEncoding.EncodeToString(raw)} {
		if _, err := seal.ParseKey(s); err == nil {
			t.Errorf("ParseKey(%q) takes it", s)
		}
	}
}
