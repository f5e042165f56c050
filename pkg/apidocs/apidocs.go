// Package apidocs serves the rendered API reference (/docs) and the service's front page: the served
// OpenAPI document rendered by Redoc, whose standalone bundle is embedded here, pinned (no network at run
// time).
//
// The bundle is Redoc's own release file, unchanged: `npm pack redoc@2.5.2`, package/bundles/
// redoc.standalone.js (MIT, REDOC-LICENSE; its dependencies' notices in redoc.standalone.js.LICENSE.txt;
// sha256 6beb5aea23b71d09122ee35de8f326e38aec050e774f3bfba1f34e5c36608986). Another version: the same
// two files from its package, Version here, and the script's path in openapi/openapi.yaml.
package apidocs

import (
	_ "embed"
	"html/template"
	"strings"
)

// Version is the embedded Redoc release.
const Version = "2.5.2"

// ContentSecurityPolicy keeps the reference page to this server: Redoc's sidebar shows a logo from its
// makers' CDN, which the browser must not fetch (no network at run time), and nothing else needs another
// origin. Redoc sets its styles inline and runs its search in a worker made from a blob.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; frame-ancestors 'none'; base-uri 'none'"

// ScriptPath is where the bundle is served: the version in the path lets browsers keep it for good.
const ScriptPath = "/docs/redoc-" + Version + ".standalone.js"

//go:embed redoc.standalone.js
var script []byte

// Script is the Redoc bundle.
func Script() []byte { return script }

var pages = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reftrack API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<redoc spec-url="/openapi.json" hide-download-button="false"></redoc>
<script src="{{.Script}}"></script>
</body>
</html>
`))

var home = template.Must(template.New("home").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>reftrack</title>
<style>body { font: 16px/1.5 system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem; color: #222; }</style>
</head>
<body>
<main>
<h1>reftrack</h1>
<p>Referral tracking: clicks, sign-ups and sales attributed to the partner who referred them, with their commissions.</p>
<ul>
<li><a href="/docs">API reference</a></li>
<li><a href="/openapi.json">OpenAPI document</a> (JSON)</li>
<li><a href="/dashboard">Dashboard</a></li>
</ul>
</main>
</body>
</html>
`))

// ReferencePage is the /docs page.
func ReferencePage() ([]byte, error) {
	var b strings.Builder
	if err := pages.Execute(&b, struct{ Script string }{ScriptPath}); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// HomePage is the front page naming the service, with links to the reference and the spec.
func HomePage() ([]byte, error) {
	var b strings.Builder
	if err := home.Execute(&b, nil); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
