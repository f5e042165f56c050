// Package browsertest drives headless Chromium (Debian's, through playwright-core and the line-oriented
// bridge tracker/test/bridge.mjs) for the browser tests of the tracker and the dashboard. One browser
// serves a test binary; every tab gets a fresh browser context, so cookies never leak between tests.
package browsertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// Chrome is a running browser.
type Chrome struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *apitest.SyncBuffer

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
}

type reply struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
}

// root is the repository root (the directory holding go.mod), found from the test's directory.
func root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Start launches the browser; the error says what is missing.
func Start() (*Chrome, error) {
	dir, err := root()
	if err != nil {
		return nil, err
	}
	tracker := filepath.Join(dir, "tracker")
	if _, err := os.Stat(filepath.Join(tracker, "node_modules", "playwright-core")); err != nil {
		return nil, errors.New("playwright-core is not installed: `make test` installs it (cd tracker && npm ci)")
	}
	exe := os.Getenv("CHROMIUM")
	if exe == "" {
		exe = "/usr/bin/chromium-headless-shell"
	}
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("no Chromium at %s: apt-get install -y chromium-headless-shell (make test does)", exe)
	}
	cmd := exec.Command("node", "test/bridge.mjs")
	cmd.Dir = tracker
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &Chrome{cmd: cmd, stdin: stdin, stderr: &apitest.SyncBuffer{}, waiting: map[int]chan reply{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 64<<20) // screenshots come back as base64
	ready := make(chan error, 1)
	go func() {
		first := true
		for lines.Scan() {
			var r reply
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
	// However long Chromium takes on a loaded machine: the bridge answers ready or exits (go test's
	// -timeout ends a hang).
	if err := <-ready; err != nil {
		return nil, err
	}
	return c, nil
}

// Stop closes the browser.
func (c *Chrome) Stop() {
	c.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
	}
}

// Margins before the test's deadline: the bridge gives up on an operation bridgeMargin before it, and
// Call stops waiting for the bridge's answer callMargin before it (after the bridge's own answer, which
// says what it waited for; before go test's -timeout panic, which would not).
const (
	bridgeMargin = 30 * time.Second
	callMargin   = 15 * time.Second
)

// limits are how long the bridge may work on an operation (0: no limit) and how long Call waits for its
// answer (0: no limit). An operation waits until shortly before its test's deadline (go test -timeout),
// never a fixed time: a page that never gets where the test waits for fails the test, saying what it
// waited for, and a machine that is only slow (two cores shared with every other package's tests and
// databases) makes the test slower, not failed. The price is a failing wait's: it takes the test's time
// (under make test's default -timeout, nine and a half minutes); run one test by hand with -timeout 2m to
// have it fail in a minute and a half.
func limits(t testing.TB) (bridge, call time.Duration) {
	d, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return 0, 0
	}
	deadline, ok := d.Deadline()
	if !ok {
		return 0, 0
	}
	left := time.Until(deadline)
	return max(left-bridgeMargin, time.Second), max(left-callMargin, 2*time.Second)
}

// Call sends one operation of the bridge and decodes its result into out.
func (c *Chrome) Call(t testing.TB, op string, args map[string]any, out any) {
	t.Helper()
	bridgeLimit, callLimit := limits(t)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan reply, 1)
	c.waiting[id] = ch
	msg := map[string]any{"id": id, "op": op, "timeout": bridgeLimit.Milliseconds()}
	for k, v := range args {
		msg[k] = v
	}
	line, _ := json.Marshal(msg)
	_, err := c.stdin.Write(append(line, '\n'))
	c.mu.Unlock()
	if err != nil {
		t.Fatalf("browser %s: %v", op, err)
	}
	var expired <-chan time.Time // nil (never) without a deadline
	if callLimit > 0 {
		timer := time.NewTimer(callLimit)
		defer timer.Stop()
		expired = timer.C
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
	case <-expired:
		t.Fatalf("browser %s %v: no answer in %v, the test's time: %s", op, args, callLimit.Round(time.Second), c.stderr)
	}
}

// Suite is a test binary's browser: Run starts it around the tests, Open gives each test a tab.
type Suite struct {
	chrome *Chrome
	skip   string // why there is no browser
}

// Run starts the browser (or notes why it cannot), runs the tests and stops it; TestMain exits with
// its result.
func (s *Suite) Run(m *testing.M) int {
	c, err := Start()
	if err != nil {
		s.skip = err.Error()
	} else {
		s.chrome = c
	}
	code := m.Run()
	if c != nil {
		c.Stop()
	}
	return code
}

// Open opens a tab for the test. Without a browser the test is skipped, or fails when
// REFTRACK_REQUIRE_TOOLS is set (make test).
func (s *Suite) Open(t testing.TB) *Tab {
	t.Helper()
	if s.chrome == nil {
		tools.Missing(t, "no browser: "+s.skip)
	}
	return s.chrome.Open(t)
}

// Tab is one page in its own browser context.
type Tab struct {
	T  testing.TB
	ID int
	c  *Chrome
}

// Open opens a tab in a fresh context (self-signed certificates accepted), closed when the test ends.
func (c *Chrome) Open(t testing.TB) *Tab {
	t.Helper()
	var id int
	c.Call(t, "open", map[string]any{"ignoreHTTPSErrors": true}, &id)
	t.Cleanup(func() { c.Call(t, "close", map[string]any{"page": id}, nil) })
	return &Tab{T: t, ID: id, c: c}
}

// Do runs a bridge operation on this tab.
func (tb *Tab) Do(op string, args map[string]any, out any) {
	tb.T.Helper()
	a := map[string]any{"page": tb.ID}
	for k, v := range args {
		a[k] = v
	}
	tb.c.Call(tb.T, op, a, out)
}

// Goto loads url and returns the final response's status.
func (tb *Tab) Goto(url string) int {
	tb.T.Helper()
	var status int
	tb.Do("goto", map[string]any{"url": url}, &status)
	return status
}

// Reload loads the page's address again, as the reload button does, and returns the response's status.
func (tb *Tab) Reload() int {
	tb.T.Helper()
	var status int
	tb.Do("reload", nil, &status)
	return status
}

// Eval evaluates a JavaScript expression (a promise is awaited) and decodes its value into out.
func (tb *Tab) Eval(expr string, out any) {
	tb.T.Helper()
	tb.Do("eval", map[string]any{"expr": expr}, out)
}

// WaitFor waits until the JavaScript expression is truthy in the page (until shortly before the test's
// deadline: see limits).
func (tb *Tab) WaitFor(expr string) {
	tb.T.Helper()
	tb.Do("waitFor", map[string]any{"expr": expr}, nil)
}

// WaitForConsole waits until the page has logged a message containing every one of parts (until shortly
// before the test's deadline).
func (tb *Tab) WaitForConsole(parts ...string) {
	tb.T.Helper()
	tb.Do("waitForConsole", map[string]any{"parts": parts}, nil)
}

// Click clicks the element selector matches; a confirm() it opens is accepted.
func (tb *Tab) Click(selector string) {
	tb.T.Helper()
	tb.Do("click", map[string]any{"selector": selector}, nil)
}

// Fill types value into the input selector matches.
func (tb *Tab) Fill(selector, value string) {
	tb.T.Helper()
	tb.Do("fill", map[string]any{"selector": selector, "value": value}, nil)
}

// Press presses a key ("Tab", "Enter", "Shift+Tab") where the focus is.
func (tb *Tab) Press(key string) {
	tb.T.Helper()
	tb.Do("press", map[string]any{"key": key}, nil)
}

// Select picks the option with value in the select element selector matches.
func (tb *Tab) Select(selector, value string) {
	tb.T.Helper()
	tb.Do("select", map[string]any{"selector": selector, "value": value}, nil)
}

// Screenshot is a PNG of the element selector matches ("" for the whole page).
func (tb *Tab) Screenshot(selector string) []byte {
	tb.T.Helper()
	var png []byte // the bridge answers base64, which encoding/json decodes into bytes
	tb.Do("screenshot", map[string]any{"selector": selector}, &png)
	return png
}

// Download is a file the page downloaded.
type Download struct {
	Name string `json:"name"` // the suggested file name
	URL  string `json:"url"`
	Body []byte `json:"body"` // the bridge answers base64, which encoding/json decodes into bytes
}

// Download clicks the element selector matches (a link to a file) and returns the file the browser
// downloads, as it saved it.
func (tb *Tab) Download(selector string) Download {
	tb.T.Helper()
	var d Download
	tb.Do("download", map[string]any{"selector": selector}, &d)
	return d
}

// Viewport sets the tab's window size in CSS pixels.
func (tb *Tab) Viewport(width, height int) {
	tb.T.Helper()
	tb.Do("viewport", map[string]any{"width": width, "height": height}, nil)
}

// Cookie is a browser cookie.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite"`
}

// Cookies are the tab's context's cookies.
func (tb *Tab) Cookies() []Cookie {
	tb.T.Helper()
	var cs []Cookie
	tb.Do("cookies", nil, &cs)
	return cs
}

// Record is what a page logged, threw and requested.
type Record struct {
	Console []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"console"`
	Errors   []string `json:"errors"`
	Requests []struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"requests"`
	Dialogs []string `json:"dialogs"`
}

// Record is what the page logged, threw, requested and asked (dialogs) so far.
func (tb *Tab) Record() Record {
	tb.T.Helper()
	var r Record
	tb.Do("record", nil, &r)
	return r
}

// AxeChecks are the axe-core rules the accessibility checks (Accessible) run: every rule of WCAG 2.0,
// 2.1 and 2.2 at levels A and AA, and those of axe's best practices that can find something serious
// (axe-core 4.14's rules with impact serious or critical; frame-tested, about iframes, aside: the pages
// have none). The other best practices (landmarks, headings, regions) can find nothing worse than
// moderate, which fails no check, and would make each run a third longer; with them added, every view
// checked here passed them all on 2026-11-27.
var AxeChecks = AxeOptions{
	Tags:  []string{"wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"},
	Rules: []string{"accesskeys", "aria-dialog-name", "aria-text", "aria-treeitem-name", "label-title-only", "tabindex"},
}

// AxeOptions say what axe-core runs, and on what.
type AxeOptions struct {
	Tags  []string // the rules tagged so (wcag2a, best-practice, …)
	Rules []string // and these rules, by id, whatever their tags
	// Within are selectors: only the elements they match (and what those hold) are checked, and rules
	// about the page as a whole are not run. None: the whole page.
	Within []string
}

// Violation is an axe-core rule the page fails, and where.
type Violation struct {
	ID      string `json:"id"`     // the rule, e.g. "color-contrast"
	Impact  string `json:"impact"` // minor, moderate, serious or critical
	Help    string `json:"help"`
	HelpURL string `json:"helpUrl"`
	Nodes   []struct {
		Target  []string `json:"target"` // CSS selectors of the failing element
		HTML    string   `json:"html"`
		Summary string   `json:"summary"` // what to fix
	} `json:"nodes"`
}

// Axe runs axe-core (pinned in tracker/package.json) on the page as it is now, as o says, and returns
// the rules the page fails.
func (tb *Tab) Axe(o AxeOptions) []Violation {
	tb.T.Helper()
	var vs []Violation
	tb.Do("axe", map[string]any{"tags": o.Tags, "rules": o.Rules, "within": o.Within}, &vs)
	return vs
}

// Accessible runs AxeChecks on the page as it is now (view names it in the messages), or only on the
// elements the selectors of within match: a view of a page whose rest another test checks need not have
// that rest checked again (the rules cost CPU for every element they look at). It fails the test,
// without stopping it, for each serious or critical violation: the rule, what it asks, and every failing
// element's selector, HTML and what to fix.
func (tb *Tab) Accessible(view string, within ...string) {
	tb.T.Helper()
	start := time.Now()
	o := AxeChecks
	o.Within = within
	vs := tb.Axe(o)
	failed := make([]string, len(vs))
	for i, v := range vs {
		failed[i] = v.ID + " (" + v.Impact + ")"
	}
	tb.T.Logf("axe on %s, in %v: %d rules failed %v", view, time.Since(start).Round(time.Millisecond), len(vs), failed)
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "accessibility (%s): %s %s: %s (%s)", view, v.Impact, v.ID, v.Help, v.HelpURL)
		for _, n := range v.Nodes {
			html := n.HTML
			if len(html) > 200 {
				html = html[:200] + "…"
			}
			fmt.Fprintf(&b, "\n\t%s: %s\n\t\t%s", strings.Join(n.Target, " "), html, strings.ReplaceAll(n.Summary, "\n", "\n\t\t"))
		}
		tb.T.Error(b.String())
	}
}
