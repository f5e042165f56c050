package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// unknownKey is a well-formed program key that matches no program.
func unknownKey(i int) string { return fmt.Sprintf("rt_unknown%030d", i) }

// Guessing keys is limited (decisions.md): one IP trying a new unknown key each time gets the route's
// per-key limit of 401s, then 429 before authentication; a valid key from the same IP is unaffected.
func TestUnknownTokensChargeAPerIPBucket(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	r := env.Seed(seed.Options{})
	body := map[string]any{"transaction_id": "guess", "amount_cents": 100, "customer_key": "c"}
	var unauthorized, limited int
	for i := 0; i < 130; i++ {
		res := sale(env, unknownKey(i), body)
		switch res.Status {
		case http.StatusUnauthorized:
			if limited > 0 {
				t.Fatalf("request %d: 401 after a 429", i)
			}
			unauthorized++
		case http.StatusTooManyRequests:
			if limited == 0 {
				assertRateLimited(t, res, 120)
			}
			limited++
		default:
			t.Fatalf("request %d: status %d %s", i, res.Status, res.Body)
		}
	}
	if unauthorized != 120 || limited != 10 {
		t.Errorf("401s %d, 429s %d; want 120 and 10", unauthorized, limited)
	}
	// A valid key from the same IP still records a sale, and its own bucket is untouched.
	customerWithLead(t, env, r, "c")
	res := sale(env, r.APIKey, map[string]any{"transaction_id": "real", "amount_cents": 100, "customer_key": "c"})
	if res.Status != http.StatusOK || res.Header.Get("X-RateLimit-Remaining") != "119" {
		t.Fatalf("valid key: %d %s remaining %s", res.Status, res.Body, res.Header.Get("X-RateLimit-Remaining"))
	}
	if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'real'`); n != 1 {
		t.Errorf("sales stored: %d", n)
	}
	// An account login token that matches nothing is charged the same way on its routes.
	for i := 0; i < 60; i++ {
		if res := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(fmt.Sprintf("rtu_unknown%029d", i))...); res.Status != http.StatusUnauthorized {
			t.Fatalf("account token %d: %d %s", i, res.Status, res.Body)
		}
	}
	res = env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer("rtu_unknownlast")...)
	if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Errorf("61st unknown account token: %d %s", res.Status, res.Body)
	}
}
