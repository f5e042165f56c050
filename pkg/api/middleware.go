package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
)

// middlewares applies each route's policy from the route table.
type middlewares struct {
	routes  *route.Table
	auth    *auth.Authenticator
	limiter *ratelimit.Limiter
	origins *origins.Cache
	now     func() time.Time
	log     *slog.Logger
	metrics *metrics.Metrics
	config  config.Config
	changed func() // nil: nobody is told of changes (Deps.Changed)
}

// A client's own request id is kept when it is short and plain; anything else is replaced, so that ids
// are safe to log and to echo back.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// requestContext gives every request its id, meta and route policy, and writes the headers that depend
// on what the handler found out (request id, key rotation) just before the status line, so they win over
// anything a handler set and reach error responses too.
func (mw *middlewares) requestContext(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		policy, ok := mw.routes.Lookup(req.Method, c.Path())
		if !ok {
			policy, ok = mw.routes.LookupWrongMethod(req.Method, c.Path()) // echo answers 405
		}
		if !ok {
			policy = route.Default // echo's own 404
			if route.PagePath(req.URL.Path) {
				policy = route.DefaultPage
			}
		}
		m := &request.Meta{ID: req.Header.Get(request.HeaderID), IP: c.RealIP(), Method: req.Method, Header: textHeader(req.Header),
			ViaTrustedProxy: mw.trusted(req.RemoteAddr)}
		if !saneRequestID.MatchString(m.ID) {
			m.ID = newRequestID()
		}
		c.SetRequest(req.WithContext(route.NewContext(request.With(req.Context(), m), policy)))
		res := c.Response()
		res.Before(func() {
			h := res.Header()
			securityHeaders(h)
			if slices.Contains(policy.Errors.NoRequestIDOn, res.Status) {
				h.Del(request.HeaderID)
			} else {
				h.Set(request.HeaderID, m.ID)
			}
			if k := m.Rotation; k != nil {
				h.Set("Deprecation", "@"+strconv.FormatInt(k.MarkedAt.Unix(), 10))
				h.Set("Sunset", k.RotateBy.UTC().Format(http.TimeFormat))
				h.Set("Link", "<"+mw.config.DocsURL+">; rel=deprecation")
			}
		})
		return next(c)
	}
}

// textHeader is h as handlers read it: text they may store (User-Agent, Origin). HTTP lets a header
// carry bytes that are not UTF-8, which PostgreSQL refuses in text; they become U+FFFD. (NUL and other
// control characters never get this far: net/http refuses them.) h itself is returned when it is clean,
// as it nearly always is.
func textHeader(h http.Header) http.Header {
	clean := true
	for _, vs := range h {
		for _, v := range vs {
			clean = clean && utf8.ValidString(v)
		}
	}
	if clean {
		return h
	}
	out := make(http.Header, len(h))
	for name, vs := range h {
		for _, v := range vs {
			out[name] = append(out[name], strings.ToValidUTF8(v, "\uFFFD"))
		}
	}
	return out
}

// trusted reports whether the peer address is a configured proxy.
func (mw *middlewares) trusted(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	for _, n := range mw.config.TrustedProxies {
		if ip != nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// accessLog writes one structured line per request and counts it in the metrics. Durations are measured
// with the monotonic clock: they are measurements, not the server's notion of the time.
func (mw *middlewares) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			// Let the error handler write the response now, so the line below logs the real status.
			c.Error(err)
		}
		req, res := c.Request(), c.Response()
		took := time.Since(start)
		mw.metrics.Request(c.Path(), req.Method, res.Status, took)
		if mw.changed != nil && res.Status < 400 && req.Method != http.MethodGet && req.Method != http.MethodHead {
			mw.changed()
		}
		level := slog.LevelInfo
		if res.Status >= 500 && res.Status != http.StatusNotImplemented {
			level = slog.LevelError
		}
		if !mw.log.Enabled(req.Context(), level) {
			return nil
		}
		mw.log.LogAttrs(req.Context(), level, "request",
			slog.String("request_id", request.ID(req.Context())),
			slog.String("method", req.Method),
			slog.String("path", req.URL.Path),
			slog.String("route", c.Path()),
			slog.Int("status", res.Status),
			slog.Int64("bytes", res.Size),
			slog.Duration("duration", took),
			slog.String("remote_ip", c.RealIP()),
		)
		return nil
	}
}

// rateLimit counts every request to a route with a limit before anything else looks at it, writes the
// X-RateLimit-* headers on every response of those routes, and refuses with 429 past the limit.
func (mw *middlewares) rateLimit(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		rule := route.FromContext(ctx).Limit
		if rule == nil {
			return next(c)
		}
		m := request.From(ctx)
		id := "ip:" + m.IP
		// A route counted per token also counts, per IP, the tokens that match nothing (docs/rules.md#limits:
		// guessing keys is limited); every guess would otherwise start a fresh bucket of its own.
		unknownID, guessable := "unknown-token:"+m.IP, false
		if rule.ByKey {
			if b := auth.ParseBearer(m.Header.Get(echo.HeaderAuthorization)); b.Token != "" {
				sum := sha256.Sum256([]byte(b.Token)) // never keep the secret itself as a counter key
				id = "key:" + hex.EncodeToString(sum[:16])
				guessable = true
			} else if cookie := request.Cookie(ctx, dashboard.SessionCookie); cookie != "" {
				sum := sha256.Sum256([]byte(cookie))
				id = "session:" + hex.EncodeToString(sum[:16])
			}
		}
		if guessable {
			spent, ures, err := mw.limiter.Spent(ctx, rule.Bucket, unknownID, rule.PerMinute)
			if err != nil {
				mw.log.WarnContext(ctx, "rate limiter unavailable; request allowed", "request_id", m.ID, "err", err)
			}
			// Once the IP's guesses are spent its tokens are looked up here, before anything else: a
			// valid one goes on as usual, an unknown one is refused without reaching the handler.
			if spent && unknownToken(mw.checkToken(c)) {
				if _, err := mw.limiter.Allow(ctx, rule.Bucket, unknownID, rule.PerMinute); err != nil {
					mw.log.WarnContext(ctx, "rate limiter: could not count an unknown token", "request_id", m.ID, "err", err)
				}
				return mw.refuse(c, rule, ures)
			}
		}
		res, err := mw.limiter.Allow(ctx, rule.Bucket, id, rule.PerMinute)
		counted := err == nil
		if err != nil {
			mw.log.WarnContext(ctx, "rate limiter unavailable; request allowed", "request_id", m.ID, "err", err)
		}
		c.Response().Before(func() {
			// The status is known here, whoever writes the answer (handler, error handler, recover): an
			// answer of 5xx gives its unit back (docs/rules.md#limits).
			if counted && c.Response().Status >= 500 {
				if back, err := mw.limiter.GiveBack(ctx, rule.Bucket, id, res); err != nil {
					mw.log.WarnContext(ctx, "rate limiter: could not give a 5xx's unit back", "request_id", m.ID, "err", err)
				} else {
					res = back
				}
			}
			h := c.Response().Header()
			h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit))
			h.Set("X-RateLimit-Remaining", strconv.Itoa(res.Remaining))
			h.Set("X-RateLimit-Reset", strconv.FormatInt(res.Reset.Unix(), 10))
		})
		if !res.Allowed {
			return mw.tooMany(rule, res)
		}
		err = next(c)
		if guessable && unknownToken(err) {
			if _, err := mw.limiter.Allow(ctx, rule.Bucket, unknownID, rule.PerMinute); err != nil {
				mw.log.WarnContext(ctx, "rate limiter: could not count an unknown token", "request_id", m.ID, "err", err)
			}
		}
		return err
	}
}

func (mw *middlewares) tooMany(rule *route.Limit, res ratelimit.Result) error {
	retry := res.RetryAfter(mw.now())
	return apierr.New(apierr.KindRateLimited,
		fmt.Sprintf("Too many requests: the limit is %d per minute. Retry in %d seconds.", rule.PerMinute, retry)).
		WithRetryAfter(retry)
}

// refuse answers 429 from the IP's unknown-token bucket, with that bucket's X-RateLimit-* headers.
func (mw *middlewares) refuse(c echo.Context, rule *route.Limit, res ratelimit.Result) error {
	c.Response().Before(func() {
		h := c.Response().Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(res.Limit))
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(res.Reset.Unix(), 10))
	})
	return mw.tooMany(rule, res)
}

// checkToken looks the request's Bearer token up as the route's credential would, and returns the
// refusal (nil for a token that matches something the route takes, or a route that takes no token).
func (mw *middlewares) checkToken(c echo.Context) error {
	ctx := c.Request().Context()
	switch route.FromContext(ctx).Auth {
	case route.ProgramKey, route.OptionalProgramKey:
		_, err := mw.auth.Key(ctx)
		return err
	case route.Account, route.AccountOrSession:
		_, err := mw.auth.Account(ctx)
		return err
	}
	return nil
}

// unknownToken: err is the refusal of a token that matches nothing (not a retired key, a suspended
// account or a database failure).
func unknownToken(err error) bool {
	return errors.Is(err, apikeys.ErrUnknown) || errors.Is(err, accounts.ErrInvalidToken)
}

// cors lets a browser read the answers of the routes with a CORS policy when its Origin is listed by
// some program. Whether the origin is allowed for the program the request resolves to is the handler's
// check (403).
func (mw *middlewares) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		if route.FromContext(ctx).CORS == nil {
			return next(c)
		}
		res := c.Response()
		res.Header().Add("Vary", "Origin")
		if origin := c.Request().Header.Get("Origin"); origin != "" && mw.origins.Known(ctx, origin) {
			res.Before(func() { res.Header().Set("Access-Control-Allow-Origin", origin) })
		}
		return next(c)
	}
}

// authenticate checks the credential the route requires (x-reftrack-auth program-key, account,
// account-or-session or partner-session) and keeps the principal for the handler. Routes with an optional credential, a
// session page or a signature check their own.
func (mw *middlewares) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		ctx := req.Context()
		switch route.FromContext(ctx).Auth {
		case route.ProgramKey:
			k, err := mw.auth.Key(ctx)
			if err != nil {
				return err
			}
			ctx = auth.WithKey(ctx, k)
		case route.Account:
			a, err := mw.auth.Account(ctx)
			if err != nil {
				return err
			}
			ctx = auth.WithAccount(ctx, a)
		case route.AccountOrSession:
			a, err := mw.auth.AccountOrSession(ctx)
			if err != nil {
				return err
			}
			ctx = auth.WithAccount(ctx, a)
		case route.PartnerSession:
			p, err := mw.auth.PartnerSession(ctx)
			if err != nil {
				return err
			}
			ctx = auth.WithPerson(ctx, p)
		default:
			return next(c)
		}
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// PageCSP is the Content-Security-Policy of an HTML page that sets none of its own (the login and sign-out
// pages, the development issuer and mailbox, the partner portal's forms, the front page, errors): they
// are never framed (no clickjacking of a sign-in form) and nothing rewrites their base URL. The dashboard,
// the partner portal and the API reference send stricter ones of their own.
const PageCSP = "frame-ancestors 'none'; base-uri 'none'"

// securityHeaders are on every answer: no content sniffing, and referrers that carry no path or query to
// other sites (a page's URL may hold a login state or an invitation token). An HTML page without a
// Content-Security-Policy of its own gets PageCSP.
func securityHeaders(h http.Header) {
	if h.Get("X-Content-Type-Options") == "" {
		h.Set("X-Content-Type-Options", "nosniff")
	}
	if h.Get("Referrer-Policy") == "" {
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
	}
	if strings.HasPrefix(h.Get("Content-Type"), "text/html") && h.Get("Content-Security-Policy") == "" {
		h.Set("Content-Security-Policy", PageCSP)
	}
}
