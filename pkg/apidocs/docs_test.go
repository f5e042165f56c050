package apidocs_test

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/apidocs"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/browsertest"
)

var chromium browsertest.Suite

func TestMain(m *testing.M) {
	os.Exit(apitest.Main(func() int { return chromium.Run(m) }))
}

// The front page names the service and links to the reference, the spec and the dashboard; /docs loads
// the served spec into the embedded renderer, which is served whole and cacheable for good.
func TestPages(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	home := env.Do(http.MethodGet, "/", nil)
	if home.Status != http.StatusOK || !strings.HasPrefix(home.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", home.Status, home.Header.Get("Content-Type"))
	}
	for _, link := range []string{`href="/docs"`, `href="/openapi.json"`, `href="/dashboard"`, "<h1>reftrack</h1>"} {
		if !bytes.Contains(home.Body, []byte(link)) {
			t.Errorf("front page lacks %s", link)
		}
	}
	docs := env.Do(http.MethodGet, "/docs", nil)
	if docs.Status != http.StatusOK || docs.Header.Get("Content-Security-Policy") != apidocs.ContentSecurityPolicy ||
		!bytes.Contains(docs.Body, []byte(`<redoc spec-url="/openapi.json"`)) ||
		!bytes.Contains(docs.Body, []byte(`<script src="`+apidocs.ScriptPath+`"></script>`)) {
		t.Fatalf("GET /docs: %d %s", docs.Status, docs.Body)
	}
	script := env.Do(http.MethodGet, apidocs.ScriptPath, nil)
	if script.Status != http.StatusOK || script.Header.Get("Content-Type") != "application/javascript" ||
		script.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || !bytes.Equal(script.Body, apidocs.Script()) {
		t.Errorf("GET %s: %d %v, %d bytes", apidocs.ScriptPath, script.Status, script.Header, len(script.Body))
	}
}

// In Chromium the reference renders the served spec's operations, and nothing is fetched from any other
// origin: Redoc's sidebar asks for its makers' logo from their CDN, and the page's Content-Security-Policy
// refuses it (Chromium says so on the console) before anything leaves the browser. The front page has no
// serious or critical accessibility finding (axe-core).
func TestReferenceRendersOffline(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	base := env.Proxy()
	tab := chromium.Open(t)
	if status := tab.Goto(base + "/docs"); status != http.StatusOK {
		t.Fatalf("GET /docs: %d", status)
	}
	tab.WaitFor(`document.body.innerText.includes("Record a referral click") && document.body.innerText.includes("API docs by Redocly")`)
	origin, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rec := tab.Record()
	for _, r := range rec.Requests {
		u, err := url.Parse(r.URL)
		if err == nil && (u.Scheme == "data" || u.Scheme == "blob" || u.Host == origin.Host) {
			continue
		}
		// Chromium logs the refusal after the request event: await it (the test fails if it never comes).
		// Its wording changed between versions ("Refused to load the image '…' because it violates …",
		// "Loading the image '…' violates …. The action has been blocked."); both name the image and the policy.
		tab.WaitForConsole("the image '"+r.URL+"'", "violates the following Content Security Policy directive: \"img-src 'self' data:\"")
	}
	if len(rec.Errors) > 0 {
		t.Errorf("the reference threw: %v", rec.Errors)
	}

	// The front page, which links here, in the same tab.
	if status := tab.Goto(base + "/"); status != http.StatusOK {
		t.Fatalf("GET /: %d", status)
	}
	tab.Accessible("the front page")
}
