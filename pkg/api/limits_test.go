package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// unknownKey is a well-formed program key that matches no program.
func unknownKey(i int) string { return fmt.Sprintf("rt_unknown%030d", i) }

// Guessing keys is limited (docs/rules.md#limits): one IP trying a new unknown key each time gets the route's
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

// Account and session routes outside /api/v1/cli/* allow 600 requests per minute per presented token
// (docs/rules.md#limits); another token, and the same token's CLI routes, keep their own count.
func TestAccountRoutesLimitedPerToken(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	r := env.Seed(seed.Options{})
	for i := 0; i < 600; i++ {
		res := env.Do(http.MethodGet, "/api/v1/me", nil, apitest.Bearer(r.AccountToken)...)
		if res.Status != http.StatusOK || res.Header.Get("X-RateLimit-Remaining") != itoa(int64(599-i)) {
			t.Fatalf("request %d: %d remaining %s", i, res.Status, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
	// The bucket is shared by the account routes: the 601st request, on another one, is refused.
	assertRateLimited(t, env.Do(http.MethodGet, "/api/v1/programs/"+itoa(r.ProgramID), nil, apitest.Bearer(r.AccountToken)...), 600)
	if res := env.Do(http.MethodGet, "/api/v1/cli/programs", nil, apitest.Bearer(r.AccountToken)...); res.Status != http.StatusOK {
		t.Errorf("CLI route with the same token: %d %s", res.Status, res.Body)
	}
	// A dashboard session counts per cookie, not per address.
	for _, cookie := range []string{"a", "b"} {
		res := env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", dashboard.SessionCookie+"="+cookie)
		if res.Status != http.StatusUnauthorized || res.Header.Get("X-RateLimit-Remaining") != "599" {
			t.Errorf("session %s: %d remaining %s", cookie, res.Status, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
}

// The login pages allow 60 requests per minute per IP; past it a page answers plain text with
// Retry-After.
func TestLoginPagesLimitedPerIP(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	for i := 0; i < 60; i++ {
		if res := env.Do(http.MethodGet, "/login", nil); res.Status == http.StatusTooManyRequests || res.Header.Get("X-RateLimit-Remaining") != itoa(int64(59-i)) {
			t.Fatalf("request %d: %d remaining %s", i, res.Status, res.Header.Get("X-RateLimit-Remaining"))
		}
	}
	res := env.Do(http.MethodGet, "/login/callback", nil)
	if res.Status != http.StatusTooManyRequests || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") ||
		res.Header.Get("Retry-After") == "" || !strings.HasPrefix(string(res.Body), "Too many requests: the limit is 60 per minute.") {
		t.Errorf("61st: %d %v %s", res.Status, res.Header, res.Body)
	}
}

// The development issuer allows 60 requests per minute per IP; its token endpoint answers an OAuth error.
func TestDevIssuerLimitedPerIP(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now})
	for i := 0; i < 60; i++ {
		if res := env.Do(http.MethodGet, "/dev/oidc/jwks", nil); res.Status == http.StatusTooManyRequests {
			t.Fatalf("request %d: 429", i)
		}
	}
	assertRateLimited(t, env.Do(http.MethodGet, "/dev/oidc/.well-known/openid-configuration", nil), 60)
	res := env.Do(http.MethodPost, "/dev/oidc/token", "", "Content-Type", "application/x-www-form-urlencoded")
	if res.Status != http.StatusTooManyRequests || res.JSON(t)["error"] != "invalid_request" || res.Header.Get("Retry-After") == "" {
		t.Errorf("token endpoint: %d %s", res.Status, res.Body)
	}
}

// With Redis the unknown-token bucket is shared: guesses spread over two replicas count together, and
// a valid key still passes on either.
func TestUnknownTokenBucketSharedThroughRedis(t *testing.T) {
	t.Parallel()
	a, b := replicasOnRedis(t)
	r := a.Seed(seed.Options{})
	readiness := func(env *apitest.Env, key string) *apitest.Response {
		return env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(key)...)
	}
	for i := 0; i < 30; i++ { // the route allows 30 per minute per key
		env := a
		if i%2 == 1 {
			env = b
		}
		if res := readiness(env, unknownKey(i)); res.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s", i, res.Status, res.Body)
		}
	}
	assertRateLimited(t, readiness(a, unknownKey(30)), 30)
	assertRateLimited(t, readiness(b, unknownKey(31)), 30)
	for _, env := range []*apitest.Env{a, b} {
		if res := readiness(env, r.APIKey); res.Status != http.StatusOK {
			t.Errorf("valid key: %d %s", res.Status, res.Body)
		}
	}
}
