package apitest

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api"
	"github.com/reftrack/reftrack/pkg/api/webhookdata"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/egress"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/platform/ratelimit"
	"github.com/reftrack/reftrack/pkg/portalpage"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seal"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/useragent"
	"github.com/reftrack/reftrack/pkg/webhooks"
	"github.com/reftrack/reftrack/tracker"
)

// What every test server of the process shares, made once: it is read-only and costly to make (the
// spec is parsed, the assets compressed, an RSA key generated).
var shared = sync.OnceValues(func() (*fixed, error) {
	f := &fixed{}
	var err error
	if f.spec, err = openapi.Spec(); err != nil {
		return nil, err
	}
	if f.tracker, err = tracker.Load(); err != nil {
		return nil, err
	}
	if f.dashboard, err = dashboard.Load(); err != nil {
		return nil, err
	}
	if f.portal, err = portalpage.Load(); err != nil {
		return nil, err
	}
	if f.devKey, err = devIssuerKey(); err != nil {
		return nil, err
	}
	// The response validator's own copy, without servers (its router reads them, which would make it check
	// the Host): a shallow copy of the parsed spec, as everything under it is only read, rather than a
	// second parse of the YAML in every test process.
	validation := *f.spec
	validation.Servers = nil
	f.validationDoc = &validation
	if f.router, err = gorillamux.NewRouter(f.validationDoc); err != nil {
		return nil, err
	}
	document, err := openapi.Document()
	if err != nil {
		return nil, err
	}
	if f.strict, err = newStrictSpec(document); err != nil {
		return nil, err
	}
	return f, nil
})

type fixed struct {
	spec          *openapi3.T
	tracker       tracker.Script
	dashboard     dashboard.Assets
	portal        portalpage.Assets
	devKey        *rsa.PrivateKey
	validationDoc *openapi3.T
	router        routers.Router
	strict        *strictSpec
}

func validationRouter() (*openapi3.T, routers.Router, *strictSpec, error) {
	f, err := shared()
	if err != nil {
		return nil, nil, nil, err
	}
	return f.validationDoc, f.router, f.strict, nil
}

// CheckSchema validates body, a JSON document no operation carries (a webhook's body, say), against the
// spec's component schema name, as every exchange is checked: by kin-openapi and by the strict JSON Schema
// reading of the spec (strictSpec).
func CheckSchema(name string, body []byte) error {
	f, err := shared()
	if err != nil {
		return err
	}
	ref := f.validationDoc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the spec has no schema %s", name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := ref.Value.VisitJSON(v, openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("%s (kin-openapi): %w", name, err)
	}
	if err := f.strict.component(name, body); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// collaborators builds what the server uses, as cmd/reftrackd does, with a test's clock and limiter.
func collaborators(cfg config.Config, d *dbtest.Database, logger *slog.Logger, clock func() time.Time, limiter *ratelimit.Limiter) (api.Deps, error) {
	f, err := shared()
	if err != nil {
		return api.Deps{}, err
	}
	login, err := identity.NewLogin(context.Background(), identity.LoginOptions{
		Issuer: cfg.OIDCIssuer, ClientID: cfg.OIDCClientID, ClientSecret: cfg.OIDCClientSecret, BaseURL: cfg.BaseURL,
		Production: cfg.Production(), Now: clock, DevKey: f.devKey,
	})
	if err != nil {
		return api.Deps{}, err
	}
	m := metrics.New()
	sealer, err := seal.New(seal.DevelopmentKey)
	if err != nil {
		return api.Deps{}, err
	}
	hooks := &webhooks.Store{DB: d.DB, Policy: egress.Policy{Development: !cfg.Production(), Resolver: noDNS}, Sealer: sealer,
		Shape: webhookdata.Data}
	return api.Deps{
		Webhooks: hooks,
		DB:       d.DB, Logger: logger, Config: cfg, Clock: clock, Limiter: limiter, Login: login, Metrics: m,
		Tracker: f.tracker, Dashboard: f.dashboard, Portal: f.portal, Devices: useragent.NewParser(4096),
		Clicks:  clicks.NewRecorder(d.DB, logger, clicks.Writers, clicks.MaxBatch, m.ClickBatch),
		Leads:   leads.NewRecorder(d.DB, logger, leads.MaxBatch, m.LeadBatch),
		Sales:   sales.NewRecorder(d.DB, logger, clock, sales.MaxBatch, m.SaleBatch),
		Refunds: sales.NewRefundRecorder(d.DB, logger, clock, sales.MaxBatch, m.RefundBatch),
		Keys:    apikeys.NewLookups(d.DB, apikeys.LookupWriters, apikeys.LookupMaxBatch),
		Origins: origins.New(d.DB, clock), Stripe: &payments.Stripe{DB: d.DB, Log: logger, Now: clock}, Spec: f.spec,
		Mailbox: mail.NewMailbox(cfg.MailFrom, 100, clock),
	}, nil
}

// noDNS resolves no name, at once: the servers of tests never reach the network (a webhook URL names
// 127.0.0.1 in tests).
var noDNS = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
	return nil, errors.New("apitest: no DNS in tests")
}}

// FakeDNS answers TXT lookups from its map and counts them; empty, it finds no record anywhere.
type FakeDNS struct {
	mu      sync.Mutex
	Records map[string][]string
	lookups int
}

// LookupTXT answers name's records, or that it does not exist.
func (f *FakeDNS) LookupTXT(_ context.Context, name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if v, ok := f.Records[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// Set makes name answer values.
func (f *FakeDNS) Set(name string, values ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Records == nil {
		f.Records = map[string][]string{}
	}
	f.Records[name] = values
}

// Lookups is how many lookups were made.
func (f *FakeDNS) Lookups() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

// devIssuerTestKey signs the development issuer's tokens in tests: a fixed key, made for the tests and
// used nowhere else, rather than a new 2048-bit key (a prime search of varying length) in every test
// process.
//
//go:embed devissuer_test_key.pem
var devIssuerTestKey []byte

func devIssuerKey() (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(devIssuerTestKey)
	if block == nil {
		return nil, errors.New("apitest: devissuer_test_key.pem holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("apitest: development issuer key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("apitest: development issuer key is not RSA")
	}
	return rk, nil
}
