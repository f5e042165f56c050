// Package web is the HTTP area of the browser pages: the login pages (the CLI's and the dashboard's
// sign-in, through the configured or the development OpenID Connect issuer), the development issuer
// itself and the development mailbox, and the dashboard page with its assets, sign-in and sign-out.
package web

import (
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/identity"
	"github.com/reftrack/reftrack/pkg/mail"
)

// Pages implements the page operations of the strict server interface.
type Pages struct {
	DB    *sqlx.DB
	Log   *slog.Logger
	Now   func() time.Time
	Login *identity.Login
	// Dashboard is the dashboard page and its static files.
	Dashboard dashboard.Assets
	// SecureCookies marks the dashboard's cookies Secure (the server is reached over https).
	SecureCookies bool
	// Mailbox is the development mailbox (/dev/mail); nil when mail goes through SMTP.
	Mailbox *mail.Mailbox
}
