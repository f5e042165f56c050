// Package dashboard is the dashboard web page and the partner portal's: their static files (a small script
// and style sheet each, with no dependencies), the pages that load them, and the cookies of a session (the
// session itself, the short-lived cookie binding a sign-in to its browser, and the CSRF token derived from
// the session).
package dashboard

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"time"

	"github.com/reftrack/reftrack/pkg/synthetic"
	"github.com/reftrack/reftrack/pkg/webui"
)

// Cookie names.
const (
	SessionCookie = "reftrack_session"
	LoginCookie   = "reftrack_login"
)

// CSRFHeader carries the page's CSRF token on calls that change something.
const CSRFHeader = "X-CSRF-Token"

// ContentSecurityPolicy keeps the page to this server's own script, styles and API.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

//go:embed assets/app.css assets/dashboard/*.js
var files embed.FS

// The dashboard's script, app.js, is joined at start from the helpers it shares with the partner portal
// (pkg/webui) and one file per part of the page (assets/dashboard/), in the order of scripts, inside one function scope: the parts share the page's
// state and helpers, and no build step stands between an edit and the page (Miniflux's
// internal/ui/static joins its scripts the same way). TestScriptsListsEveryPart holds the list to the
// folder.
var scripts = []string{
	"core.js",        // the page's state and the helpers every part uses: elements, the API, notices, money
	"start.js",       // signing in, the programs and choosing one
	"views.js",       // the one table of the views, the navigation between them and their addresses
	"overview.js",    // the program's terms and readiness
	"events.js",      // the events list and its chart
	"ledger.js",      // commissions and payouts
	"partners.js",    // partners and invitations
	"partner.js",     // a partner's page
	"customers.js",   // customers, their partners and money
	"links.js",       // referral links
	"performance.js", // the performance report (KPIs, charts, partners' table)
	"forms.js",       // programs, settings, the processor and the team
	"webhooks.js",    // outbound webhook endpoints and their deliveries
	"apikey.js",      // the program's API key
	"install.js",     // the tracker tag and the lead, sale and refund calls to copy
}

const (
	scriptHead = `// The reftrack dashboard: plain JavaScript, no dependencies. It reads and changes everything through
// the same documented API the CLI and integrators use, authenticated by the session cookie; calls that
// change something carry the page's CSRF token.
"use strict";
(function () {
`
	scriptTail = "  start();\n})();\n"
)

// joinScripts is app.js: the shared helpers (pkg/webui), then the parts in order, inside one function.
func joinScripts() ([]byte, error) {
	parts := make([][]byte, len(scripts))
	for i, name := range scripts {
		part, err := files.ReadFile("assets/dashboard/" + name)
		if err != nil {
			return nil, err
		}
		parts[i] = part
	}
	return webui.Script(scriptHead, parts, scriptTail)
}

//go:embed page.html
var pageSource string

var page = template.Must(template.New("dashboard").Parse(pageSource))

// Assets are the dashboard's static files (app.js, app.css) and their version.
type Assets struct{ webui.Assets }

// Load reads the dashboard's static files once, at start-up.
func Load() (Assets, error) {
	js, err := joinScripts()
	if err != nil {
		return Assets{}, err
	}
	css, err := files.ReadFile("assets/app.css")
	if err != nil {
		return Assets{}, err
	}
	return Assets{webui.Build([]string{"app.js", "app.css"}, map[string][]byte{"app.js": js, "app.css": css})}, nil
}

// Page renders the dashboard for a signed-in session.
func (a Assets) Page(email, csrf string) ([]byte, error) {
	var b bytes.Buffer
	// The synthetic markers go into the page so that the script labels `reftrack test` events by the
	// rule pkg/synthetic writes them with.
	err := page.Execute(&b, struct {
		Email, CSRF, Version                              string
		SyntheticSession, SyntheticCustomer, SyntheticTxn string
	}{email, csrf, a.Version, synthetic.SessionPrefix, synthetic.CustomerKeyPrefix, synthetic.TransactionPrefix})
	return b.Bytes(), err
}

// CSRFToken is the session's CSRF token: an HMAC of a fixed label keyed by the session token, so it
// needs no storage and only a holder of the session (the server, which renders it into the page) can
// make it. The session cookie is HttpOnly, so a script on another site can read neither.
func CSRFToken(session string) string {
	m := hmac.New(sha256.New, []byte(session))
	m.Write([]byte("reftrack dashboard csrf v1"))
	return hex.EncodeToString(m.Sum(nil))
}

// ValidCSRF reports whether token is the session's CSRF token.
func ValidCSRF(session, token string) bool {
	return session != "" && token != "" && subtle.ConstantTimeCompare([]byte(CSRFToken(session)), []byte(token)) == 1
}

// Cookie is a dashboard cookie: HttpOnly, SameSite=Lax, Secure when the server is reached over https,
// valid for ttl (a negative ttl clears it).
func Cookie(name, value string, secure bool, ttl time.Duration) string {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode}
	if ttl < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(ttl / time.Second)
	}
	return c.String()
}
