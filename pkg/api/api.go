// Package api is reftrack's HTTP layer: the echo instance with its middleware, the strict handlers that
// implement the generated server interface, and the one error handler that writes both envelopes.
// Handlers are thin: wire types in, one domain call, wire types out.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/config"
	"github.com/reftrack/reftrack/pkg/ratelimit"
)

// Deps is what the HTTP layer needs.
type Deps struct {
	DB      *sqlx.DB
	Logger  *slog.Logger
	Config  config.Config
	Limiter *ratelimit.Limiter // nil: counts in process
}

// Service is the HTTP handler of the whole API. Close it after the HTTP server has stopped: it finishes
// writing the clicks still queued.
type Service struct {
	*echo.Echo
	close func()
}

// Close releases the service's background writers.
func (s *Service) Close() { s.close() }

// New builds the echo instance serving the whole API.
func New(ctx context.Context, deps Deps) (*Service, error) {
	if deps.Limiter == nil {
		deps.Limiter = ratelimit.New(ratelimit.NewMemory(), nil)
	}
	doc, err := openapi.Load(ctx)
	if err != nil {
		return nil, err
	}
	contract, err := newContract(doc)
	if err != nil {
		return nil, err
	}
	s, err := newServer(ctx, deps, doc)
	if err != nil {
		return nil, err
	}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = s.handleError
	e.IPExtractor = ipExtractor(deps.Config.TrustedProxies)

	// Order matters: the request id and meta exist before anything logs; the access log sees the final
	// status; recovery turns a panic into a 500 in the right envelope; the rate limiter refuses before
	// anything else looks at the request; CORS answers for browser routes; the contract middleware (body
	// limit, JSON normalisation, request validation) runs last, right before the handler.
	e.Use(s.requestContext)
	e.Use(accessLog(deps.Logger, s.metrics))
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			deps.Logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return fmt.Errorf("panic recovered: %w", err)
		},
	}))
	e.Use(s.rateLimit)
	e.Use(s.cors)
	e.Use(contract.middleware)

	gen.RegisterHandlers(e, gen.NewStrictHandler(s, nil))
	return &Service{Echo: e, close: s.clicks.Close}, nil
}

// NewHTTPServer wraps handler with the server timeouts reftrackd uses.
func NewHTTPServer(addr string, handler http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// ipExtractor decides the client IP: the socket's peer, unless the peer is a configured trusted proxy,
// whose X-Forwarded-For is then believed. (Echo's default would believe any client's headers.)
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
