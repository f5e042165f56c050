// Package ops is the HTTP area of the operational routes: health and readiness probes, Prometheus
// metrics, this service's OpenAPI document, and the browser tracker script.
package ops

import (
	"bytes"
	"context"
	"database/sql"
	"time"

	dbschema "github.com/reftrack/reftrack/db"
	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/apidocs"
	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/tracker"
)

// Operations implements the operational operations of the strict server interface.
type Operations struct {
	DB *sql.DB
	// SpecJSON is the OpenAPI document as JSON.
	SpecJSON map[string]any
	Metrics  *metrics.Metrics
	Tracker  tracker.Script
	// Demo is the demo shop (development mode only; nil otherwise).
	Demo *demoshop.Shop
	// Draining reports whether the process is draining before it stops (nil: never).
	Draining func() bool
}

// GetOpenAPIYAML serves the spec exactly as published.
func (h *Operations) GetOpenAPIYAML(context.Context, gen.GetOpenAPIYAMLRequestObject) (gen.GetOpenAPIYAMLResponseObject, error) {
	return gen.GetOpenAPIYAML200ApplicationyamlResponse{
		Body:          bytes.NewReader(openapi.YAML),
		ContentLength: int64(len(openapi.YAML)),
	}, nil
}

// GetOpenAPIJSON serves the same document as JSON.
func (h *Operations) GetOpenAPIJSON(context.Context, gen.GetOpenAPIJSONRequestObject) (gen.GetOpenAPIJSONResponseObject, error) {
	return gen.GetOpenAPIJSON200JSONResponse{Body: h.SpecJSON}, nil
}

// GetMetrics serves the Prometheus metrics.
func (h *Operations) GetMetrics(context.Context, gen.GetMetricsRequestObject) (gen.GetMetricsResponseObject, error) {
	text, err := h.Metrics.Text()
	if err != nil {
		return nil, err
	}
	return gen.GetMetrics200TextResponse{Body: string(text)}, nil
}

// GetHealthz is the liveness probe: it touches nothing.
func (h *Operations) GetHealthz(context.Context, gen.GetHealthzRequestObject) (gen.GetHealthzResponseObject, error) {
	return gen.GetHealthz200JSONResponse{Body: gen.Health{Status: gen.Ok}}, nil
}

// GetLivez is the load balancers' probe: up, and not draining before a shutdown.
func (h *Operations) GetLivez(context.Context, gen.GetLivezRequestObject) (gen.GetLivezResponseObject, error) {
	if h.Draining != nil && h.Draining() {
		return gen.GetLivez503JSONResponse{Body: gen.Liveness{Status: gen.LivenessDraining}}, nil
	}
	return gen.GetLivez200JSONResponse{Body: gen.Liveness{Status: gen.LivenessOk}}, nil
}

// readyTimeout bounds the readiness probe's database checks.
const readyTimeout = 2 * time.Second

// GetReadyz is the readiness probe: the database answers and its schema is one this build runs on (the
// one it expects, or a newer backward-compatible one).
func (h *Operations) GetReadyz(ctx context.Context, _ gen.GetReadyzRequestObject) (gen.GetReadyzResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	checks := checkDatabase(ctx, h.DB)
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

// The tracker's URL carries no version, so browsers keep it an hour and then revalidate with its ETag.
const trackerCacheControl = "public, max-age=3600"

// GetTrackerScript serves the browser tracker.
func (h *Operations) GetTrackerScript(_ context.Context, req gen.GetTrackerScriptRequestObject) (gen.GetTrackerScriptResponseObject, error) {
	body, notModified := h.trackerScript(req.Params.IfNoneMatch, req.Params.AcceptEncoding)
	if notModified != nil {
		return gen.GetTrackerScript304Response(*notModified), nil
	}
	return gen.GetTrackerScript200ApplicationjavascriptResponse{TrackerScriptApplicationjavascriptResponse: *body}, nil
}

// GetTrackerScriptAlias serves the same file under its short name.
func (h *Operations) GetTrackerScriptAlias(_ context.Context, req gen.GetTrackerScriptAliasRequestObject) (gen.GetTrackerScriptAliasResponseObject, error) {
	body, notModified := h.trackerScript(req.Params.IfNoneMatch, req.Params.AcceptEncoding)
	if notModified != nil {
		return gen.GetTrackerScriptAlias304Response(*notModified), nil
	}
	return gen.GetTrackerScriptAlias200ApplicationjavascriptResponse{TrackerScriptApplicationjavascriptResponse: *body}, nil
}

// trackerScript answers 304 when the client's copy is current, else the script, gzip-encoded when the
// client accepts it.
func (h *Operations) trackerScript(ifNoneMatch, acceptEncoding *string) (*gen.TrackerScriptApplicationjavascriptResponse, *gen.TrackerScriptNotModifiedResponse) {
	t := h.Tracker
	if ifNoneMatch != nil && request.ETagMatches(*ifNoneMatch, t.ETag) {
		return nil, &gen.TrackerScriptNotModifiedResponse{Headers: gen.TrackerScriptNotModifiedResponseHeaders{
			ETag: t.ETag, CacheControl: trackerCacheControl, Vary: "Accept-Encoding",
		}}
	}
	res := &gen.TrackerScriptApplicationjavascriptResponse{
		Body: bytes.NewReader(t.Body), ContentLength: int64(len(t.Body)),
		Headers: gen.TrackerScriptResponseHeaders{ETag: t.ETag, CacheControl: trackerCacheControl, Vary: "Accept-Encoding"},
	}
	if acceptEncoding != nil && request.AcceptsGzip(*acceptEncoding) {
		gz := "gzip"
		res.Body, res.ContentLength, res.Headers.ContentEncoding = bytes.NewReader(t.Gzip), int64(len(t.Gzip)), &gz
	}
	return res, nil
}

// HomePage names the service and links to its reference, its spec and the dashboard.
func (h *Operations) HomePage(context.Context, gen.HomePageRequestObject) (gen.HomePageResponseObject, error) {
	page := apidocs.HomePage
	if h.Demo != nil {
		page = h.Demo.Page // development mode: the demo shop
	}
	b, err := page()
	if err != nil {
		return nil, err
	}
	return gen.HomePage200TexthtmlResponse{HTMLPageTexthtmlResponse: gen.HTMLPageTexthtmlResponse{
		Body: bytes.NewReader(b), ContentLength: int64(len(b))}}, nil
}

// ApiReferencePage renders the served spec for people (Redoc, served from here).
func (h *Operations) ApiReferencePage(context.Context, gen.ApiReferencePageRequestObject) (gen.ApiReferencePageResponseObject, error) {
	b, err := apidocs.ReferencePage()
	if err != nil {
		return nil, err
	}
	return gen.ApiReferencePage200TexthtmlResponse{Body: bytes.NewReader(b), ContentLength: int64(len(b)),
		Headers: gen.ApiReferencePage200ResponseHeaders{ContentSecurityPolicy: apidocs.ContentSecurityPolicy}}, nil
}

// ApiReferenceScript serves the embedded Redoc bundle; its path names its version, so it never changes.
func (h *Operations) ApiReferenceScript(context.Context, gen.ApiReferenceScriptRequestObject) (gen.ApiReferenceScriptResponseObject, error) {
	s := apidocs.Script()
	return gen.ApiReferenceScript200ApplicationjavascriptResponse{Body: bytes.NewReader(s), ContentLength: int64(len(s)),
		Headers: gen.ApiReferenceScript200ResponseHeaders{CacheControl: "public, max-age=31536000, immutable"}}, nil
}
