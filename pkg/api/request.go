package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
)

const headerRequestID = "X-Request-ID"

// requestMeta is what handlers need of the HTTP request beyond the generated request object, and what
// they leave for the response headers. It lives in the request context.
type requestMeta struct {
	id     string
	ip     string
	method string
	header http.Header
	// viaTrustedProxy is set when the peer is a configured proxy, whose geo headers are believed.
	viaTrustedProxy bool
	// rotation is the request's API key when it is marked for rotation: the response gains the
	// Deprecation, Sunset and Link headers and a warnings array.
	rotation *apikeys.Key
}

type metaKey struct{}

func metaFrom(ctx context.Context) *requestMeta {
	if m, ok := ctx.Value(metaKey{}).(*requestMeta); ok {
		return m
	}
	return &requestMeta{header: http.Header{}}
}

// RequestID is the id of the request ctx belongs to ("" outside a request).
func RequestID(ctx context.Context) string { return metaFrom(ctx).id }

// A client's own request id is kept when it is short and plain; anything else is replaced, so that ids
// are safe to log and to echo back.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// requestContext gives every request its id and meta, and writes the headers that depend on what the
// handler found out (request id, key rotation) just before the status line, so they win over anything a
// handler set and reach error responses too.
func (s *Server) requestContext(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		m := &requestMeta{id: req.Header.Get(headerRequestID), ip: c.RealIP(), method: req.Method, header: req.Header}
		if !saneRequestID.MatchString(m.id) {
			m.id = newRequestID()
		}
		m.viaTrustedProxy = s.trusted(req.RemoteAddr)
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), metaKey{}, m)))
		res := c.Response()
		res.Before(func() {
			h := res.Header()
			if omitsRequestID(c.Path(), res.Status) {
				h.Del(headerRequestID)
			} else {
				h.Set(headerRequestID, m.id)
			}
			if k := m.rotation; k != nil {
				h.Set("Deprecation", "@"+strconv.FormatInt(k.MarkedAt.Unix(), 10))
				h.Set("Sunset", k.RotateBy.UTC().Format(http.TimeFormat))
				h.Set("Link", "<"+s.deps.Config.DocsURL+">; rel=deprecation")
			}
		})
		return next(c)
	}
}

// trusted reports whether the peer address is a configured proxy.
func (s *Server) trusted(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range s.deps.Config.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// omitsRequestID is the interface's one exception: GET /api/v1/cli/status answers 200, 401 and 429
// without X-Request-ID (its other statuses carry one).
func omitsRequestID(route string, status int) bool {
	if route != "/api/v1/cli/status" {
		return false
	}
	switch status {
	case http.StatusOK, http.StatusUnauthorized, http.StatusTooManyRequests:
		return true
	}
	return false
}

// warnings is the top-level "warnings" array of a response to a request whose key is marked for
// rotation (nil otherwise).
func (s *Server) warnings(ctx context.Context) []apierr.Warning {
	k := metaFrom(ctx).rotation
	if k == nil {
		return nil
	}
	return []apierr.Warning{{
		Code: "api_key_rotation_required",
		Message: "This API key is marked for mandatory rotation and stops working at " +
			k.RotateBy.UTC().Format(time.RFC3339) + ".",
		Hint:     "A workspace owner regenerates the key in the program's settings (API keys); deploy the new key before the deadline.",
		RotateBy: k.RotateBy.UTC().Format(time.RFC3339),
		DocsURL:  s.deps.Config.DocsURL,
	}}
}
