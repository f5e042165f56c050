package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// limitRule is one row of the interface's Limits table.
type limitRule struct {
	bucket string
	limit  int
	byKey  bool // counted per API key (falling back to the client IP when none is sent), else per IP
}

var routeLimits = map[string]limitRule{
	"/api/v1/track/click":           {bucket: "click", limit: 60},
	"/api/v1/track/lead":            {bucket: "lead", limit: 30},
	"/api/v1/track/sale":            {bucket: "payments", limit: 120, byKey: true}, // sale and refund combined
	"/api/v1/track/refund":          {bucket: "payments", limit: 120, byKey: true},
	"/api/v1/programs/me/readiness": {bucket: "readiness", limit: 30, byKey: true},
}

var cliLimit = limitRule{bucket: "cli", limit: 60, byKey: true}

func limitFor(route string) (limitRule, bool) {
	if r, ok := routeLimits[route]; ok {
		return r, true
	}
	if strings.HasPrefix(route, "/api/v1/cli/") {
		return cliLimit, true
	}
	return limitRule{}, false
}

// rateLimit counts every request to a limited route before anything else looks at it, writes the
// X-RateLimit-* headers on every response of those routes, and refuses with 429 past the limit.
// CORS preflights are not counted.
func (s *Server) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		rule, ok := limitFor(c.Path())
		if !ok || c.Request().Method == http.MethodOptions {
			return next(c)
		}
		ctx := c.Request().Context()
		m := metaFrom(ctx)
		id := "ip:" + m.ip
		if rule.byKey {
			if b := parseBearer(c.Request().Header.Get(echo.HeaderAuthorization)); b.token != "" {
				sum := sha256.Sum256([]byte(b.token)) // never keep the secret itself as a counter key
				id = "key:" + hex.EncodeToString(sum[:16])
			}
		}
		res, err := s.deps.Limiter.Allow(ctx, rule.bucket, id, rule.limit)
		if err != nil {
			s.deps.Logger.WarnContext(ctx, "rate limiter unavailable; request allowed", "request_id", m.id, "err", err)
		}
		c.Response().Before(func() {
			h := c.Response().Header()
			h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit))
			h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(res.Reset.Unix(), 10))
		})
		if !res.Allowed {
			retry := res.RetryAfter(s.now())
			e := apierr.NewTyped(http.StatusTooManyRequests, "rate_limited",
				fmt.Sprintf("Too many requests: the limit is %d per minute. Retry in %d seconds.", rule.limit, retry)).
				WithRetryAfter(retry)
			e.WithStatus = true
			return e
		}
		return next(c)
	}
}
