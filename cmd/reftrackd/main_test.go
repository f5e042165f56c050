package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/audit"
	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/secret"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// runCmd runs reftrackd with args and environment vars, and returns stdout, stderr and the error.
func runCmd(t *testing.T, vars map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut, func(k string) string { return vars[k] })
	return out.String(), errOut.String(), err
}

func TestSeedJSON(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	out, _, err := runCmd(t, map[string]string{"DATABASE_URL": d.URL},
		"seed", "--json", "--lead-auth", "browser_allowed", "--origin", "http://localhost:8080", "--origin", "https://www.shop.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "account_email account_token advertiser_id affiliate_url api_key link_id partner_id program_id short_link"
	if strings.Join(keys, " ") != want {
		t.Errorf("keys = %v, want %s", keys, want)
	}
	apiKey, _ := got["api_key"].(string)
	var program struct {
		ID       int64  `db:"program_id"`
		LeadAuth string `db:"lead_auth"`
		Origins  string `db:"origins"`
	}
	if err := d.Get(&program, `SELECT k.program_id, p.lead_auth, array_to_string(p.allowed_origins, ' ') AS origins
		FROM api_keys k JOIN programs p ON p.id = k.program_id WHERE k.key_hash = $1`, secret.Hash(apiKey)); err != nil {
		t.Fatalf("the printed key is not stored (hashed): %v", err)
	}
	if float64(program.ID) != got["program_id"] || program.LeadAuth != "browser_allowed" ||
		program.Origins != "http://localhost:8080 https://www.shop.example.com" {
		t.Errorf("program = %+v, output %v", program, got)
	}
}

func TestSeedRefusesBadLeadAuth(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if _, _, err := runCmd(t, map[string]string{"DATABASE_URL": d.URL}, "seed", "--json", "--lead-auth", "sometimes"); err == nil ||
		!strings.Contains(err.Error(), "server_required or browser_allowed") {
		t.Errorf("err = %v", err)
	}
}

func TestMigrateCommands(t *testing.T) {
	t.Parallel()
	d := dbtest.Empty(t)
	vars := map[string]string{"DATABASE_URL": d.URL}
	steps := []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"migrate", "version"}, regexp.MustCompile(`^schema version 0 \(this build expects \d+; behind`)},
		{[]string{"migrate", "up"}, regexp.MustCompile(`^schema version (\d+) \(this build expects \d+; current\)`)},
		{[]string{"migrate", "down", "all"}, regexp.MustCompile(`^schema version 0 \(`)},
		{[]string{"migrate", "up"}, regexp.MustCompile(`; current\)`)},
		{[]string{"migrate", "down"}, regexp.MustCompile(`behind`)},
	}
	for _, s := range steps {
		out, _, err := runCmd(t, vars, s.args...)
		if err != nil {
			t.Fatalf("%v: %v", s.args, err)
		}
		if !s.want.MatchString(out) {
			t.Errorf("%v printed %q, want %s", s.args, out, s.want)
		}
	}
	if _, _, err := runCmd(t, vars, "migrate", "down", "-1"); err == nil {
		t.Error("migrate down -1 accepted")
	}
	// MIGRATE_DATABASE_URL (the direct connection) wins over DATABASE_URL (here one that cannot work).
	direct := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/nowhere?sslmode=disable&connect_timeout=1", "MIGRATE_DATABASE_URL": d.URL}
	if out, _, err := runCmd(t, direct, "migrate", "up"); err != nil || !strings.Contains(out, "; current)") {
		t.Errorf("migrate up on MIGRATE_DATABASE_URL: %q, %v", out, err)
	}
}

func TestServeRefusesAnOutdatedSchema(t *testing.T) {
	t.Parallel()
	d := dbtest.Empty(t)
	_, _, err := runCmd(t, map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0"}, "serve")
	if err == nil || !strings.Contains(err.Error(), "reftrackd migrate up") {
		t.Errorf("err = %v, want a hint to migrate", err)
	}
}

func TestBadConfigurationIsRefused(t *testing.T) {
	t.Parallel()
	_, _, err := runCmd(t, map[string]string{"REFTRACK_ENV": "staging"}, "serve")
	if err == nil || !strings.Contains(err.Error(), "REFTRACK_ENV") {
		t.Errorf("err = %v", err)
	}
}

// startServer runs args in the background until the test ends; it returns the listen address and the
// command's stdout.
func startServer(t *testing.T, vars map[string]string, args ...string) (addr string, stdout *bytes.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan string, 1)
	done := make(chan error, 1)
	stdout = &bytes.Buffer{}
	e := &env{stdout: stdout, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		onListen: func(a string) { listening <- a }, drainWait: func(time.Duration) {}}
	go func() { done <- runEnv(ctx, args, e) }()
	select {
	case addr = <-listening:
	case err := <-done:
		cancel()
		t.Fatalf("%v exited: %v", args, err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("%v did not start listening", args)
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return addr, stdout, stop
}

func getOK(t *testing.T, url string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
}

// waitReady waits for url (a /readyz) to answer 200. The probe gives its database checks two seconds, and
// a new connection on a 2-core VM loaded by the rest of `make test` has taken longer: a probe's 503 then is
// the answer a load balancer retries, so the test asks again (for up to a minute) and fails with the last
// answer.
func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return
		}
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
		}
		t.Logf("GET %s: %d %s; asking again", url, res.StatusCode, body)
		time.Sleep(100 * time.Millisecond)
	}
}

func TestServeAndShutDown(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	addr, _, stop := startServer(t, map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0"})
	getOK(t, "http://"+addr+"/healthz")
	waitReady(t, "http://"+addr+"/readyz")
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("still serving after shutdown")
	}
}

// On SIGTERM the server drains: /livez turns 503 at once while every route still answers (on connections
// that close after their answer) for the drain delay; then it stops taking connections and exits.
func TestDrainBeforeShutdown(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening, done := make(chan string, 1), make(chan error, 1)
	delays, release := make(chan time.Duration, 1), make(chan struct{})
	vars := map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0", "DRAIN_DELAY": "7s"}
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		onListen: func(a string) { listening <- a }, drainWait: func(d time.Duration) { delays <- d; <-release }}
	go func() { done <- runEnv(ctx, []string{"serve"}, e) }()
	var base string
	select {
	case a := <-listening:
		base = "http://" + a
	case err := <-done:
		t.Fatalf("serve exited: %v", err)
	}
	// closes reports whether the server closes the connection after the answer (Connection: close).
	get := func(path string) (status int, body string, closes bool) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(b)), res.Close
	}
	if status, body, closes := get("/livez"); status != http.StatusOK || body != `{"status":"ok"}` || closes {
		t.Fatalf("livez before the drain: %d %s", status, body)
	}

	cancel() // what SIGTERM does (signal.NotifyContext in main)
	if got := <-delays; got != 7*time.Second {
		t.Errorf("drained for %s, want DRAIN_DELAY's 7s", got)
	}
	if status, body, closes := get("/livez"); status != http.StatusServiceUnavailable || body != `{"status":"draining"}` || !closes {
		t.Errorf("livez while draining: %d %s, connection closed %v", status, body, closes)
	}
	if status, _, closes := get("/readyz"); status != http.StatusOK || !closes {
		t.Errorf("readyz while draining: %d, connection closed %v", status, closes)
	}

	close(release)
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := http.Get(base + "/livez"); err == nil {
		t.Error("still serving after the drain")
	}
}

// A second replica on the same database without REDIS_URL warns at start that rate limits are per replica.
func TestWarnsThatLimitsArePerReplica(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0"}
	startServer(t, vars)
	var logs apitest.SyncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	listening, done := make(chan string, 1), make(chan error, 1)
	e := &env{stdout: io.Discard, stderr: &logs, getenv: func(k string) string { return vars[k] },
		onListen: func(a string) { listening <- a }, drainWait: func(time.Duration) {}}
	go func() { done <- runEnv(ctx, []string{"serve"}, e) }()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("serve exited: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, "rate limits are per replica") || !strings.Contains(out, `"replicas":2`) {
		t.Errorf("no warning in the second replica's log:\n%s", out)
	}
}

// With CLICK_RETENTION_MONTHS the server drops the expired months in the background once it started
// (and makes the months ahead before it listens).
func TestServerDropsExpiredMonths(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if _, err := d.Exec(`SELECT clicks_prepare('2020-01-01', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`DROP TABLE clicks_` + time.Now().UTC().AddDate(0, 3, 0).Format("2006_01")); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0", "CLICK_RETENTION_MONTHS": "12"}
	ctx, cancel := context.WithCancel(context.Background())
	listening, done, passed := make(chan string, 1), make(chan error, 1), make(chan struct{}, 1)
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		onListen: func(a string) { listening <- a }, drainWait: func(time.Duration) {},
		onHistoryPass: func() {
			select {
			case passed <- struct{}{}:
			default:
			}
		}}
	go func() { done <- runEnv(ctx, []string{"serve"}, e) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-listening:
	case err := <-done:
		t.Fatalf("serve exited: %v", err)
	}
	var ahead int
	if err := d.Get(&ahead, `SELECT count(*) FROM pg_class WHERE relname = 'clicks_' || to_char(now() AT TIME ZONE 'UTC' + interval '3 months', 'YYYY_MM')`); err != nil || ahead != 1 {
		t.Errorf("the month three ahead was not made before listening (%d, %v)", ahead, err)
	}
	<-passed // the first background pass, run at once
	var left int
	if err := d.Get(&left, `SELECT count(*) FROM pg_class WHERE relname = 'clicks_2020_01'`); err != nil || left != 0 {
		t.Errorf("clicks_2020_01 still there after the first pass (%d, %v)", left, err)
	}
}

// PPROF_ADDR serves the profiler on its own address, never on the API's; without it nothing listens.
func TestProfilerOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	profiler := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	listening, done := make(chan string, 1), make(chan error, 1)
	vars := map[string]string{"DATABASE_URL": d.URL, "LISTEN_ADDR": "127.0.0.1:0", "PPROF_ADDR": "127.0.0.1:0"}
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] },
		onListen: func(a string) { listening <- a }, onPprof: func(a string) { profiler <- a }, drainWait: func(time.Duration) {}}
	go func() { done <- runEnv(ctx, []string{"serve"}, e) }()
	var api string
	select {
	case api = <-listening:
	case err := <-done:
		cancel()
		t.Fatalf("serve exited: %v", err)
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	getOK(t, "http://"+<-profiler+"/debug/pprof/goroutine?debug=1")
	res, err := http.Get("http://" + api + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the API's address answers /debug/pprof/ with %d, want 404", res.StatusCode)
	}
}

// `make run` on a server without the database: dev creates it, migrates, seeds the demo once, serves.
func TestDevCreatesMigratesSeedsOnce(t *testing.T) {
	t.Parallel()
	name := "reftrack_test_dev_" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	dbtest.Drop(t, name)
	t.Cleanup(func() { dbtest.Drop(t, name) })
	dsn, err := dbtest.WithDatabase(dbtest.AdminURL(), name)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	vars := map[string]string{
		"DATABASE_URL": dsn, "LISTEN_ADDR": "127.0.0.1:0", "BASE_URL": "http://localhost:8080",
		"REFTRACK_DATA_DIR": dataDir,
	}

	addr, out, stop := startServer(t, vars, "dev")
	waitReady(t, "http://"+addr+"/readyz")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	first := out.String()
	key := regexp.MustCompile(`API key\s+(rt_\w+)`).FindStringSubmatch(first)
	ref := regexp.MustCompile(`referral URL\s+(http://localhost:8080/\?aff=\w+)`).FindStringSubmatch(first)
	if !strings.Contains(first, "Created the demo program") || key == nil || ref == nil ||
		!strings.Contains(first, "dashboard      http://localhost:8080/dashboard (sign in as demo@reftrack.test)") ||
		!strings.Contains(first, "partner portal http://localhost:8080/partners (sign in as partner+demo@reftrack.test)") {
		t.Fatalf("first start printed:\n%s", first)
	}
	creds, err := os.ReadFile(filepath.Join(dataDir, "demo.json"))
	if err != nil || !strings.Contains(string(creds), key[1]) {
		t.Fatalf("demo.json = %s, %v", creds, err)
	}
	if st, _ := os.Stat(filepath.Join(dataDir, "demo.json")); st.Mode().Perm() != 0o600 {
		t.Errorf("demo.json mode = %v, want 0600", st.Mode().Perm())
	}

	addr, out, stop = startServer(t, vars, "dev")
	getOK(t, "http://"+addr+"/healthz")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	second := out.String()
	if strings.Contains(second, "Created the demo program") || !strings.Contains(second, key[1]) {
		t.Errorf("second start printed:\n%s", second)
	}
	pool, err := sqlx.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var programs int
	if err := pool.Get(&programs, `SELECT count(*) FROM programs`); err != nil || programs != 1 {
		t.Errorf("programs after two starts = %d, %v; want 1", programs, err)
	}

	// Someone regenerates the demo's key (the dashboard, the API): the next start says the kept key no
	// longer works, and does not print it as the demo's.
	var programID int64
	if err := pool.Get(&programID, `SELECT id FROM programs`); err != nil {
		t.Fatal(err)
	}
	var owner int64
	if err := pool.Get(&owner, `SELECT id FROM accounts WHERE email = 'demo@reftrack.test'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := apikeys.Regenerate(context.Background(), pool, programID, audit.Account(owner, "demo@reftrack.test"), time.Now()); err != nil {
		t.Fatal(err)
	}
	// (The demo step of `dev` alone: a third server start would check nothing more.)
	var out3 bytes.Buffer
	shop, err := (&env{stdout: &out3}).demo(context.Background(), pool, config.Config{BaseURL: "http://localhost:8080"}, dataDir)
	if err != nil || shop != nil {
		t.Fatalf("demo after a regeneration: %v, %v (no demo shop without a working key)", shop, err)
	}
	third := out3.String()
	if !strings.Contains(third, "API key kept in") || !strings.Contains(third, "no longer works: it was regenerated") ||
		strings.Contains(third, "API key        "+key[1]) {
		t.Errorf("start after a regeneration printed:\n%s", third)
	}
}

// auditRow is one audit_log row as the tests read it.
type auditRow struct {
	Actor     string `db:"actor"`
	AccountID *int64 `db:"actor_account_id"`
	Action    string `db:"action"`
	Target    string `db:"target"`
	Detail    string `db:"detail"`
}

func auditRows(t *testing.T, d *dbtest.Database) []auditRow {
	t.Helper()
	var rows []auditRow
	if err := d.Select(&rows, `SELECT actor, actor_account_id, action, target, detail::text AS detail FROM audit_log ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestKeysMarkRotation(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL, "USER": "alice"}
	out, _, err := runCmd(t, vars, "seed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ProgramID int64  `json:"program_id"`
		APIKey    string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCmd(t, vars, "keys", "mark-rotation", "--program", strconv.FormatInt(r.ProgramID, 10), "--rotate-by", "2030-01-02T03:04:05Z")
	if err != nil {
		t.Fatal(err)
	}
	masked := "rt_…" + r.APIKey[len(r.APIKey)-4:]
	if !strings.Contains(out, masked) || !strings.Contains(out, "2030-01-02T03:04:05Z") {
		t.Errorf("printed %q", out)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM api_keys WHERE program_id = $1 AND rotate_by = '2030-01-02T03:04:05Z' AND rotation_marked_at IS NOT NULL`, r.ProgramID); err != nil || n != 1 {
		t.Errorf("key not marked (%d, %v)", n, err)
	}
	// Failures: nothing marked, nothing recorded.
	if _, _, err := runCmd(t, vars, "keys", "mark-rotation", "--program", "999999", "--rotate-by", "2030-01-02T03:04:05Z"); err == nil {
		t.Error("unknown program accepted")
	}
	if _, _, err := runCmd(t, vars, "keys", "mark-rotation", "--program", "1", "--rotate-by", "tomorrow"); err == nil {
		t.Error("bad deadline accepted")
	}
	// --actor names the operator instead of $USER.
	if _, _, err := runCmd(t, vars, "keys", "mark-rotation", "--actor", "bob", "--program", strconv.FormatInt(r.ProgramID, 10), "--rotate-by", "2030-02-01T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	target := "program:" + strconv.FormatInt(r.ProgramID, 10)
	want := []auditRow{
		{Actor: "alice", Action: "api_key.mark_rotation", Target: target, Detail: `{"key": "` + masked + `", "rotate_by": "2030-01-02T03:04:05Z"}`},
		{Actor: "bob", Action: "api_key.mark_rotation", Target: target, Detail: `{"key": "` + masked + `", "rotate_by": "2030-02-01T00:00:00Z"}`},
	}
	if diff := cmp.Diff(auditRows(t, d), want); diff != "" {
		t.Errorf("audit log (-got +want):\n%s", diff)
	}
}

func TestAccountsSuspend(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL, "USER": "alice"}
	if _, _, err := runCmd(t, vars, "seed", "--email", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, vars, "accounts", "suspend", "--email", "ADA@example.com"); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := d.Get(&id, `SELECT id FROM accounts WHERE email = 'ada@example.com' AND suspended_at IS NOT NULL`); err != nil {
		t.Errorf("account not suspended (%v)", err)
	}
	if _, _, err := runCmd(t, vars, "accounts", "suspend", "--email", "nobody@example.com"); err == nil {
		t.Error("unknown account accepted")
	}
	want := []auditRow{{Actor: "alice", Action: "account.suspend", Target: "account:" + strconv.FormatInt(id, 10), Detail: `{"email": "ada@example.com"}`}}
	if diff := cmp.Diff(auditRows(t, d), want); diff != "" {
		t.Errorf("audit log (-got +want):\n%s", diff)
	}
}

// An operator action nobody can be named for is refused: without --actor, $USER or $LOGNAME, nothing
// changes and nothing is recorded.
func TestOperatorActionsNeedAnActor(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL}
	if _, _, err := runCmd(t, vars, "seed", "--email", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, vars, "accounts", "suspend", "--email", "ada@example.com")
	if err == nil || !strings.Contains(err.Error(), "--actor is required") {
		t.Errorf("err = %v", err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM accounts WHERE suspended_at IS NOT NULL`); err != nil || n != 0 {
		t.Errorf("suspended accounts = %d, %v", n, err)
	}
	if rows := auditRows(t, d); len(rows) != 0 {
		t.Errorf("audit log = %+v", rows)
	}
	vars["LOGNAME"] = "carol"
	if _, _, err := runCmd(t, vars, "accounts", "suspend", "--email", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if rows := auditRows(t, d); len(rows) != 1 || rows[0].Actor != "carol" {
		t.Errorf("audit log = %+v", rows)
	}
}

// `reftrackd audit` lists the log newest first, as a table or as JSON, at most --limit records.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL, "USER": "alice"}
	out, _, err := runCmd(t, vars, "audit")
	if err != nil {
		t.Fatal(err)
	}
	if out != "AT  ACTOR  ACTION  TARGET  DETAIL\n" {
		t.Errorf("empty log printed %q", out)
	}
	out, _, err = runCmd(t, vars, "seed", "--json", "--email", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		ProgramID int64 `json:"program_id"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	program := strconv.FormatInt(r.ProgramID, 10)
	for _, args := range [][]string{
		{"keys", "mark-rotation", "--program", program, "--rotate-by", "2030-01-02T03:04:05Z"},
		{"accounts", "suspend", "--email", "ada@example.com", "--actor", "bob"},
	} {
		if _, _, err := runCmd(t, vars, args...); err != nil {
			t.Fatal(args, err)
		}
	}
	out, _, err = runCmd(t, vars, "audit")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	row := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +(\S+) +(\S+) +(\S+) +(\{.*\})$`)
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "AT ") {
		t.Fatalf("printed:\n%s", out)
	}
	var got [][]string
	for _, l := range lines[1:] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q", l)
		}
		got = append(got, m[1:])
	}
	var accountID string
	if err := d.Get(&accountID, `SELECT id::text FROM accounts WHERE email = 'ada@example.com'`); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"bob", "account.suspend", "account:" + accountID, `{"email": "ada@example.com"}`},
		{"alice", "api_key.mark_rotation", "program:" + program, got[1][3]},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("newest first (-got +want):\n%s", diff)
	}
	out, _, err = runCmd(t, vars, "audit", "--json", "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	var records []map[string]any
	if err := json.Unmarshal([]byte(out), &records); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(records) != 1 || records[0]["actor"] != "bob" || records[0]["action"] != "account.suspend" || records[0]["actor_account_id"] != nil ||
		records[0]["detail"].(map[string]any)["email"] != "ada@example.com" {
		t.Errorf("--json --limit 1 = %v", records)
	}
	if _, err := time.Parse(time.RFC3339Nano, records[0]["at"].(string)); err != nil {
		t.Errorf("at: %v", err)
	}
	if _, _, err := runCmd(t, vars, "audit", "--limit", "0"); err == nil || !strings.Contains(err.Error(), "--limit must be between 1 and 10000") {
		t.Errorf("--limit 0: %v", err)
	}
}

func TestAccountsUnsuspend(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	vars := map[string]string{"DATABASE_URL": d.URL, "USER": "alice"}
	if _, _, err := runCmd(t, vars, "seed", "--email", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, vars, "accounts", "suspend", "--email", "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCmd(t, vars, "accounts", "unsuspend", "--email", "Ada@Example.com")
	if err != nil {
		t.Fatal(err)
	}
	if out != "account Ada@Example.com unsuspended\n" {
		t.Errorf("stdout = %q", out)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM accounts WHERE email = 'ada@example.com' AND suspended_at IS NULL`); err != nil || n != 1 {
		t.Errorf("account still suspended (%d, %v)", n, err)
	}
	if _, _, err := runCmd(t, vars, "accounts", "unsuspend", "--email", "nobody@example.com", "--actor", "bob"); err == nil {
		t.Error("unknown account accepted")
	}
	var id int64
	if err := d.Get(&id, `SELECT id FROM accounts WHERE email = 'ada@example.com'`); err != nil {
		t.Fatal(err)
	}
	target := "account:" + strconv.FormatInt(id, 10)
	want := []auditRow{
		{Actor: "alice", Action: "account.suspend", Target: target, Detail: `{"email": "ada@example.com"}`},
		{Actor: "alice", Action: "account.unsuspend", Target: target, Detail: `{"email": "ada@example.com"}`},
	}
	if diff := cmp.Diff(auditRows(t, d), want); diff != "" {
		t.Errorf("audit log (-got +want):\n%s", diff)
	}
}
