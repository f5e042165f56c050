package api_test

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

const unavailableMessage = "Service temporarily unavailable. Retry in 5 seconds."

// databaseSwitch takes the test's own database away and gives it back: no new connections are allowed
// and the existing ones are terminated, as when PostgreSQL stops. Only this test's database is touched.
type databaseSwitch struct {
	t     *testing.T
	admin *sql.DB
	name  string
}

func newDatabaseSwitch(t *testing.T, env *apitest.Env) *databaseSwitch {
	t.Helper()
	admin, err := sql.Open("postgres", dbtest.AdminURL())
	if err != nil {
		t.Fatal(err)
	}
	s := &databaseSwitch{t: t, admin: admin, name: env.DB.Name}
	t.Cleanup(func() { s.up(); admin.Close() }) // the database must be droppable afterwards
	return s
}

func (s *databaseSwitch) exec(query string, args ...any) {
	s.t.Helper()
	if _, err := s.admin.ExecContext(context.Background(), query, args...); err != nil {
		s.t.Fatalf("%s: %v", query, err)
	}
}

func (s *databaseSwitch) down() {
	s.t.Helper()
	s.exec("ALTER DATABASE " + pq.QuoteIdentifier(s.name) + " ALLOW_CONNECTIONS false")
	s.exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, s.name)
	// pg_terminate_backend only signals: wait until the backends are gone.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := s.admin.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, s.name).Scan(&n); err != nil {
			s.t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d backends of %s still connected", n, s.name)
		}
	}
}

func (s *databaseSwitch) up() {
	s.exec("ALTER DATABASE " + pq.QuoteIdentifier(s.name) + " ALLOW_CONNECTIONS true")
}

// unavailable checks a 503 in the platform envelope with Retry-After.
func unavailable(t *testing.T, env *apitest.Env, res *apitest.Response) {
	t.Helper()
	if res.Status != http.StatusServiceUnavailable {
		t.Logf("server log:\n%s", env.Logs.String())
	}
	e := platformError(t, res, http.StatusServiceUnavailable, "ServiceUnavailableError", unavailableMessage)
	if e["code"] != "service_unavailable" {
		t.Errorf("error.code = %v", e["code"])
	}
	if got := res.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After = %q, want 5", got)
	}
}

// With the database gone, the sale, click and events routes answer 503 service_unavailable with
// Retry-After in their own envelopes (never a 500), the failed requests spend no rate-limit budget, and
// once the database is back the same requests succeed with no restart.
func TestDatabaseOutageAnswers503ThenRecovers(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "cust-1")
	db := newDatabaseSwitch(t, env)
	saleBody := func(id string) map[string]any {
		return map[string]any{"transaction_id": id, "amount_cents": 4900, "currency": "USD", "customer_key": "cust-1"}
	}
	events := "/api/tracking/events/" + strconv.FormatInt(r.ProgramID, 10)

	db.down()
	for i := range 150 { // as many as the run sent: none spends the budget, none is refused
		res := sale(env, r.APIKey, saleBody("in_outage"))
		unavailable(t, env, res)
		if got := res.Header.Get("X-RateLimit-Remaining"); got != "120" {
			t.Errorf("sale %d during the outage: X-RateLimit-Remaining = %q, want 120 (a 5xx gives its unit back)", i, got)
		}
	}
	unavailable(t, env, env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", chromeUA))
	unavailable(t, env, env.Do(http.MethodGet, events, nil, apitest.Bearer(r.AccountToken)...))
	// The typed envelope carries retry_after_seconds too.
	res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "5" {
		t.Fatalf("readiness: %d %v %s", res.Status, res.Header, res.Body)
	}
	e := res.JSON(t)["error"].(map[string]any)
	if e["code"] != "service_unavailable" || e["message"] != unavailableMessage || e["retry_after_seconds"] != 5.0 {
		t.Errorf("readiness error = %v", e)
	}

	db.up()
	res = sale(env, r.APIKey, saleBody("in_outage"))
	if res.Status != http.StatusOK {
		t.Fatalf("sale after the database returned: %d %s", res.Status, res.Body)
	}
	if got := res.Header.Get("X-RateLimit-Remaining"); got != "119" {
		t.Errorf("first sale after the outage: X-RateLimit-Remaining = %q, want 119", got)
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_outage'`); n != 1 {
		t.Errorf("sales stored = %d, want 1", n)
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", chromeUA); res.Status != http.StatusOK {
		t.Errorf("click after the outage: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodGet, events, nil, apitest.Bearer(r.AccountToken)...); res.Status != http.StatusOK {
		t.Errorf("events after the outage: %d %s", res.Status, res.Body)
	}
	// The readiness route's whole budget (30 per minute per key) is still there after its failed request.
	for i := 1; i <= 30; i++ {
		if res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...); res.Status != http.StatusOK {
			t.Fatalf("readiness %d after the outage: %d %s", i, res.Status, res.Body)
		}
	}
	if res := env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(r.APIKey)...); res.Status != http.StatusTooManyRequests {
		t.Errorf("readiness 31: %d, want 429", res.Status)
	}
}

// A database that hangs rather than stops: with a lock held elsewhere, the sale waits only lock_timeout
// (per connection; here the test database's own setting, as reftrackd sets DB_LOCK_TIMEOUT on its pool)
// and answers 503 with Retry-After instead of holding the request open; once the lock is released the
// same sale is recorded.
func TestLockTimeoutAnswers503(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	if _, err := d.DB.Exec("ALTER DATABASE " + pq.QuoteIdentifier(d.Name) + " SET lock_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	d.DB.SetMaxIdleConns(0) // closes the idle connections: new ones read the database's setting
	d.DB.SetMaxIdleConns(2)
	env := apitest.Start(t, apitest.Options{DB: d, Clock: apitest.PinnedClock().Now})
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "cust-1")
	body := map[string]any{"transaction_id": "in_locked", "amount_cents": 4900, "currency": "USD", "customer_key": "cust-1"}

	tx, err := d.DB.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`LOCK TABLE sales IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res := sale(env, r.APIKey, body)
	unavailable(t, env, res)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the locked sale took %s", took)
	}
	if got := res.Header.Get("X-RateLimit-Remaining"); got != "120" {
		t.Errorf("X-RateLimit-Remaining = %q, want 120", got)
	}
	if !strings.Contains(env.Logs.String(), "canceling statement due to lock timeout") {
		t.Errorf("the 503 was not the lock timeout; server log:\n%s", env.Logs.String())
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if res := sale(env, r.APIKey, body); res.Status != http.StatusOK {
		t.Fatalf("sale after the lock was released: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'in_locked'`); n != 1 {
		t.Errorf("sales stored = %d, want 1", n)
	}
}
