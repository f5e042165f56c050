package api

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	dbschema "github.com/reftrack/reftrack/db"
	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/metrics"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/useragent"
	"github.com/reftrack/reftrack/tracker"
)

// Server implements the generated strict server interface; one file per resource.
type Server struct {
	deps     Deps
	specJSON map[string]any
	now      func() time.Time
	origins  *originCache
	devices  *useragent.Parser
	metrics  *metrics.Metrics
	clicks   *clicks.Recorder
	tracker  tracker.Script
	stripe   *payments.Stripe
	login    loginSetup
	// dashboard is the dashboard page's static files.
	dashboard dashboard.Assets
}

var _ gen.StrictServerInterface = (*Server)(nil)

func newServer(ctx context.Context, deps Deps, doc *openapi3.T) (*Server, error) {
	raw, err := openapi.JSON(doc)
	if err != nil {
		return nil, err
	}
	var specJSON map[string]any
	if err := json.Unmarshal(raw, &specJSON); err != nil {
		return nil, err
	}
	script, err := tracker.Load()
	if err != nil {
		return nil, err
	}
	login, err := newLoginSetup(ctx, deps.Config)
	if err != nil {
		return nil, err
	}
	dash, err := dashboard.Load()
	if err != nil {
		return nil, err
	}
	m := metrics.New()
	return &Server{
		tracker:   script,
		dashboard: dash,
		login:     login,
		stripe:    &payments.Stripe{DB: deps.DB, Log: deps.Logger, Now: time.Now},
		deps:      deps,
		specJSON:  specJSON,
		now:       time.Now,
		origins:   newOriginCache(deps.DB),
		devices:   useragent.NewParser(4096),
		metrics:   m,
		clicks:    clicks.NewRecorder(deps.DB, deps.Logger, clickWriters, clickBatch, m.ClickBatch),
	}, nil
}

// Click batching: one writer, batches of up to clickBatch clicks. Measured on the reference machine
// (docs/performance.md), one writer beats several: its batches grow larger under load and concurrent
// batch inserts into the same indexes only contend with each other.
const (
	clickWriters = 1
	clickBatch   = 128
)

// GetOpenAPIYAML serves the spec exactly as published.
func (s *Server) GetOpenAPIYAML(context.Context, gen.GetOpenAPIYAMLRequestObject) (gen.GetOpenAPIYAMLResponseObject, error) {
	return gen.GetOpenAPIYAML200ApplicationyamlResponse{
		Body:          bytes.NewReader(openapi.YAML),
		ContentLength: int64(len(openapi.YAML)),
	}, nil
}

// GetOpenAPIJSON serves the same document as JSON.
func (s *Server) GetOpenAPIJSON(context.Context, gen.GetOpenAPIJSONRequestObject) (gen.GetOpenAPIJSONResponseObject, error) {
	return gen.GetOpenAPIJSON200JSONResponse{Body: s.specJSON}, nil
}

// GetMetrics serves the Prometheus metrics.
func (s *Server) GetMetrics(context.Context, gen.GetMetricsRequestObject) (gen.GetMetricsResponseObject, error) {
	text, err := s.metrics.Text()
	if err != nil {
		return nil, err
	}
	return gen.GetMetrics200TextResponse{Body: string(text)}, nil
}

// GetHealthz is the liveness probe: it touches nothing.
func (s *Server) GetHealthz(context.Context, gen.GetHealthzRequestObject) (gen.GetHealthzResponseObject, error) {
	return gen.GetHealthz200JSONResponse{Body: gen.Health{Status: gen.Ok}}, nil
}

// readyTimeout bounds the readiness probe's database checks.
const readyTimeout = 2 * time.Second

// GetReadyz is the readiness probe: the database answers and its schema is the one this build expects.
func (s *Server) GetReadyz(ctx context.Context, _ gen.GetReadyzRequestObject) (gen.GetReadyzResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	checks := checkDatabase(ctx, s.deps.DB.DB)
	if checks.Database != "ok" || checks.Migrations != "ok" {
		return gen.GetReadyz503JSONResponse{Body: gen.ReadyStatus{Status: gen.ReadyStatusStatusUnavailable, Checks: checks}}, nil
	}
	return gen.GetReadyz200JSONResponse{Body: gen.ReadyStatus{Status: gen.ReadyStatusStatusReady, Checks: checks}}, nil
}

// checkDatabase reports, for the readiness probe, whether the database answers and is migrated.
func checkDatabase(ctx context.Context, db *sql.DB) gen.ReadyChecks {
	checks := gen.ReadyChecks{Database: "ok", Migrations: "ok"}
	if err := db.PingContext(ctx); err != nil {
		checks.Database = "unreachable"
		checks.Migrations = "unknown"
		return checks
	}
	if err := dbschema.CheckCurrent(ctx, db); err != nil {
		checks.Migrations = err.Error()
	}
	return checks
}
