package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != DefaultDatabaseURL || c.ListenAddr != ":8080" || c.BaseURL != "http://localhost:8080" ||
		c.Env != EnvDevelopment || c.LogLevel != slog.LevelInfo || c.LogFormat != "json" ||
		c.DBMaxOpenConns != 20 || c.ShutdownTimeout != 15*time.Second || c.TrustedProxies != nil ||
		c.DBStatementTimeout != 5*time.Second || c.DBLockTimeout != 3*time.Second || c.DrainDelay != 5*time.Second ||
		c.MigrateDatabaseURL != "" {
		t.Errorf("defaults = %+v", c)
	}
}

func TestOverrides(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(map[string]string{
		"DATABASE_URL": "postgres://x/y", "LISTEN_ADDR": "127.0.0.1:9000", "BASE_URL": "https://t.example.com/",
		"REFTRACK_ENV": "production", "LOG_LEVEL": "debug", "LOG_FORMAT": "text", "DB_MAX_OPEN_CONNS": "5",
		"SHUTDOWN_TIMEOUT": "3s", "DB_STATEMENT_TIMEOUT": "2s", "DB_LOCK_TIMEOUT": "0", "TRUSTED_PROXIES": "10.0.0.0/8, 2001:db8::/32",
		"OIDC_ISSUER": "https://id.example.com/", "OIDC_CLIENT_ID": "rt-prod", "OIDC_CLIENT_SECRET": "s3",
		"DRAIN_DELAY": "0", "MIGRATE_DATABASE_URL": "postgres://direct/y", "CLICK_RETENTION_MONTHS": "13",
		"WEBHOOK_SECRETS_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"SMTP_URL":            "smtp://relay:pw@mail.example.com:587", "MAIL_FROM": "Example <partners@example.com>",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != "postgres://x/y" || c.ListenAddr != "127.0.0.1:9000" || c.BaseURL != "https://t.example.com" ||
		!c.Production() || c.LogLevel != slog.LevelDebug || c.LogFormat != "text" || c.DBMaxOpenConns != 5 ||
		c.ShutdownTimeout != 3*time.Second || c.DBStatementTimeout != 2*time.Second || c.DBLockTimeout != 0 || len(c.TrustedProxies) != 2 ||
		c.TrustedProxies[0].String() != "10.0.0.0/8" || c.TrustedProxies[1].String() != "2001:db8::/32" ||
		c.OIDCIssuer != "https://id.example.com" || c.OIDCClientID != "rt-prod" || c.OIDCClientSecret != "s3" ||
		c.DrainDelay != 0 || c.MigrateDatabaseURL != "postgres://direct/y" || c.ClickRetentionMonths != 13 ||
		len(c.WebhookSecretsKey) != 32 || c.WebhookSecretsKey[31] != 31 ||
		c.SMTPURL != "smtp://relay:pw@mail.example.com:587" || c.MailFrom != "Example <partners@example.com>" {
		t.Errorf("config = %+v", c)
	}
}

// Production never runs the development login issuer: without OIDC_ISSUER the server refuses to start.
func TestProductionNeedsAnIssuer(t *testing.T) {
	t.Parallel()
	_, err := FromEnv(env(map[string]string{"REFTRACK_ENV": "production"}))
	if err == nil || !strings.Contains(err.Error(), "OIDC_ISSUER is required when REFTRACK_ENV=production") {
		t.Fatalf("err = %v", err)
	}
	c, err := FromEnv(env(map[string]string{}))
	if err != nil || c.OIDCIssuer != "" || c.OIDCClientID != "reftrack" {
		t.Errorf("development defaults: %+v, %v", c, err)
	}
}

// Webhook secrets are sealed under WEBHOOK_SECRETS_KEY: production refuses to start without one, and
// anything but base64 of 32 bytes is refused everywhere; development uses a fixed key (nil here).
func TestWebhookSecretsKey(t *testing.T) {
	t.Parallel()
	_, err := FromEnv(env(map[string]string{"REFTRACK_ENV": "production", "OIDC_ISSUER": "https://id.example.com"}))
	if err == nil || !strings.Contains(err.Error(), "WEBHOOK_SECRETS_KEY is required when REFTRACK_ENV=production") {
		t.Errorf("production without a key: %v", err)
	}
	for _, bad := range []string{"short", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd", "!!!"} {
		if _, err := FromEnv(env(map[string]string{"WEBHOOK_SECRETS_KEY": bad})); err == nil ||
			!strings.Contains(err.Error(), "WEBHOOK_SECRETS_KEY must be standard base64 of 32 bytes") {
			t.Errorf("key %q: %v", bad, err)
		}
	}
	if c, err := FromEnv(env(map[string]string{})); err != nil || c.WebhookSecretsKey != nil {
		t.Errorf("development: %v %v", c.WebhookSecretsKey, err)
	}
}

// The profiler is off by default, on when PPROF_ADDR names an address, and refused in production.
func TestPprofNeverInProduction(t *testing.T) {
	t.Parallel()
	if c, err := FromEnv(env(map[string]string{})); err != nil || c.PprofAddr != "" {
		t.Errorf("default: PprofAddr %q, %v", c.PprofAddr, err)
	}
	if c, err := FromEnv(env(map[string]string{"PPROF_ADDR": "127.0.0.1:6060"})); err != nil || c.PprofAddr != "127.0.0.1:6060" {
		t.Errorf("development: PprofAddr %q, %v", c.PprofAddr, err)
	}
	_, err := FromEnv(env(map[string]string{"REFTRACK_ENV": "production", "OIDC_ISSUER": "https://id.example.com",
		"PPROF_ADDR": "127.0.0.1:6060", "WEBHOOK_SECRETS_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}))
	if err == nil || !strings.Contains(err.Error(), "PPROF_ADDR is refused when REFTRACK_ENV=production") {
		t.Errorf("production with PPROF_ADDR: %v", err)
	}
}

func TestInvalidValuesAreAllReported(t *testing.T) {
	t.Parallel()
	_, err := FromEnv(env(map[string]string{
		"REFTRACK_ENV": "staging", "BASE_URL": "localhost", "LOG_FORMAT": "xml", "LOG_LEVEL": "loud",
		"DB_MAX_OPEN_CONNS": "0", "SHUTDOWN_TIMEOUT": "soon", "TRUSTED_PROXIES": "10.0.0.1",
		"DB_STATEMENT_TIMEOUT": "-1s", "DB_LOCK_TIMEOUT": "forever", "DRAIN_DELAY": "-5s", "CLICK_RETENTION_MONTHS": "-1",
	}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, name := range []string{"REFTRACK_ENV", "BASE_URL", "LOG_FORMAT", "LOG_LEVEL", "DB_MAX_OPEN_CONNS", "SHUTDOWN_TIMEOUT", "TRUSTED_PROXIES",
		"DB_STATEMENT_TIMEOUT", "DB_LOCK_TIMEOUT", "DRAIN_DELAY", "CLICK_RETENTION_MONTHS"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}

// READ_DATABASE_URL is optional (unset: every read goes to the primary); when set it must parse as a
// PostgreSQL connection string, and the refusal never repeats it (it may carry a password).
func TestReadDatabaseURL(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(nil))
	if err != nil || c.ReadDatabaseURL != "" {
		t.Errorf("unset: ReadDatabaseURL %q, %v", c.ReadDatabaseURL, err)
	}
	for _, dsn := range []string{"postgres://ro@replica.internal:5432/reftrack?sslmode=require", "host=replica.internal dbname=reftrack user=ro"} {
		c, err := FromEnv(env(map[string]string{"READ_DATABASE_URL": dsn}))
		if err != nil || c.ReadDatabaseURL != dsn || c.DatabaseURL != DefaultDatabaseURL {
			t.Errorf("%q: ReadDatabaseURL %q, DatabaseURL %q, %v", dsn, c.ReadDatabaseURL, c.DatabaseURL, err)
		}
	}
	for _, dsn := range []string{"replica.internal", "postgres://ro:s3cret@replica.internal:99999/reftrack", "postgres://ro:s3cret@replica/reftrack?sslmode=maybe"} {
		_, err := FromEnv(env(map[string]string{"READ_DATABASE_URL": dsn}))
		if err == nil || !strings.Contains(err.Error(), "READ_DATABASE_URL must be a PostgreSQL connection URL") {
			t.Errorf("%q: err = %v", dsn, err)
		} else if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "replica") {
			t.Errorf("%q: the error repeats the connection string: %v", dsn, err)
		}
	}
}

// Mail goes through SMTP_URL, required in production; in development without it, to /dev/mail. A bad URL
// or sender is refused without repeating the URL (it may hold a password).
func TestMailSettings(t *testing.T) {
	t.Parallel()
	_, err := FromEnv(env(map[string]string{"REFTRACK_ENV": "production", "OIDC_ISSUER": "https://id.example.com",
		"WEBHOOK_SECRETS_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="}))
	if err == nil || !strings.Contains(err.Error(), "SMTP_URL is required when REFTRACK_ENV=production") {
		t.Errorf("production without SMTP_URL: %v", err)
	}
	for _, bad := range []map[string]string{
		{"SMTP_URL": "http://relay:hunter2@mail.example.com"},
		{"SMTP_URL": "smtp://relay:hunter2@mail.example.com:port"},
		{"SMTP_URL": "smtp://relay:hunter2@mail.example.com", "MAIL_FROM": "nobody"},
	} {
		_, err := FromEnv(env(bad))
		if err == nil || !strings.Contains(err.Error(), "SMTP_URL and MAIL_FROM must be") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	c, err := FromEnv(env(map[string]string{}))
	if err != nil || c.SMTPURL != "" || c.MailFrom != DefaultMailFrom {
		t.Errorf("development: %q %q %v", c.SMTPURL, c.MailFrom, err)
	}
}
