// Package api is reftrack's HTTP layer: the echo instance with its middleware, the one error handler
// that writes both envelopes, and the strict server composed from the handlers of each area (tracking,
// CLI, management, pages, webhooks, operations), which live in packages of their own.
//
// Each operation's policy (credential, error envelope, rate limit, CORS, 500 wording, body limit) is read
// from the spec's x-reftrack-* extensions at start (package route); nothing here is keyed by path. The
// collaborators (database, clock, limiter, identity, metrics, tracker, dashboard assets, recorders) are
// built by the caller and handed in.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/jmoiron/sqlx"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/cli"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/manage"
	"github.com/reftrack/reftrack/pkg/api/ops"
	"github.com/reftrack/reftrack/pkg/api/portal"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/api/tracking"
	"github.com/reftrack/reftrack/pkg/api/web"
	"github.com/reftrack/reftrack/pkg/api/webhooks"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	partnerportal "github.com/reftrack/reftrack/pkg/portal"
	"github.com/reftrack/reftrack/pkg/portalpage"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seal"
	"github.com/reftrack/reftrack/pkg/useragent"
	outbound "github.com/reftrack/reftrack/pkg/webhooks"
	"github.com/reftrack/reftrack/tracker"
)

// Deps is everything the HTTP layer uses; the caller builds each one (cmd/reftrackd in production, the
// test harness in tests).
type Deps struct {
	// DB is the primary database: every write, and every read that authenticates or authorizes, sits
	// on a hot path (click, lead, sale, refund) or must see what a request just wrote.
	DB *sqlx.DB
	// ReadDB, when set, is a pool on a read replica (READ_DATABASE_URL). Only the management handlers
	// receive it, for the reads that tolerate replica lag: the events list, its daily counts and the
	// dashboard's readiness report. Nil: they read DB.
	ReadDB *sqlx.DB
	Logger *slog.Logger
	Config config.Config
	// Clock is the one clock of the server: rate-limit windows, key rotation, login sessions, sales.
	Clock   func() time.Time
	Limiter *ratelimit.Limiter
	// Login is the sign-in setup: a configured OpenID Connect issuer or the development issuer.
	Login     *identity.Login
	Metrics   *metrics.Metrics
	Tracker   tracker.Script
	Dashboard dashboard.Assets
	// Portal is the partner portal page's files (portalpage.Load).
	Portal  portalpage.Assets
	Devices *useragent.Parser
	// Clicks records clicks in batches; its owner closes it after the HTTP server has stopped.
	Clicks *clicks.Recorder
	// Leads, Sales and Refunds record their routes' events in batches; their owner closes
	// them after the HTTP server has stopped. Keys looks program keys up in batches; likewise closed by
	// its owner.
	Leads   *leads.Recorder
	Sales   *sales.Recorder
	Refunds *sales.RefundRecorder
	Keys    *apikeys.Lookups
	Origins *origins.Cache
	Stripe  *payments.Stripe
	// DNS looks programs' verification records up (net.DefaultResolver in the server).
	DNS programs.TXTResolver
	// Demo is the demo shop of development mode (`make run`); nil otherwise.
	Demo *demoshop.Shop
	// Draining reports whether the process is draining before it stops: /livez answers 503 (nil: never).
	Draining func() bool
	// Webhooks manages the programs' webhook endpoints and delivery logs (pkg/webhooks); its Shape
	// (webhookdata.Data) shapes the test events' samples.
	Webhooks *outbound.Store
	// Changed, when set, is told after every successful change answered (any method but GET and HEAD
	// below 400): the webhook delivery worker of this replica looks for new events at once rather than at
	// its next poll. Nil: it polls.
	Changed func()
	// MailQueued, when set, is told after a change that queued mail (an invitation sent, or sent again):
	// the mail courier sends it at once rather than at its next tick. Only those changes wake it: woken by
	// every change, it leased the outbox once per sale under load (an UPDATE each), for mail that only
	// invitations queue. Nil: it waits for its tick.
	MailQueued func()
	// Mailbox is the development mailbox shown at /dev/mail; nil when mail goes through SMTP (always in
	// production).
	Mailbox *mail.Mailbox
	// Spec is the parsed OpenAPI document (openapi.Spec): the route table is read from it. It is only read,
	// so one parse serves every server of the process (/openapi.json is openapi.Document, from the same parse).
	Spec *openapi3.T
}

// optionalDeps are the fields of Deps that may be left nil (or zero), each saying above what nil means.
var optionalDeps = []string{"ReadDB", "Config", "Demo", "Draining", "Changed", "MailQueued", "Mailbox"}

// check refuses a Deps missing a collaborator, naming every one missing: a nil one would otherwise fail
// on first use, in the middle of a request.
func (d Deps) check() error {
	var missing []string
	for name, nilValue := range map[string]bool{
		"DB": d.DB == nil, "Logger": d.Logger == nil, "Clock": d.Clock == nil, "Limiter": d.Limiter == nil,
		"Login": d.Login == nil || d.Login.Verifier == nil, "Metrics": d.Metrics == nil, "Tracker": d.Tracker.Body == nil, "Dashboard": d.Dashboard.Files == nil, "Portal": d.Portal.Files == nil,
		"Devices": d.Devices == nil, "Clicks": d.Clicks == nil, "Leads": d.Leads == nil, "Sales": d.Sales == nil,
		"Refunds": d.Refunds == nil, "Keys": d.Keys == nil, "Origins": d.Origins == nil,
		"Stripe": d.Stripe == nil || d.Stripe.DB == nil || d.Stripe.Log == nil || d.Stripe.Now == nil, "DNS": d.DNS == nil, "Spec": d.Spec == nil,
		"Webhooks": d.Webhooks == nil || d.Webhooks.Shape == nil,
	} {
		if nilValue {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("api: missing dependencies %v", missing)
	}
	return nil
}

// Server implements the generated strict server interface by embedding the handlers of each area.
type Server struct {
	*tracking.Tracking
	*cli.CLI
	*manage.Management
	*web.Pages
	*webhooks.Webhooks
	*ops.Operations
	*portal.Portal
}

var _ gen.StrictServerInterface = (*Server)(nil)

// New builds the echo instance serving the whole API.
func New(ctx context.Context, d Deps) (*echo.Echo, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	doc := d.Spec
	routes, err := route.Load(doc)
	if err != nil {
		return nil, err
	}
	errs := &errorWriter{log: d.Logger, docsURL: d.Config.DocsURL}
	if err := checkWordings(routes); err != nil {
		return nil, err
	}
	contract := newContract(doc, routes)
	specJSON, err := openapi.Document()
	if err != nil {
		return nil, err
	}

	reads := d.DB
	if d.ReadDB != nil {
		reads = d.ReadDB
	}
	authn := &auth.Authenticator{DB: d.DB, Keys: d.Keys, Now: d.Clock, DocsURL: d.Config.DocsURL}
	s := &Server{
		Tracking: &tracking.Tracking{DB: d.DB, Log: d.Logger, Now: d.Clock, Auth: authn, Clicks: d.Clicks, Leads: d.Leads, Sales: d.Sales, Refunds: d.Refunds, DNS: d.DNS,
			Devices: d.Devices, Metrics: d.Metrics, Origins: d.Origins},
		CLI: &cli.CLI{DB: d.DB, Log: d.Logger, Now: d.Clock, BaseURL: d.Config.BaseURL, Verifier: d.Login.Verifier,
			Clicks: d.Clicks, Metrics: d.Metrics, DNS: d.DNS},
		Management: &manage.Management{DB: d.DB, ReadDB: reads, Now: d.Clock, BaseURL: d.Config.BaseURL, Origins: d.Origins, DNS: d.DNS,
			Webhooks: d.Webhooks, MailQueued: d.MailQueued},
		Pages: &web.Pages{DB: d.DB, Log: d.Logger, Now: d.Clock, Login: d.Login, Dashboard: d.Dashboard,
			SecureCookies: strings.HasPrefix(strings.ToLower(d.Config.BaseURL), "https://"), Mailbox: d.Mailbox},
		Webhooks:   &webhooks.Webhooks{Stripe: d.Stripe, Metrics: d.Metrics},
		Operations: &ops.Operations{DB: d.DB.DB, SpecJSON: specJSON, Metrics: d.Metrics, Tracker: d.Tracker, Demo: d.Demo, Draining: d.Draining},
	}
	// Partners' payout details are sealed under a key derived from the webhook secrets' key (the
	// development key without one; production requires one).
	secretsKey := d.Config.WebhookSecretsKey
	if secretsKey == nil {
		secretsKey = seal.DevelopmentKey
	}
	details, err := partnerportal.NewDetails(secretsKey)
	if err != nil {
		return nil, err
	}
	s.Management.Details = details
	s.Portal = &portal.Portal{DB: d.DB, Log: d.Logger, Now: d.Clock, Login: d.Login, Details: details, Assets: d.Portal,
		SecureCookies: strings.HasPrefix(strings.ToLower(d.Config.BaseURL), "https://")}
	mw := &middlewares{routes: routes, auth: authn, limiter: d.Limiter, origins: d.Origins, now: d.Clock,
		log: d.Logger, metrics: d.Metrics, config: d.Config, changed: d.Changed}

	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errs.handle
	e.IPExtractor = ipExtractor(d.Config.TrustedProxies)

	// Order matters: the request id, meta and route policy exist before anything logs; the access log
	// sees the final status; recovery turns a panic into a 500 in the right envelope; the rate limiter
	// refuses before anything else looks at the request; CORS answers for browser routes; the contract
	// (body limit, JSON normalisation, request validation) and then the credential the route requires are
	// checked right before the handler.
	e.Use(mw.requestContext)
	e.Use(mw.accessLog)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			d.Logger.ErrorContext(c.Request().Context(), "panic", "err", err, "stack", string(stack))
			return fmt.Errorf("panic recovered: %w", err)
		},
	}))
	e.Use(mw.rateLimit)
	e.Use(mw.cors)
	e.Use(contract.middleware)
	e.Use(mw.authenticate)

	gen.RegisterHandlers(e, gen.NewStrictHandler(s, nil))
	return e, nil
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
