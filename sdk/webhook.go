package sdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors of VerifyWebhook, to test with errors.Is. Only ErrWebhookSecret is the receiver's own mistake
// (its configuration); the others describe the request.
var (
	// ErrWebhookHeaders: webhook-id, webhook-timestamp or webhook-signature is missing, or the timestamp
	// is not Unix seconds.
	ErrWebhookHeaders = errors.New("reftrack: webhook header missing or malformed")
	// ErrWebhookSignature: no v1 signature of webhook-signature matches the secret, id, timestamp and body.
	ErrWebhookSignature = errors.New("reftrack: no webhook signature matches")
	// ErrWebhookTimestamp: the signature matches but webhook-timestamp is more than 5 minutes away from
	// the receiver's clock: a replay, or a clock that is off.
	ErrWebhookTimestamp = errors.New("reftrack: webhook timestamp outside the 5-minute tolerance")
	// ErrWebhookSecret: the secret is empty or not base64 (after its optional whsec_ prefix).
	ErrWebhookSecret = errors.New("reftrack: webhook secret is not valid base64")
	// ErrWebhookBody: the delivery is authentic but its body is not an event (type, timestamp, data).
	ErrWebhookBody = errors.New("reftrack: webhook body is not an event")
)

// WebhookEvent is a verified delivery.
type WebhookEvent struct {
	// ID is the delivery's webhook-id (msg_…). Delivery is at least once: an event whose answer was lost
	// or was not a 2xx is sent again with the same ID, so the receiver must deduplicate on it (record the
	// ID with the work it does, and acknowledge a known ID without doing the work again).
	ID string
	// Type is the event's type.
	Type string
	// Timestamp is when the event happened (the body's timestamp).
	Timestamp time.Time
	// Data is the resource the event is about, as the API shows it.
	Data json.RawMessage
	// Attempted is when this delivery attempt was signed (webhook-timestamp); each retry has its own.
	Attempted time.Time
}

// webhookTolerance is how far webhook-timestamp may be from the receiver's clock, either way: it bounds
// replays of a captured delivery, and allows for clocks a little off.
const webhookTolerance = 5 * time.Minute

// VerifyWebhook checks a delivery of reftrack's webhooks, which follow the Standard Webhooks
// specification, and returns its event. secret is the endpoint's signing secret, with or without its
// whsec_ prefix; header is the request's (r.Header); body is the request body, read in full and
// unchanged (verify before any parsing or re-encoding).
//
// The delivery is accepted when one of the space-separated v1 signatures of webhook-signature is the
// HMAC-SHA256 of "webhook-id.webhook-timestamp.body" (entries of other versions are ignored, and several
// signatures are sent while a secret is rotated), and webhook-timestamp is within 5 minutes of now. The
// errors wrap ErrWebhookSecret, ErrWebhookHeaders, ErrWebhookSignature, ErrWebhookTimestamp or
// ErrWebhookBody. Deduplicate the events on WebhookEvent.ID.
func VerifyWebhook(secret string, header http.Header, body []byte) (WebhookEvent, error) {
	return verifyWebhook(secret, header, body, time.Now())
}

// verifyWebhook is VerifyWebhook with the receiver's clock given, so that tests choose it.
//
// The signature is checked before the timestamp, so that ErrWebhookTimestamp only ever describes an
// authentic delivery (a replay or a clock off) and a forged one is always ErrWebhookSignature.
func verifyWebhook(secret string, header http.Header, body []byte, now time.Time) (WebhookEvent, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return WebhookEvent{}, fmt.Errorf("%w: %v", ErrWebhookSecret, err)
	}
	if len(key) == 0 {
		return WebhookEvent{}, fmt.Errorf("%w: empty", ErrWebhookSecret)
	}

	id := webhookHeader(header, "webhook-id")
	ts := webhookHeader(header, "webhook-timestamp")
	signatures := strings.Fields(strings.Join(webhookHeaderValues(header, "webhook-signature"), " "))
	switch {
	case id == "":
		return WebhookEvent{}, fmt.Errorf("%w: no webhook-id", ErrWebhookHeaders)
	case ts == "":
		return WebhookEvent{}, fmt.Errorf("%w: no webhook-timestamp", ErrWebhookHeaders)
	case len(signatures) == 0:
		return WebhookEvent{}, fmt.Errorf("%w: no webhook-signature", ErrWebhookHeaders)
	}
	// Digits only: the signed content holds the header as sent, so "+1614265330" must not pass as the
	// same time.
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strings.Trim(ts, "0123456789") != "" {
		shown := ts
		if len(shown) > 24 {
			shown = shown[:24] + "…"
		}
		return WebhookEvent{}, fmt.Errorf("%w: webhook-timestamp %q is not Unix seconds", ErrWebhookHeaders, shown)
	}

	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	if !anySignatureMatches(signatures, want) {
		return WebhookEvent{}, ErrWebhookSignature
	}

	attempted := time.Unix(secs, 0).UTC()
	if d := now.Sub(attempted); d > webhookTolerance {
		return WebhookEvent{}, fmt.Errorf("%w: signed %s ago", ErrWebhookTimestamp, d.Round(time.Second))
	} else if d < -webhookTolerance {
		return WebhookEvent{}, fmt.Errorf("%w: signed %s ahead of this clock", ErrWebhookTimestamp, (-d).Round(time.Second))
	}

	var event struct {
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &event); err != nil {
		return WebhookEvent{}, fmt.Errorf("%w: %v", ErrWebhookBody, err)
	}
	if event.Type == "" || event.Timestamp.IsZero() || len(event.Data) == 0 {
		return WebhookEvent{}, fmt.Errorf("%w: type, timestamp or data missing", ErrWebhookBody)
	}
	return WebhookEvent{ID: id, Type: event.Type, Timestamp: event.Timestamp, Data: event.Data, Attempted: attempted}, nil
}

// anySignatureMatches reports whether one of the v1 entries ("v1,<base64>") is the HMAC want. Entries
// of other versions, and entries that are not version,base64, cannot match and are skipped.
func anySignatureMatches(entries []string, want []byte) bool {
	for _, entry := range entries {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// webhookHeader is the first value of the header name.
func webhookHeader(h http.Header, name string) string {
	if v := webhookHeaderValues(h, name); len(v) > 0 {
		return v[0]
	}
	return ""
}

// webhookHeaderValues reads name under its canonical key, as net/http stores it, or else under the
// lower-case key that a header map built by hand from another framework's request may use.
func webhookHeaderValues(h http.Header, name string) []string {
	if v := h.Values(name); len(v) > 0 {
		return v
	}
	return h[name]
}
