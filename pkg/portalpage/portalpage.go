// Package portalpage is the partner portal's page: its HTML, its script (the helpers it shares with the
// dashboard, pkg/webui, joined with portal.js at start) and its styles. The portal's cookies and CSRF
// token are the dashboard's scheme (pkg/dashboard); its routes are pkg/api/portal's.
package portalpage

import (
	"bytes"
	"embed"
	"html/template"

	"github.com/reftrack/reftrack/pkg/webui"
)

//go:embed assets/portal.js assets/portal.css
var files embed.FS

//go:embed portal.html
var source string

var page = template.Must(template.New("portal").Parse(source))

const (
	scriptHead = `// The reftrack partner portal: plain JavaScript, no dependencies. It reads everything through the
// documented /api/v1/partner routes, authenticated by the portal's session cookie; calls that change
// something carry the page's CSRF token.
"use strict";
(function () {
`
	scriptTail = "})();\n"
)

// Assets are the portal's static files (portal.js, portal.css) and their version.
type Assets struct{ webui.Assets }

// Load reads the portal's static files once, at start-up.
func Load() (Assets, error) {
	part, err := files.ReadFile("assets/portal.js")
	if err != nil {
		return Assets{}, err
	}
	css, err := files.ReadFile("assets/portal.css")
	if err != nil {
		return Assets{}, err
	}
	js, err := webui.Script(scriptHead, [][]byte{part}, scriptTail)
	if err != nil {
		return Assets{}, err
	}
	return Assets{webui.Build([]string{"portal.js", "portal.css"}, map[string][]byte{"portal.js": js, "portal.css": css})}, nil
}

// Page renders the partner portal for a signed-in person; program is the one to open first ("" for the
// first).
func (a Assets) Page(email, csrf, program string) ([]byte, error) {
	var b bytes.Buffer
	err := page.Execute(&b, struct{ Email, CSRF, Version, Program string }{email, csrf, a.Version, program})
	return b.Bytes(), err
}
