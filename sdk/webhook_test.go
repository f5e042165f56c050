package sdk

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A delivery as reftrack sends it, signed at testNow with testSecret.
var (
	testKey    = []byte("0123456789abcdef0123456789abcdef") // 32 bytes, as reftrack's secrets
	testSecret = "whsec_" + base64.StdEncoding.EncodeToString(testKey)
	otherKey   = []byte("fedcba9876543210fedcba9876543210")
	testNow    = time.Unix(1750000000, 0)
	testTS     = "1750000000"
	testID     = "msg_2ZxGgk3nTZ7C8sPqW9aLr4mE"
	testBody   = `{"type": "commission.created", "timestamp": "2025-06-15T17:06:40+02:00", "data": {"id": 42, "amount_cents": 980}}`
)

// sign is the specification's signature: v1, and the base64 of the HMAC-SHA256 of id.timestamp.body.
func sign(key []byte, id, ts, body string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// delivery is the headers of a delivery; an empty value leaves its header out.
func delivery(id, ts string, signatures ...string) http.Header {
	h := http.Header{}
	for name, v := range map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": strings.Join(signatures, " ")} {
		if v != "" {
			h.Set(name, v)
		}
	}
	return h
}

func TestVerifyWebhook(t *testing.T) {
	t.Parallel()
	valid := sign(testKey, testID, testTS, testBody)
	validB64 := strings.TrimPrefix(valid, "v1,")
	otherSecret := "whsec_" + base64.StdEncoding.EncodeToString(otherKey)
	tests := []struct {
		name   string
		secret string
		header http.Header
		body   string
		now    time.Time
		want   error // nil: the delivery verifies
	}{
		{"valid", testSecret, delivery(testID, testTS, valid), testBody, testNow, nil},
		{"secret without whsec_", strings.TrimPrefix(testSecret, "whsec_"), delivery(testID, testTS, valid), testBody, testNow, nil},
		{"rotation: the old secret's signature, then the new one's", testSecret,
			delivery(testID, testTS, sign(otherKey, testID, testTS, testBody), valid), testBody, testNow, nil},
		{"other versions and malformed entries around a valid one", testSecret,
			delivery(testID, testTS, "v2,"+validB64, "v1,not*base64", "v1", valid, "v1a,"+validB64), testBody, testNow, nil},
		{"signatures in two header lines", testSecret,
			http.Header{"Webhook-Id": {testID}, "Webhook-Timestamp": {testTS}, "Webhook-Signature": {sign(otherKey, testID, testTS, testBody), valid}},
			testBody, testNow, nil},
		{"lower-case header keys", testSecret,
			http.Header{"webhook-id": {testID}, "webhook-timestamp": {testTS}, "webhook-signature": {valid}}, testBody, testNow, nil},

		{"tampered body", testSecret, delivery(testID, testTS, valid), strings.Replace(testBody, "980", "9800", 1), testNow, ErrWebhookSignature},
		{"body with a trailing newline", testSecret, delivery(testID, testTS, valid), testBody + "\n", testNow, ErrWebhookSignature},
		{"tampered id", testSecret, delivery("msg_2ZxGgk3nTZ7C8sPqW9aLr4mF", testTS, valid), testBody, testNow, ErrWebhookSignature},
		{"tampered timestamp", testSecret, delivery(testID, "1750000001", valid), testBody, testNow, ErrWebhookSignature},
		{"wrong secret", otherSecret, delivery(testID, testTS, valid), testBody, testNow, ErrWebhookSignature},
		{"signature of the id and timestamp swapped", testSecret,
			delivery(testID, testTS, sign(testKey, testTS, testID, testBody)), testBody, testNow, ErrWebhookSignature},

		{"5 min in the past", testSecret, delivery(testID, testTS, valid), testBody, testNow.Add(5 * time.Minute), nil},
		{"5 min in the future", testSecret, delivery(testID, testTS, valid), testBody, testNow.Add(-5 * time.Minute), nil},
		{"5 min 1 s in the past", testSecret, delivery(testID, testTS, valid), testBody, testNow.Add(5*time.Minute + time.Second), ErrWebhookTimestamp},
		{"5 min 1 s in the future", testSecret, delivery(testID, testTS, valid), testBody, testNow.Add(-5*time.Minute - time.Second), ErrWebhookTimestamp},
		{"a forgery out of tolerance is a signature error", testSecret, delivery(testID, testTS, valid), testBody + " ", testNow.Add(time.Hour), ErrWebhookSignature},

		{"no webhook-id", testSecret, delivery("", testTS, valid), testBody, testNow, ErrWebhookHeaders},
		{"no webhook-timestamp", testSecret, delivery(testID, "", valid), testBody, testNow, ErrWebhookHeaders},
		{"no webhook-signature", testSecret, delivery(testID, testTS), testBody, testNow, ErrWebhookHeaders},
		{"blank webhook-signature", testSecret, delivery(testID, testTS, "  "), testBody, testNow, ErrWebhookHeaders},
		{"timestamp in milliseconds' form", testSecret, delivery(testID, "1750000000.000", sign(testKey, testID, "1750000000.000", testBody)), testBody, testNow, ErrWebhookHeaders},
		{"timestamp with a sign", testSecret, delivery(testID, "+1750000000", sign(testKey, testID, "+1750000000", testBody)), testBody, testNow, ErrWebhookHeaders},
		{"timestamp as a date", testSecret, delivery(testID, "2025-06-15T15:06:40Z", valid), testBody, testNow, ErrWebhookHeaders},
		{"timestamp beyond int64", testSecret, delivery(testID, "99999999999999999999", valid), testBody, testNow, ErrWebhookHeaders},

		{"v1 with bad base64", testSecret, delivery(testID, testTS, "v1,"+validB64[:20]+"*"+validB64[21:]), testBody, testNow, ErrWebhookSignature},
		{"v1 with unpadded base64", testSecret, delivery(testID, testTS, strings.TrimRight(valid, "=")), testBody, testNow, ErrWebhookSignature},
		{"v2 only", testSecret, delivery(testID, testTS, "v2,"+validB64), testBody, testNow, ErrWebhookSignature},
		{"no comma", testSecret, delivery(testID, testTS, "v1"+validB64), testBody, testNow, ErrWebhookSignature},
		{"v1 with nothing", testSecret, delivery(testID, testTS, "v1,"), testBody, testNow, ErrWebhookSignature},
		{"the bare base64", testSecret, delivery(testID, testTS, validB64), testBody, testNow, ErrWebhookSignature},

		{"secret not base64", "whsec_not base64!", delivery(testID, testTS, valid), testBody, testNow, ErrWebhookSecret},
		{"secret with its prefix twice", "whsec_" + testSecret, delivery(testID, testTS, valid), testBody, testNow, ErrWebhookSecret},
		{"empty secret", "", delivery(testID, testTS, valid), testBody, testNow, ErrWebhookSecret},
		{"only the prefix", "whsec_", delivery(testID, testTS, valid), testBody, testNow, ErrWebhookSecret},

		{"signed body that is not JSON", testSecret, delivery(testID, testTS, sign(testKey, testID, testTS, "not json")), "not json", testNow, ErrWebhookBody},
		{"signed body without a type", testSecret,
			delivery(testID, testTS, sign(testKey, testID, testTS, `{"timestamp": "2025-06-15T15:06:40Z", "data": {}}`)),
			`{"timestamp": "2025-06-15T15:06:40Z", "data": {}}`, testNow, ErrWebhookBody},
		{"signed body without data", testSecret,
			delivery(testID, testTS, sign(testKey, testID, testTS, `{"type": "x", "timestamp": "2025-06-15T15:06:40Z"}`)),
			`{"type": "x", "timestamp": "2025-06-15T15:06:40Z"}`, testNow, ErrWebhookBody},
		{"signed body with a Unix timestamp", testSecret,
			delivery(testID, testTS, sign(testKey, testID, testTS, `{"type": "x", "timestamp": 1750000000, "data": {}}`)),
			`{"type": "x", "timestamp": 1750000000, "data": {}}`, testNow, ErrWebhookBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, err := verifyWebhook(tc.secret, tc.header, []byte(tc.body), tc.now)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("verifyWebhook: %v", err)
				}
				if ev.ID != testID || ev.Type != "commission.created" || !ev.Attempted.Equal(testNow) {
					t.Errorf("verifyWebhook = %+v", ev)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("verifyWebhook error = %v, want %v", err, tc.want)
			}
			if ev.ID != "" || ev.Data != nil {
				t.Errorf("a refused delivery returned an event: %+v", ev)
			}
			// One sentinel per error: a caller's errors.Is chain never sees two.
			for _, other := range []error{ErrWebhookHeaders, ErrWebhookSignature, ErrWebhookTimestamp, ErrWebhookSecret, ErrWebhookBody} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("error %v is also %v", err, other)
				}
			}
			if !strings.HasPrefix(err.Error(), "reftrack: ") || strings.Contains(err.Error(), validB64) {
				t.Errorf("error message %q: want a reftrack: prefix and no signature", err)
			}
		})
	}
}

// A verified event carries the delivery's id and attempt time, and the body's type, time and resource.
func TestVerifyWebhookEvent(t *testing.T) {
	t.Parallel()
	ev, err := verifyWebhook(testSecret, delivery(testID, testTS, sign(testKey, testID, testTS, testBody)), []byte(testBody), testNow.Add(90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != testID {
		t.Errorf("ID = %q, want %q", ev.ID, testID)
	}
	if ev.Type != "commission.created" {
		t.Errorf("Type = %q", ev.Type)
	}
	if want := time.Date(2025, 6, 15, 15, 6, 40, 0, time.UTC); !ev.Timestamp.Equal(want) {
		t.Errorf("Timestamp = %v, want %v", ev.Timestamp, want)
	}
	if want := time.Date(2025, 6, 15, 15, 6, 40, 0, time.UTC); ev.Attempted != want {
		t.Errorf("Attempted = %v, want %v in UTC", ev.Attempted, want)
	}
	var data struct {
		ID          int64 `json:"id"`
		AmountCents int64 `json:"amount_cents"`
	}
	if err := json.Unmarshal(ev.Data, &data); err != nil || data.ID != 42 || data.AmountCents != 980 {
		t.Errorf("Data = %s (%+v, %v)", ev.Data, data, err)
	}
}

// The Standard Webhooks specification's published test vector.
func TestVerifyWebhookSpecVector(t *testing.T) {
	t.Parallel()
	const (
		secret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id      = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts      = "1614265330"
		payload = `{"test": 2432232314}`
		want    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	if got := sign(key, id, ts, payload); got != want {
		t.Fatalf("the tests' signer gives %s, want %s", got, want)
	}
	at := time.Unix(1614265330, 0)
	tests := []struct {
		name      string
		secret    string
		signature string
		payload   string
		now       time.Time
		want      error
	}{
		// The payload is not one of reftrack's events: ErrWebhookBody is reached only past the signature
		// and the timestamp.
		{"verifies", secret, want, payload, at, ErrWebhookBody},
		{"verifies without the prefix", strings.TrimPrefix(secret, "whsec_"), want, payload, at, ErrWebhookBody},
		{"among other versions", secret, "v1a," + want[3:] + " " + want + " v2,abc", payload, at, ErrWebhookBody},
		{"too old", secret, want, payload, at.Add(5*time.Minute + time.Second), ErrWebhookTimestamp},
		{"payload changed", secret, want, `{"test": 2432232315}`, at, ErrWebhookSignature},
		{"signature changed", secret, strings.Replace(want, "g0h", "g0i", 1), payload, at, ErrWebhookSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := verifyWebhook(tc.secret, delivery(id, ts, tc.signature), []byte(tc.payload), tc.now)
			if !errors.Is(err, tc.want) {
				t.Errorf("verifyWebhook error = %v, want %v", err, tc.want)
			}
		})
	}
}

// VerifyWebhook reads the real clock.
func TestVerifyWebhookNow(t *testing.T) {
	t.Parallel()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	ev, err := VerifyWebhook(testSecret, delivery(testID, ts, sign(testKey, testID, ts, testBody)), []byte(testBody))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != testID {
		t.Errorf("ID = %q", ev.ID)
	}
	_, err = VerifyWebhook(testSecret, delivery(testID, testTS, sign(testKey, testID, testTS, testBody)), []byte(testBody))
	if !errors.Is(err, ErrWebhookTimestamp) {
		t.Errorf("a delivery signed in 2025 verified now: %v", err)
	}
}

// The body is verified as received: VerifyWebhook neither keeps nor changes the caller's slice.
func TestVerifyWebhookBodyUntouched(t *testing.T) {
	t.Parallel()
	body := []byte(testBody)
	ev, err := verifyWebhook(testSecret, delivery(testID, testTS, sign(testKey, testID, testTS, testBody)), body, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, []byte(testBody)) {
		t.Errorf("body changed to %s", body)
	}
	ev.Data[0] = 'X'
	if !bytes.Equal(body, []byte(testBody)) {
		t.Errorf("Data shares the body's memory")
	}
}
