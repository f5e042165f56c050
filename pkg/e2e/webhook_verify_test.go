package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/sdk"
)

// sdk.VerifyWebhook and the Standard Webhooks project's own Go library agree, on many random secrets, ids
// and bodies: what the library signs the SDK accepts, what a signer written from the specification signs
// the library accepts, and a delivery with one byte changed (body, id, timestamp or signature) neither
// accepts. The cases are drawn from a fixed seed, so a failure repeats; both sides read the real clock,
// with timestamps drawn within 4 minutes of it.
func TestWebhookVerifyAgainstStandardWebhooks(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2024, 6))
	for i := range 500 {
		c := randomWebhookDelivery(rng, time.Now())
		name := fmt.Sprintf("case %d (secret of %d bytes, prefix %t)", i, c.keyLen, strings.HasPrefix(c.secret, "whsec_"))
		lib, err := standardwebhooks.NewWebhook(c.secret)
		if err != nil {
			t.Fatalf("%s: NewWebhook: %v", name, err)
		}

		// The library signs, the SDK verifies.
		libSig, err := lib.Sign(c.id, c.at, c.body)
		if err != nil {
			t.Fatalf("%s: Sign: %v", name, err)
		}
		if mine := webhookSpecSign(t, c.secret, c.id, c.ts(), c.body); libSig != mine {
			t.Fatalf("%s: the library signs %s, the specification's signer %s", name, libSig, mine)
		}
		ev, err := sdk.VerifyWebhook(c.secret, c.header(c.ts(), c.id, libSig), c.body)
		if err != nil {
			t.Fatalf("%s: the SDK refuses the library's signature: %v", name, err)
		}
		if ev.ID != c.id || ev.Type != c.typ || !ev.Attempted.Equal(c.at.Truncate(time.Second)) || !ev.Timestamp.Equal(c.happened) {
			t.Fatalf("%s: event %+v, want id %s type %s attempted %v timestamp %v", name, ev, c.id, c.typ, c.at, c.happened)
		}

		// The specification's signer signs (with the signatures of a rotation around it), the library
		// verifies.
		sigs := webhookSpecSign(t, c.secret, c.id, c.ts(), c.body)
		if rng.IntN(2) == 0 {
			sigs = "v1," + base64.StdEncoding.EncodeToString(webhookRandomBytes(rng, 32)) + " " + sigs + " v2,abc"
		}
		if err := lib.Verify(c.body, c.header(c.ts(), c.id, sigs)); err != nil {
			t.Fatalf("%s: the library refuses the specification's signature %q: %v", name, sigs, err)
		}
		if _, err := sdk.VerifyWebhook(c.secret, c.header(c.ts(), c.id, sigs), c.body); err != nil {
			t.Fatalf("%s: the SDK refuses %q: %v", name, sigs, err)
		}

		// One byte changed: refused by both.
		body, id, ts, sig := c.body, c.id, c.ts(), libSig
		var changed string
		switch rng.IntN(4) {
		case 0:
			body, changed = changeOneByte(rng, c.body, 0, 255), "body"
		case 1:
			id, changed = string(changeOneByte(rng, []byte(c.id), '!', '~')), "webhook-id"
		case 2:
			ts, changed = string(changeOneByte(rng, []byte(ts), '0', '9')), "webhook-timestamp"
		case 3:
			sig, changed = string(changeOneByte(rng, []byte(libSig), '!', '~')), "webhook-signature"
		}
		h := c.header(ts, id, sig)
		if err := lib.Verify(body, h); err == nil {
			t.Fatalf("%s: the library accepts a changed %s", name, changed)
		}
		if _, err := sdk.VerifyWebhook(c.secret, h, body); !errors.Is(err, sdk.ErrWebhookSignature) {
			t.Fatalf("%s: the SDK answers a changed %s with %v, want %v", name, changed, err, sdk.ErrWebhookSignature)
		}
	}
}

// webhookDelivery is one random webhook delivery.
type webhookDelivery struct {
	secret   string
	keyLen   int
	id       string
	at       time.Time // the attempt's time, webhook-timestamp
	typ      string
	happened time.Time // the body's timestamp
	body     []byte
}

func (d webhookDelivery) ts() string { return strconv.FormatInt(d.at.Unix(), 10) }

func (d webhookDelivery) header(ts, id, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sig)
	return h
}

// randomWebhookDelivery draws a secret (usually 32 bytes as reftrack's are, sometimes another length the
// specification allows; with or without whsec_), an id, an attempt time within 4 minutes of now and an
// event body whose data holds arbitrary text.
func randomWebhookDelivery(rng *rand.Rand, now time.Time) webhookDelivery {
	d := webhookDelivery{keyLen: 32}
	if rng.IntN(4) == 0 {
		d.keyLen = 24 + rng.IntN(41)
	}
	d.secret = base64.StdEncoding.EncodeToString(webhookRandomBytes(rng, d.keyLen))
	if rng.IntN(2) == 0 {
		d.secret = "whsec_" + d.secret
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	id := []byte("msg_")
	for range 10 + rng.IntN(20) {
		id = append(id, alphabet[rng.IntN(len(alphabet))])
	}
	d.id = string(id)
	d.at = now.Add(time.Duration(rng.Int64N(int64(8*time.Minute))) - 4*time.Minute)
	d.typ = []string{"commission.created", "sale.created", "payout.paid"}[rng.IntN(3)]
	d.happened = time.Unix(1_700_000_000+rng.Int64N(100_000_000), 0).UTC()
	text := make([]rune, rng.IntN(200))
	for i := range text {
		text[i] = rune(rng.IntN(0x800)) // controls, quotes, backslashes and non-ASCII letters, escaped by json
	}
	body, err := json.Marshal(map[string]any{
		"type":      d.typ,
		"timestamp": d.happened.Format(time.RFC3339),
		"data":      map[string]any{"id": rng.Int64(), "note": string(text), "amount_cents": rng.IntN(1_000_000)},
	})
	if err != nil {
		panic(err)
	}
	d.body = body
	return d
}

// webhookSpecSign signs as the Standard Webhooks specification says, written from it rather than from either
// implementation: v1, and the base64 of the HMAC-SHA256 of "id.timestamp.body", keyed with the bytes of
// the secret's base64 after its optional whsec_ prefix.
func webhookSpecSign(t *testing.T, secret, id, ts string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// changeOneByte returns a copy of b with one byte, at a random position, replaced by another in [lo, hi].
func changeOneByte(rng *rand.Rand, b []byte, lo, hi byte) []byte {
	out := append([]byte(nil), b...)
	i := rng.IntN(len(out))
	for {
		c := lo + byte(rng.IntN(int(hi-lo)+1))
		if c != out[i] {
			out[i] = c
			return out
		}
	}
}

func webhookRandomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
