package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// cli runs reftrack commands in process against a real server, as a user would from a shell.
type cli struct {
	t    *testing.T
	env  *apitest.Env
	dir  string
	sent *sentLog
}

func newCLI(t *testing.T) *cli {
	env := apitest.New(t)
	return &cli{t: t, env: env, dir: t.TempDir(), sent: &sentLog{base: env.Client.Transport}}
}

func (c *cli) app(stdin io.Reader, out, errOut io.Writer) *app {
	a := newApp(stdin, out, errOut)
	a.openBrowser = func(string) error { return errors.New("no browser in tests") }
	a.pollInterval = 10 * time.Millisecond
	hc := *c.env.Client // every answer checked against the spec
	hc.Transport = c.sent
	a.httpClient = &hc
	return a
}

// sentLog records each request the CLI sends ("POST /api/v1/cli/init") and its Idempotency-Key, to show
// that what it refuses never leaves and what it sends carries.
type sentLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []string
	keys []string // each request's Idempotency-Key header ("" for none)
}

func (l *sentLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
	l.keys = append(l.keys, r.Header.Get("Idempotency-Key"))
	l.mu.Unlock()
	return l.base.RoundTrip(r)
}

// total is how many requests were sent.
func (l *sentLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reqs)
}

// lastKey is the Idempotency-Key of the last request sent that was req, and whether there was one.
func (l *sentLog) lastKey(req string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.reqs) - 1; i >= 0; i-- {
		if l.reqs[i] == req {
			return l.keys[i], true
		}
	}
	return "", false
}

// count is how many of the requests sent were req.
func (l *sentLog) count(req string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.reqs {
		if r == req {
			n++
		}
	}
	return n
}

// token is the stored login token.
func (c *cli) token() string {
	c.t.Helper()
	var stored struct {
		Token string `json:"token"`
	}
	raw, err := os.ReadFile(filepath.Join(c.dir, "credentials.json"))
	if err != nil || json.Unmarshal(raw, &stored) != nil || stored.Token == "" {
		c.t.Fatalf("stored token: %v %s", err, raw)
	}
	return stored.Token
}

// run runs one command and returns its standard output, standard error and error.
func (c *cli) run(args ...string) (string, string, error) {
	c.t.Helper()
	var out, errOut bytes.Buffer
	a := c.app(strings.NewReader(""), &out, &errOut)
	cmd := a.root()
	cmd.SetArgs(append([]string{"--server", c.env.URL, "--config-dir", c.dir}, args...))
	err := cmd.ExecuteContext(context.Background())
	if err != nil {
		var ue *userError
		if errors.As(err, &ue) {
			errOut.WriteString(ue.Render())
		}
	}
	return out.String(), errOut.String(), err
}

// must runs a command that must succeed.
func (c *cli) must(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("reftrack %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// login runs `reftrack login` and signs in through the development issuer's page as a browser would.
func (c *cli) login(email string) string {
	c.t.Helper()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	a := c.app(strings.NewReader(""), &out, pw)
	cmd := a.root()
	cmd.SetArgs([]string{"--server", c.env.URL, "--config-dir", c.dir, "login"})
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(context.Background())
		pw.Close()
	}()
	link := make(chan string, 1)
	var stderr strings.Builder
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "http") {
				link <- u
			}
		}
	}()
	var authURL string
	select {
	case authURL = <-link:
	case err := <-done:
		c.t.Fatalf("login ended before printing a link: %v", err)
	}
	u, err := url.Parse(authURL)
	if err != nil {
		c.t.Fatal(err)
	}
	// The browser: open the page, fill in the form.
	res, err := c.env.Client.Get(authURL)
	if err != nil || res.StatusCode != http.StatusOK {
		c.t.Fatalf("login page: %v %v", err, res)
	}
	res.Body.Close()
	res, err = c.env.Client.PostForm(c.env.URL+"/login", url.Values{"state": {u.Query().Get("state")}, "email": {email}, "name": {"CLI user"}})
	if err != nil || res.StatusCode != http.StatusOK {
		c.t.Fatalf("login form: %v %v", err, res)
	}
	res.Body.Close()
	if err := <-done; err != nil {
		c.t.Fatalf("login: %v\n%s", err, stderr.String())
	}
	return out.String()
}

// docs/cli.md's flow: login, init, test --chain, status; then programs and keys.
func TestCLIFlow(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	out := c.login("dev@brand.example")
	if !strings.Contains(out, "Logged in as dev@brand.example") || !strings.Contains(out, "Next: `reftrack init`") {
		t.Errorf("login printed %q", out)
	}
	st, err := os.Stat(filepath.Join(c.dir, "credentials.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", st, err)
	}

	out = c.must("init", "--name", "Acme Pro", "--domain", "acme.example.com", "--commission-type", "percent", "--commission-rate", "30")
	m := regexp.MustCompile(`Created program (\d+) .*\nAPI key \(shown once, kept in .*\): (rt_\w+)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, `data-svc-program-id="`+m[1]+`"`) {
		t.Fatalf("init printed %q", out)
	}
	programID, key := m[1], m[2]
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND name = 'Acme Pro' AND commission_rate = 30`, programID); n != 1 {
		t.Error("program not created")
	}

	out = c.must("test", "--chain")
	for _, want := range []string{"click  attributed", "lead   attributed", "sale   attributed", "Verdict: attributed",
		"See it in the dashboard: " + c.env.URL + "/dashboard (tick Test data)."} {
		if !strings.Contains(out, want) {
			t.Errorf("test --chain printed %q, missing %q", out, want)
		}
	}
	out = c.must("test", "sale")
	if !strings.Contains(out, "Test sale recorded") {
		t.Errorf("test sale printed %q", out)
	}
	out = c.must("status")
	if !strings.Contains(out, "Program "+programID+": Acme Pro (acme.example.com)") || !strings.Contains(out, "0 clicks, 0 leads, 0 sales") {
		t.Errorf("status printed %q (test events must not count)", out)
	}
	if !regexp.MustCompile(`add a DNS TXT record _reftrack\.acme\.example\.com with the value reftrack-verification=[0-9a-f]{32}\n`).MatchString(out) {
		t.Errorf("status printed %q: no DNS record to add", out)
	}

	var progs struct {
		Data []struct {
			ID         int64  `json:"id"`
			Commission string `json:"commission"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(c.must("programs", "--json")), &progs); err != nil || len(progs.Data) != 1 || progs.Data[0].Commission != "30%" {
		t.Errorf("programs --json: %+v %v", progs, err)
	}
	if out := c.must("programs"); !strings.Contains(out, "Acme Pro") || !strings.Contains(out, "*") {
		t.Errorf("programs printed %q", out)
	}

	if out := c.must("keys"); !strings.Contains(out, "rt_…"+key[len(key)-4:]) {
		t.Errorf("keys printed %q", out)
	}
	out = c.must("keys", "regenerate", "--yes")
	newKey := regexp.MustCompile(`rt_\w+`).FindString(out)
	if newKey == "" || newKey == key {
		t.Fatalf("regenerate printed %q", out)
	}
	if _, errOut, err := c.run("status", "--api-key", key); err == nil ||
		!strings.Contains(errOut, "Error: Invalid API token.") || !strings.Contains(errOut, "Next: the program's API key is not valid") {
		t.Errorf("old key: %v %q", err, errOut)
	}
	c.must("status") // the stored key is the new one

	var stored struct {
		Token string `json:"token"`
	}
	raw, err := os.ReadFile(filepath.Join(c.dir, "credentials.json"))
	if err != nil || json.Unmarshal(raw, &stored) != nil || stored.Token == "" {
		t.Fatalf("stored token: %v %s", err, raw)
	}
	if out := c.must("logout"); !strings.Contains(out, "Logged out: the login token is revoked on the server and forgotten here.") {
		t.Errorf("logout printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "credentials.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("credentials left after logout: %v", err)
	}
	// The token no longer works anywhere, not only here.
	if res := c.env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(stored.Token)...); res.Status != http.StatusUnauthorized {
		t.Errorf("the logged-out token still answers %d", res.Status)
	}
	if out := c.must("logout"); !strings.Contains(out, "Logged out.") { // nothing stored: nothing to revoke
		t.Errorf("second logout printed %q", out)
	}
}

// Every documented failure tells the user the next step.
func TestCLIErrorsSayWhatToDo(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"programs"}, "Error: you are not logged in\nNext: run `reftrack login`."},
		{[]string{"status"}, "Error: no API key for a program"},
		{[]string{"test"}, "Error: no API key for a program"},
	} {
		if _, errOut, err := c.run(tc.args...); err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: %v %q", tc.args, err, errOut)
		}
	}

	c.login("err@brand.example")
	// A token the server no longer accepts: 401 → log in again.
	b, _ := os.ReadFile(filepath.Join(c.dir, "credentials.json"))
	tampered := regexp.MustCompile(`"token": "rtu_\w+"`).ReplaceAll(b, []byte(`"token": "rtu_revoked"`))
	if err := os.WriteFile(filepath.Join(c.dir, "credentials.json"), tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := c.run("programs")
	if err == nil || !strings.Contains(errOut, "Error: Invalid or expired token. Run the login command to refresh.") || !strings.Contains(errOut, "Next: run `reftrack login`.") {
		t.Errorf("revoked token: %v %q", err, errOut)
	}
	c.login("err@brand.example")

	_, errOut, err = c.run("init", "--name", "X", "--domain", "x.example", "--commission-type", "bounty", "--commission-rate", "5")
	if err == nil || !strings.Contains(errOut, "Error: Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed") {
		t.Errorf("bad type: %v %q", err, errOut)
	}
	if _, errOut, err := c.run("init", "--name", "X"); err == nil || !strings.Contains(errOut, "Next: pass --name, --domain") {
		t.Errorf("missing flags: %v %q", err, errOut)
	}

	// A program key from another brand's program: keys are per program.
	other := c.env.Seed(seed.Options{})
	if out := c.must("status", "--api-key", other.APIKey, "--json"); !strings.Contains(out, `"program_id": `) {
		t.Errorf("status --json printed %q", out)
	}
	if _, errOut, err := c.run("test", "refund", "--api-key", other.APIKey); err == nil || !strings.Contains(errOut, "Invalid event_type: refund") {
		t.Errorf("bad event: %v %q", err, errOut)
	}
	// The chain cap: the 11th chain in an hour waits.
	for i := 0; i < 10; i++ {
		c.must("test", "--chain", "--api-key", other.APIKey)
	}
	if _, errOut, err := c.run("test", "--chain", "--api-key", other.APIKey); err == nil ||
		!strings.Contains(errOut, "Error: Too many synthetic chains (max 10/program/hour).") || !regexp.MustCompile(`Next: wait \d+ seconds`).MatchString(errOut) {
		t.Errorf("capped chain: %v %q", err, errOut)
	}
}

// Interactive init asks for what the flags did not give.
func TestCLIInitPrompts(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("prompt@brand.example")
	var out, errOut bytes.Buffer
	a := c.app(strings.NewReader("Prompted\nprompted.example\n\n12.5\n"), &out, &errOut)
	a.interactive = true
	cmd := a.root()
	cmd.SetArgs([]string{"--server", c.env.URL, "--config-dir", c.dir, "init"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("init: %v %s", err, errOut.String())
	}
	if !strings.Contains(errOut.String(), "Commission type (percent, fixed, recurring_percent, recurring_fixed) [percent]: ") {
		t.Errorf("prompts = %q", errOut.String())
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE name = 'Prompted' AND domain = 'prompted.example' AND commission_type = 'percent' AND commission_rate = 12.5`); n != 1 {
		t.Errorf("program not created from the answers: %s", out.String())
	}
}

// The first hour after `make run`: a program made elsewhere (its key printed there) is selected with
// `use` and its key stored with --key; without a stored key the CLI points at `use`, not at
// regenerating; a key of another program is refused; regenerating asks first.
func TestCLIUseAProgramMadeElsewhere(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	made := c.env.Seed(seed.Options{Email: "owner@brand.example"}) // as `make run` seeds it
	other := c.env.Seed(seed.Options{})
	c.login("owner@brand.example")
	id := strconv.FormatInt(made.ProgramID, 10)

	if out := c.must("use", id); !strings.Contains(out, "Current program: "+id) || !strings.Contains(out, "reftrack use "+id+" --key KEY") {
		t.Errorf("use without a key printed %q", out)
	}
	if _, errOut, err := c.run("status"); err == nil || !strings.Contains(errOut, "run `reftrack use ID --key KEY`") {
		t.Errorf("status without a key: %v %q", err, errOut)
	}
	if _, errOut, err := c.run("use", id, "--key", other.APIKey); err == nil || !strings.Contains(errOut, "that key is program "+strconv.FormatInt(other.ProgramID, 10)+"'s") {
		t.Errorf("another program's key: %v %q", err, errOut)
	}
	if _, errOut, err := c.run("use", strconv.FormatInt(other.ProgramID, 10)); err == nil || !strings.Contains(errOut, "is not one of your programs") {
		t.Errorf("someone else's program: %v %q", err, errOut)
	}
	if out := c.must("use", id, "--key", made.APIKey); !strings.Contains(out, "Its API key is stored") {
		t.Errorf("use --key printed %q", out)
	}
	if out := c.must("status"); !strings.Contains(out, "Program "+id+":") {
		t.Errorf("status with the stored key printed %q", out)
	}
	// Not on a terminal and without --yes, regenerating is refused and the key keeps working.
	if _, errOut, err := c.run("keys", "regenerate"); err == nil || !strings.Contains(errOut, "run it again with --yes to confirm") {
		t.Errorf("regenerate without --yes: %v %q", err, errOut)
	}
	if res := c.env.Do(http.MethodGet, "/api/v1/cli/status", nil, apitest.Bearer(made.APIKey)...); res.Status != http.StatusOK {
		t.Errorf("the key after a refused regeneration: %d", res.Status)
	}
}
