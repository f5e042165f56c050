package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
)

// bearer is an Authorization header as the interface reads it.
type bearer struct {
	present    bool   // a header was sent
	wellFormed bool   // it starts with "Bearer " (or is exactly "Bearer": Go's server trims trailing spaces)
	token      string // the token, trimmed; "" when empty
}

func parseBearer(h string) bearer {
	b := bearer{present: h != ""}
	switch {
	case h == "Bearer":
		b.wellFormed = true
	case strings.HasPrefix(h, "Bearer "):
		b.wellFormed = true
		b.token = strings.TrimSpace(h[len("Bearer "):])
	}
	return b
}

// keyMessages are a route family's 401 messages for a program key.
type keyMessages struct {
	malformed, empty, unknown string
	// typed answers in the typed envelope with error.code invalid_key (readiness).
	typed bool
}

var (
	saleKeyMessages = keyMessages{
		malformed: "Missing or malformed Authorization header. Expected: Bearer <token>",
		empty:     "Missing API token",
		unknown:   "Invalid API token",
	}
	// The refund route answers an empty token like an unknown one.
	refundKeyMessages = keyMessages{
		malformed: saleKeyMessages.malformed,
		empty:     "Invalid API token",
		unknown:   "Invalid API token",
	}
	readinessKeyMessages = keyMessages{
		malformed: "Missing or malformed Authorization header. Expected: Bearer <api_token>.",
		empty:     "Missing API token.",
		unknown:   "Invalid API token.",
		typed:     true,
	}
	cliKeyMessages = keyMessages{
		malformed: "Missing or malformed Authorization header. Expected: Bearer <api_token>",
		empty:     "Missing API token",
		unknown: "Invalid API token. No program matches this key: it may have been regenerated. Ask a workspace " +
			"owner of the program to regenerate the key in Settings → API keys and use the new one; creating a new " +
			"program does not help.",
	}
)

func (m keyMessages) err(msg string) *apierr.Error {
	if m.typed {
		return apierr.NewTyped(http.StatusUnauthorized, "invalid_key", msg)
	}
	return apierr.Unauthorized(msg)
}

// requireKey authenticates the request's program API key, answering the route family's 401 messages.
func (s *Server) requireKey(ctx context.Context, msgs keyMessages) (apikeys.Key, error) {
	b := parseBearer(metaFrom(ctx).header.Get("Authorization"))
	switch {
	case !b.wellFormed:
		return apikeys.Key{}, msgs.err(msgs.malformed)
	case b.token == "":
		return apikeys.Key{}, msgs.err(msgs.empty)
	}
	return s.checkKey(ctx, b.token, msgs)
}

// optionalKey authenticates a key when one is sent (lead, test-mode click): (key, true) for a valid key,
// (zero, false) when the header is missing, malformed or its token empty, and a 401 for a token that
// matches no program or a retired key.
func (s *Server) optionalKey(ctx context.Context) (apikeys.Key, bool, error) {
	b := parseBearer(metaFrom(ctx).header.Get("Authorization"))
	if !b.wellFormed || b.token == "" {
		return apikeys.Key{}, false, nil
	}
	k, err := s.checkKey(ctx, b.token, saleKeyMessages)
	return k, err == nil, err
}

// checkKey looks token up, refuses retired keys and records a marked key for the rotation signals.
func (s *Server) checkKey(ctx context.Context, token string, msgs keyMessages) (apikeys.Key, error) {
	k, err := apikeys.Authenticate(ctx, s.deps.DB, token)
	if errors.Is(err, apikeys.ErrUnknown) {
		return apikeys.Key{}, msgs.err(msgs.unknown)
	}
	if err != nil {
		return apikeys.Key{}, err
	}
	now := s.now()
	if k.Retired(now) {
		e := apierr.NewTyped(http.StatusUnauthorized, "api_key_rotation_required",
			"This API key passed its rotation deadline ("+k.RotateBy.UTC().Format("2006-01-02T15:04:05Z07:00")+") and no longer works.")
		e.Hint = "A workspace owner regenerates the key in the program's settings (API keys); use the new key."
		e.DocsURL = s.deps.Config.DocsURL
		return apikeys.Key{}, e
	}
	if k.Marked(now) {
		metaFrom(ctx).rotation = &k
	}
	return k, nil
}
