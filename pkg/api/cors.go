package api

import (
	"context"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/labstack/echo/v4"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/programs"
)

// The browser routes: the only ones meant for a direct fetch from a brand's pages.
var browserRoutes = map[string]bool{"/api/v1/track/click": true, "/api/v1/track/lead": true}

// cors lets a browser read the answers of the browser routes when its Origin is listed by some program.
// Whether the origin is allowed for the program the request resolves to is the handler's check (403).
func (s *Server) cors(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !browserRoutes[c.Path()] {
			return next(c)
		}
		res := c.Response()
		res.Header().Add("Vary", "Origin")
		if origin := c.Request().Header.Get("Origin"); origin != "" && s.origins.known(c.Request().Context(), origin) {
			res.Before(func() { res.Header().Set("Access-Control-Allow-Origin", origin) })
		}
		return next(c)
	}
}

// preflightMaxAge is how long browsers may cache a preflight answer, in seconds.
const preflightMaxAge = 600

type preflightHeaders struct {
	origin, methods, headers *string
	maxAge                   *int
}

// preflight answers a CORS preflight of a browser route.
func (s *Server) preflight(ctx context.Context) preflightHeaders {
	origin := metaFrom(ctx).header.Get("Origin")
	if origin == "" || !s.origins.known(ctx, origin) {
		return preflightHeaders{}
	}
	methods, headers, maxAge := "POST, OPTIONS", "Content-Type, Authorization, X-Request-ID", preflightMaxAge
	return preflightHeaders{origin: &origin, methods: &methods, headers: &headers, maxAge: &maxAge}
}

// TrackClickPreflight answers the click route's CORS preflight.
func (s *Server) TrackClickPreflight(ctx context.Context, _ gen.TrackClickPreflightRequestObject) (gen.TrackClickPreflightResponseObject, error) {
	h := s.preflight(ctx)
	return gen.TrackClickPreflight204Response{Headers: gen.TrackClickPreflight204ResponseHeaders{
		AccessControlAllowOrigin: h.origin, AccessControlAllowMethods: h.methods,
		AccessControlAllowHeaders: h.headers, AccessControlMaxAge: h.maxAge,
	}}, nil
}

// TrackLeadPreflight answers the lead route's CORS preflight.
func (s *Server) TrackLeadPreflight(ctx context.Context, _ gen.TrackLeadPreflightRequestObject) (gen.TrackLeadPreflightResponseObject, error) {
	h := s.preflight(ctx)
	return gen.TrackLeadPreflight204Response{Headers: gen.TrackLeadPreflight204ResponseHeaders{
		AccessControlAllowOrigin: h.origin, AccessControlAllowMethods: h.methods,
		AccessControlAllowHeaders: h.headers, AccessControlMaxAge: h.maxAge,
	}}, nil
}

// originCacheTTL bounds how stale the set of known origins may be on another replica after a program's
// allowed origins change (this replica forgets it at once).
const originCacheTTL = 10 * time.Second

// originCache is the set of origins listed by any program, reloaded at most every originCacheTTL.
type originCache struct {
	db     *sqlx.DB
	mu     sync.Mutex
	set    map[string]bool
	loaded time.Time
}

func newOriginCache(db *sqlx.DB) *originCache { return &originCache{db: db} }

func (o *originCache) known(ctx context.Context, origin string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.set == nil || time.Since(o.loaded) > originCacheTTL {
		list, err := programs.KnownOrigins(ctx, o.db)
		if err != nil {
			return o.set[origin] // keep answering from the last good set
		}
		o.set = make(map[string]bool, len(list))
		for _, v := range list {
			o.set[v] = true
		}
		o.loaded = time.Now()
	}
	return o.set[origin]
}

// forget drops the cached set (after this replica changed a program's origins).
func (o *originCache) forget() {
	o.mu.Lock()
	o.set = nil
	o.mu.Unlock()
}
