package tracker_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/browsertest"
)

var chromium browsertest.Suite

func TestMain(m *testing.M) {
	os.Exit(apitest.Main(func() int { return chromium.Run(m) })) // databases handed on and exchanges counted, see apitest.Main
}

// tab is one page in its own browser context.
type tab struct {
	*browsertest.Tab
	t *testing.T
}

func openTab(t *testing.T) *tab {
	t.Helper()
	return &tab{Tab: chromium.Open(t), t: t}
}

// visit loads url and waits until the tracker has finished what the page load started.
func (tb *tab) visit(url string) {
	tb.t.Helper()
	if status := tb.Goto(url); status != http.StatusOK {
		tb.t.Fatalf("GET %s: %d", url, status)
	}
	tb.eval("window.svc ? window.svc.ready() : null", nil)
}

// eval evaluates a JavaScript expression (a promise is awaited) and decodes its value into out.
func (tb *tab) eval(expr string, out any) {
	tb.t.Helper()
	tb.Eval(expr, out)
}

type cookie = browsertest.Cookie

func (tb *tab) cookies() []cookie {
	tb.t.Helper()
	return tb.Cookies()
}

// clickCookie returns the svc_click_id cookie, or nil.
func (tb *tab) clickCookie() *cookie {
	tb.t.Helper()
	for _, c := range tb.cookies() {
		if c.Name == "svc_click_id" {
			return &c
		}
	}
	return nil
}

type pageRecord browsertest.Record

// record is what the page logged, threw and requested so far.
func (tb *tab) record() pageRecord {
	tb.t.Helper()
	return pageRecord(tb.Record())
}

// svcLog returns the tracker's console lines ("[svc] …") as "type: text".
func (r pageRecord) svcLog() []string {
	var out []string
	for _, m := range r.Console {
		if strings.HasPrefix(m.Text, "[svc]") {
			out = append(out, m.Type+": "+m.Text)
		}
	}
	return out
}

// requested counts the requests whose URL contains s.
func (r pageRecord) requested(method, s string) int {
	n := 0
	for _, q := range r.Requests {
		if q.Method == method && strings.Contains(q.URL, s) {
			n++
		}
	}
	return n
}

// site is a brand's web site (any *.test host name, all on one local port) in front of a real reftrack
// server, whose answers to the browser are checked against the spec.
type site struct {
	t      *testing.T
	env    *apitest.Env
	api    string // base URL the tracker talks to
	port   string
	scheme string
	mu     sync.Mutex
	pages  map[string]string
}

func newSite(t *testing.T) *site { return startSite(t, false) }

// newHTTPSSite serves the brand's pages over HTTPS (a self-signed certificate the tab accepts).
func newHTTPSSite(t *testing.T) *site { return startSite(t, true) }

func startSite(t *testing.T, https bool) *site {
	t.Helper()
	s := &site{t: t, env: apitest.New(t), pages: map[string]string{}, scheme: "http"}
	s.api = s.env.Proxy()
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		html, ok := s.pages[r.URL.Path]
		s.mu.Unlock()
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent) // no 404 in the console the tests read
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, html)
	})
	srv := httptest.NewUnstartedServer(handler)
	if https {
		srv.StartTLS()
		s.scheme = "https"
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	_, s.port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return s
}

// origin is the brand site's origin on host.
func (s *site) origin(host string) string { return s.scheme + "://" + host + ":" + s.port }

// program seeds a program whose site is allowed on the given hosts.
func (s *site) program(leadAuth string, hosts ...string) seed.Result {
	s.t.Helper()
	var origins []string
	for _, h := range hosts {
		origins = append(origins, s.origin(h))
	}
	return s.env.Seed(seed.Options{LeadAuth: leadAuth, Origins: origins, SiteURL: s.origin(hosts[0])})
}

// page serves html at path; "{{tracker}}" in it becomes the script URL.
func (s *site) page(path, html string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path] = strings.ReplaceAll(html, "{{tracker}}", s.api+"/js/svc.js")
}

// tagged serves a page at path with the tracker tag for programID and extra attributes.
func (s *site) tagged(path string, programID int64, attrs string) {
	s.page(path, fmt.Sprintf(`<!doctype html><title>Pricing</title><h1>Brand</h1>
<script defer src="{{tracker}}" data-svc-program-id="%d" %s></script>`, programID, attrs))
}

// url is a page URL on host with the query (for example "aff=abc").
func (s *site) url(host, path, query string) string {
	u := s.origin(host) + path
	if query != "" {
		u += "?" + query
	}
	return u
}

func (s *site) count(q string, args ...any) int {
	s.t.Helper()
	return s.env.Count(q, args...)
}

func (s *site) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.env.DB.ExecContext(context.Background(), q, args...); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
}
