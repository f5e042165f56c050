// Package config reads reftrackd's configuration from environment variables. Every variable has a
// default that works on a developer machine; docs/configuration.md lists them.
package config

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/mail"
)

// Environment names.
const (
	EnvDevelopment = "development"
	EnvProduction  = "production"
)

// DefaultDatabaseURL is the local Postgres that `make run` and the tests expect.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/reftrack?sslmode=disable&connect_timeout=5"

// Default per-connection timeouts: a few seconds, well above any statement reftrack runs.
const (
	DefaultStatementTimeout = 5 * time.Second
	DefaultLockTimeout      = 3 * time.Second
)

// DefaultDrainDelay is DRAIN_DELAY's default: more than HAProxy's check interval (1s) times its fall count
// (3) in the cluster this repository runs (deploy/cluster).
const DefaultDrainDelay = 5 * time.Second

// DefaultMailFrom is the sender of mail when MAIL_FROM is not set (development's mailbox).
const DefaultMailFrom = "Reftrack <noreply@localhost>"

// DefaultDocsURL is the rotation section of the errors reference.
const DefaultDocsURL = "https://github.com/reftrack/reftrack/blob/main/docs/errors.md#api-key-rotation"

// Config is reftrackd's configuration.
type Config struct {
	// DatabaseURL is the Postgres DSN (DATABASE_URL).
	DatabaseURL string
	// ReadDatabaseURL, when set, is the DSN of a read replica of that database (READ_DATABASE_URL): the
	// reads that tolerate replica lag go there (the events list, its daily counts, the dashboard's
	// readiness). Empty: everything reads the primary.
	ReadDatabaseURL string
	// ListenAddr is the HTTP listen address (LISTEN_ADDR).
	ListenAddr string
	// BaseURL is the public address of this service, used in links it hands out (BASE_URL).
	BaseURL string
	// Env is "development" or "production" (REFTRACK_ENV).
	Env string
	// LogLevel and LogFormat ("json" or "text") configure the structured log (LOG_LEVEL, LOG_FORMAT).
	LogLevel  slog.Level
	LogFormat string
	// DBMaxOpenConns caps the connection pool (DB_MAX_OPEN_CONNS).
	DBMaxOpenConns int
	// DBStatementTimeout and DBLockTimeout bound every statement, and every wait for a lock, on each
	// connection of the server's pool (DB_STATEMENT_TIMEOUT, default 5s; DB_LOCK_TIMEOUT, default 3s): a
	// database that hangs answers 503 instead of holding requests open. 0 turns a timeout off.
	DBStatementTimeout time.Duration
	DBLockTimeout      time.Duration
	// ShutdownTimeout bounds the graceful shutdown (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
	// DrainDelay is how long the server keeps answering after SIGTERM while /livez answers 503, so that
	// load balancers take it out before it stops taking connections (DRAIN_DELAY, default 5s; longer than
	// the balancer's check interval times its fall count; 0 stops at once).
	DrainDelay time.Duration
	// ClickRetentionMonths, when positive, drops months of clicks older than that many months
	// (CLICK_RETENTION_MONTHS; default 0 keeps every click). Clicks that a customer, lead or sale points
	// at are kept, and no month is dropped while a program's cookie or attribution window reaches it.
	ClickRetentionMonths int
	// MigrateDatabaseURL, when set, is the connection `reftrackd migrate` uses instead of DATABASE_URL
	// (MIGRATE_DATABASE_URL): migrations need a direct or session-pooled connection, never a
	// transaction pooler.
	MigrateDatabaseURL string
	// RedisURL, when set, shares rate-limit counts between replicas through Redis (REDIS_URL).
	RedisURL string
	// DocsURL is where API key rotation is documented; rotation warnings and the Link header point there
	// (DOCS_URL).
	DocsURL string
	// TrustedProxies are the networks whose X-Forwarded-For is believed (TRUSTED_PROXIES, a
	// comma-separated CIDR list). Empty: the client IP is the socket's peer address.
	TrustedProxies []*net.IPNet
	// OIDCIssuer is the OpenID Connect issuer that signs users in (OIDC_ISSUER). Empty: the development
	// issuer under {BASE_URL}/dev/oidc, refused in production.
	OIDCIssuer string
	// OIDCClientID is this service's client id at the issuer, the audience of its id_tokens
	// (OIDC_CLIENT_ID, default reftrack).
	OIDCClientID string
	// OIDCClientSecret is the client secret, when the issuer requires one besides PKCE (OIDC_CLIENT_SECRET).
	OIDCClientSecret string
	// PprofAddr, when set, serves Go's profiler (net/http/pprof) on this address, apart from the API
	// (PPROF_ADDR, e.g. 127.0.0.1:6060). Off by default and refused in production mode: profiles show
	// memory and request data.
	PprofAddr string
	// WebhookSecretsKey encrypts webhook endpoints' signing secrets at rest (WEBHOOK_SECRETS_KEY: standard
	// base64 of 32 bytes, `openssl rand -base64 32`). Required in production; nil in development, where a
	// fixed development key is used. Keep it: the secrets sealed under a lost key cannot sign again (rotate
	// each endpoint's secret then).
	WebhookSecretsKey []byte
	// SMTPURL is the mail server partners' invitations and notices go through (SMTP_URL:
	// smtp://user:password@host:587, STARTTLS when offered, or smtps://…:465). Required in production; in
	// development without it, mail is kept and shown at /dev/mail.
	SMTPURL string
	// MailFrom is the sender of that mail (MAIL_FROM, default "Reftrack <noreply@localhost>"; in production
	// an address of your domain).
	MailFrom string
}

// FromEnv reads the configuration through getenv (os.Getenv in production, a map in tests).
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:        str(getenv, "DATABASE_URL", DefaultDatabaseURL),
		ReadDatabaseURL:    getenv("READ_DATABASE_URL"),
		ListenAddr:         str(getenv, "LISTEN_ADDR", ":8080"),
		BaseURL:            strings.TrimRight(str(getenv, "BASE_URL", "http://localhost:8080"), "/"),
		Env:                str(getenv, "REFTRACK_ENV", EnvDevelopment),
		LogFormat:          str(getenv, "LOG_FORMAT", "json"),
		RedisURL:           getenv("REDIS_URL"),
		DocsURL:            str(getenv, "DOCS_URL", DefaultDocsURL),
		OIDCIssuer:         strings.TrimRight(getenv("OIDC_ISSUER"), "/"),
		OIDCClientID:       str(getenv, "OIDC_CLIENT_ID", "reftrack"),
		OIDCClientSecret:   getenv("OIDC_CLIENT_SECRET"),
		PprofAddr:          getenv("PPROF_ADDR"),
		DBMaxOpenConns:     20,
		DBStatementTimeout: DefaultStatementTimeout,
		DBLockTimeout:      DefaultLockTimeout,
		ShutdownTimeout:    15 * time.Second,
		DrainDelay:         DefaultDrainDelay,
		MigrateDatabaseURL: getenv("MIGRATE_DATABASE_URL"),
		SMTPURL:            getenv("SMTP_URL"),
		MailFrom:           str(getenv, "MAIL_FROM", DefaultMailFrom),
	}
	var errs []string
	if c.Env != EnvDevelopment && c.Env != EnvProduction {
		errs = append(errs, fmt.Sprintf("REFTRACK_ENV must be %q or %q, got %q", EnvDevelopment, EnvProduction, c.Env))
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Sprintf("BASE_URL must be an absolute http(s) URL, got %q", c.BaseURL))
	}
	if c.OIDCIssuer == "" && c.Env == EnvProduction {
		errs = append(errs, "OIDC_ISSUER is required when REFTRACK_ENV=production: the development login issuer never runs in production; "+
			"set OIDC_ISSUER (and OIDC_CLIENT_ID) to your OpenID Connect provider")
	}
	if u, err := url.Parse(c.OIDCIssuer); c.OIDCIssuer != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "") {
		errs = append(errs, fmt.Sprintf("OIDC_ISSUER must be an absolute https URL, got %q", c.OIDCIssuer))
	}
	if v := getenv("WEBHOOK_SECRETS_KEY"); v != "" {
		if k, err := base64.StdEncoding.DecodeString(v); err != nil || len(k) != 32 {
			errs = append(errs, "WEBHOOK_SECRETS_KEY must be standard base64 of 32 bytes (openssl rand -base64 32)")
		} else {
			c.WebhookSecretsKey = k
		}
	} else if c.Env == EnvProduction {
		errs = append(errs, "WEBHOOK_SECRETS_KEY is required when REFTRACK_ENV=production: it encrypts webhook endpoint secrets at rest; "+
			"set it to standard base64 of 32 random bytes (openssl rand -base64 32) and keep it")
	}
	if c.SMTPURL != "" {
		// Parsed as the server will use it; the URL is left out of the message (it may hold a password).
		if _, err := mail.NewSMTP(c.SMTPURL, c.MailFrom); err != nil {
			errs = append(errs, "SMTP_URL and MAIL_FROM must be smtp://[user[:password]@]host[:port] (or smtps://) and a mail address: "+
				strings.ReplaceAll(err.Error(), c.SMTPURL, "SMTP_URL"))
		}
	} else if c.Env == EnvProduction {
		errs = append(errs, "SMTP_URL is required when REFTRACK_ENV=production: partners' invitations and notices go through it; "+
			"set it to your mail server (smtp://user:password@host:587) and MAIL_FROM to an address of your domain")
	}
	if c.PprofAddr != "" && c.Env == EnvProduction {
		errs = append(errs, "PPROF_ADDR is refused when REFTRACK_ENV=production: the profiler shows memory and request data; "+
			"profile a development-mode server instead")
	}
	// Parsed as the server will parse it (db.Open). pq's message is left out: it may quote the
	// connection string, password included.
	if _, err := pq.NewConfig(c.ReadDatabaseURL); c.ReadDatabaseURL != "" && err != nil {
		errs = append(errs, "READ_DATABASE_URL must be a PostgreSQL connection URL (postgres://user@host:port/database?…) "+
			"or key=value connection string, like DATABASE_URL")
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Sprintf("LOG_FORMAT must be json or text, got %q", c.LogFormat))
	}
	if err := c.LogLevel.UnmarshalText([]byte(str(getenv, "LOG_LEVEL", "info"))); err != nil {
		errs = append(errs, "LOG_LEVEL must be debug, info, warn or error")
	}
	if v := getenv("DB_MAX_OPEN_CONNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			errs = append(errs, fmt.Sprintf("DB_MAX_OPEN_CONNS must be a positive integer, got %q", v))
		}
		c.DBMaxOpenConns = n
	}
	for _, t := range []struct {
		name string
		to   *time.Duration
	}{{"DB_STATEMENT_TIMEOUT", &c.DBStatementTimeout}, {"DB_LOCK_TIMEOUT", &c.DBLockTimeout}} {
		if v := getenv(t.name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || (d > 0 && d < time.Millisecond) {
				errs = append(errs, fmt.Sprintf("%s must be a duration such as 5s (0 turns it off), got %q", t.name, v))
			}
			*t.to = d
		}
	}
	if v := getenv("SHUTDOWN_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Sprintf("SHUTDOWN_TIMEOUT must be a positive duration such as 15s, got %q", v))
		}
		c.ShutdownTimeout = d
	}
	if v := getenv("CLICK_RETENTION_MONTHS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("CLICK_RETENTION_MONTHS must be a number of months (0 keeps every click), got %q", v))
		}
		c.ClickRetentionMonths = n
	}
	if v := getenv("DRAIN_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			errs = append(errs, fmt.Sprintf("DRAIN_DELAY must be a duration such as 5s (0 stops at once), got %q", v))
		}
		c.DrainDelay = d
	}
	for _, cidr := range strings.Split(getenv("TRUSTED_PROXIES"), ",") {
		if cidr = strings.TrimSpace(cidr); cidr == "" {
			continue
		}
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			errs = append(errs, fmt.Sprintf("TRUSTED_PROXIES must be a comma-separated list of CIDR ranges, got %q", cidr))
			continue
		}
		c.TrustedProxies = append(c.TrustedProxies, n)
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

// Production reports whether the service runs in production mode.
func (c Config) Production() bool { return c.Env == EnvProduction }

// DatabaseURLSet reports whether DATABASE_URL was given explicitly (`reftrackd dev` only starts a local
// Postgres when it was not).
func DatabaseURLSet(getenv func(string) string) bool { return getenv("DATABASE_URL") != "" }

// Getenv is os.Getenv, named so callers read well: config.FromEnv(config.Getenv).
func Getenv(key string) string { return os.Getenv(key) }

func str(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
