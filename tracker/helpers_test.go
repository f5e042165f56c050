package tracker_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/apitest"
	"github.com/reftrack/reftrack/pkg/seed"
)

// chrome is headless Chromium, driven through tracker/test/bridge.mjs (playwright-core). One browser
// serves the whole test binary; every page gets a fresh context, so cookies never leak between tests.
type chrome struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *apitest.SyncBuffer

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan bridgeReply
}

type bridgeReply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Ready  bool            `json:"ready"`
}

var (
	browser     *chrome
	browserSkip string // why there is no browser
)

func TestMain(m *testing.M) {
	b, err := startChrome()
	if err != nil {
		browserSkip = err.Error()
	} else {
		browser = b
	}
	code := m.Run()
	if browser != nil {
		browser.stop()
	}
	os.Exit(code)
}

func startChrome() (*chrome, error) {
	if _, err := os.Stat("node_modules/playwright-core"); err != nil {
		return nil, errors.New("playwright-core is not installed: `make test` installs it (cd tracker && npm ci)")
	}
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("no Chromium at %s: apt-get install -y chromium (.ci/run does)", exe)
	}
	cmd := exec.Command("node", "test/bridge.mjs")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &chrome{cmd: cmd, stdin: stdin, stderr: &apitest.SyncBuffer{}, waiting: map[int]chan bridgeReply{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 16<<20)
	ready := make(chan error, 1)
	go func() {
		first := true
		for lines.Scan() {
			var r bridgeReply
			if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
				continue
			}
			if first {
				first = false
				ready <- nil
				continue
			}
			c.mu.Lock()
			ch := c.waiting[r.ID]
			delete(c.waiting, r.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		}
		if first {
			ready <- fmt.Errorf("the browser bridge exited: %s", c.stderr)
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("Chromium did not start within a minute: %s", c.stderr)
	}
	return c, nil
}

func (c *chrome) stop() {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
	}
}

// call sends one operation and decodes its result into out.
func (c *chrome) call(t *testing.T, op string, args map[string]any, out any) {
	t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan bridgeReply, 1)
	c.waiting[id] = ch
	msg := map[string]any{"id": id, "op": op}
	for k, v := range args {
		msg[k] = v
	}
	line, _ := json.Marshal(msg)
	_, err := c.stdin.Write(append(line, '\n'))
	c.mu.Unlock()
	if err != nil {
		t.Fatalf("browser %s: %v", op, err)
	}
	select {
	case r := <-ch:
		if r.Error != "" {
			t.Fatalf("browser %s: %s", op, r.Error)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				t.Fatalf("browser %s: decode %s: %v", op, r.Result, err)
			}
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("browser %s: no answer within a minute", op)
	}
}

// tab is one page in its own browser context.
type tab struct {
	t  *testing.T
	id int
}

func openTab(t *testing.T) *tab {
	t.Helper()
	if browser == nil {
		if os.Getenv("REFTRACK_REQUIRE_TOOLS") != "" {
			t.Fatalf("no browser: %s", browserSkip)
		}
		t.Skip("no browser: " + browserSkip)
	}
	var id int
	// The HTTPS brand sites have self-signed certificates.
	browser.call(t, "open", map[string]any{"ignoreHTTPSErrors": true}, &id)
	tb := &tab{t: t, id: id}
	t.Cleanup(func() { browser.call(t, "close", map[string]any{"page": id}, nil) })
	return tb
}

// visit loads url and waits until the tracker has finished what the page load started.
func (tb *tab) visit(url string) {
	tb.t.Helper()
	var status int
	browser.call(tb.t, "goto", map[string]any{"page": tb.id, "url": url}, &status)
	if status != http.StatusOK {
		tb.t.Fatalf("GET %s: %d", url, status)
	}
	tb.eval("window.svc ? window.svc.ready() : null", nil)
}

// eval evaluates a JavaScript expression (a promise is awaited) and decodes its value into out.
func (tb *tab) eval(expr string, out any) {
	tb.t.Helper()
	browser.call(tb.t, "eval", map[string]any{"page": tb.id, "expr": expr}, out)
}

type cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite"`
}

func (tb *tab) cookies() []cookie {
	tb.t.Helper()
	var cs []cookie
	browser.call(tb.t, "cookies", map[string]any{"page": tb.id}, &cs)
	return cs
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

type pageRecord struct {
	Console []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"console"`
	Errors   []string `json:"errors"`
	Requests []struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"requests"`
}

// record is what the page logged, threw and requested so far.
func (tb *tab) record() pageRecord {
	tb.t.Helper()
	var r pageRecord
	browser.call(tb.t, "record", map[string]any{"page": tb.id}, &r)
	return r
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
