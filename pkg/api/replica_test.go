package api_test

import (
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/testkit/replica"
)

// Firefox's User-Agent: a click from it is no bot, so it is listed and counted.
const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0"

// With a read replica (READ_DATABASE_URL), the events list, its daily counts and the dashboard's
// readiness are read from it, and nothing else is; without one, everything reads the primary.
//
// The proof: a real primary and hot standby of the test's own (pkg/testkit/replica). With the standby's
// replay paused, a click recorded on the primary is missing from those three routes of the server with
// the replica, while a route that reads the primary (the program key's readiness) and the same three
// routes of a server without a replica on the same primary show it. Meanwhile the writes and reads that
// must stay on the primary work against rows the standby does not have: a member added and a program
// created while paused are authenticated and authorized, a partner created is listed, and the DNS
// verification the readiness route records shows in its own answer. Once replay resumes and catches up,
// the replica's answers show the click. Every exchange is checked against the spec by apitest.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	pair := replica.Start(t)
	// The primary's database in the shape apitest takes. Never Close it (that drops by name on
	// TEST_DATABASE_URL's server): it goes with its cluster when the test ends.
	primary := &dbtest.Database{DB: pair.Primary, URL: pair.PrimaryURL, Name: replica.Database}
	dns := &apitest.FakeDNS{}
	withReplica := apitest.Start(t, apitest.Options{DB: primary, ReadDB: pair.Replica, DNS: dns})
	primaryOnly := apitest.Start(t, apitest.Options{DB: primary, DNS: dns})

	r := withReplica.Seed(seed.Options{})
	customerWithLead(t, withReplica, r, "rep-1")
	if res := sale(withReplica, r.APIKey, map[string]any{"transaction_id": "rep_1", "amount_cents": 4900, "customer_key": "rep-1"}); res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	// A program whose domain's verification record is published, and whose readiness nobody asked for
	// yet (the first request looks the record up).
	published := withReplica.Seed(seed.Options{})
	var p struct {
		Domain string `db:"domain"`
		Token  string `db:"dns_token"`
	}
	if err := pair.Primary.Get(&p, `SELECT domain, dns_token FROM programs WHERE id = $1`, published.ProgramID); err != nil {
		t.Fatal(err)
	}
	rec := programs.DNSRecordOf(p.Domain, p.Token)
	dns.Set(rec.Name, rec.Value)

	owner := apitest.Bearer(r.AccountToken)
	events := "/api/tracking/events/" + itoa(r.ProgramID)
	dashboardReadiness := "/api/v1/programs/" + itoa(r.ProgramID) + "/readiness"

	// What each route answers, as the test compares it: events listed, clicks per day summed, the
	// readiness counts of the last 24 hours.
	look := func(env *apitest.Env) (listed int, newest string, dailyClicks, readinessClicks int) {
		t.Helper()
		var list struct {
			Data []struct {
				EventType string `json:"event_type"`
			} `json:"data"`
			Meta struct {
				Pagination struct {
					Total int `json:"total"`
				} `json:"pagination"`
			} `json:"meta"`
		}
		res := env.Do(http.MethodGet, events, nil, owner...)
		if res.Status != http.StatusOK {
			t.Fatalf("events list: %d %s", res.Status, res.Body)
		}
		res.Decode(t, &list)
		if len(list.Data) > 0 {
			newest = list.Data[0].EventType
		}
		var daily struct {
			Data []struct {
				Clicks int `json:"clicks"`
			} `json:"data"`
		}
		if res = env.Do(http.MethodGet, events+"/daily", nil, owner...); res.Status != http.StatusOK {
			t.Fatalf("daily counts: %d %s", res.Status, res.Body)
		}
		res.Decode(t, &daily)
		for _, d := range daily.Data {
			dailyClicks += d.Clicks
		}
		return list.Meta.Pagination.Total, newest, dailyClicks, readinessCounts(t, env, dashboardReadiness, owner)
	}
	check := func(name string, env *apitest.Env, wantListed int, wantNewest string, wantClicks int) {
		t.Helper()
		listed, newest, daily, ready := look(env)
		if listed != wantListed || newest != wantNewest || daily != wantClicks || ready != wantClicks {
			t.Errorf("%s: %d events listed, newest %q, %d clicks by day, %d clicks in the readiness counts; want %d, %q, %d, %d",
				name, listed, newest, daily, ready, wantListed, wantNewest, wantClicks, wantClicks)
		}
	}

	pair.Sync()
	check("replica caught up", withReplica, 3, "conversion", 1)
	check("no replica", primaryOnly, 3, "conversion", 1)

	pair.Pause()
	if res := withReplica.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", firefox); res.Status != http.StatusOK {
		t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	// The program key's readiness reads the primary: it has the click.
	if n := readinessCounts(t, withReplica, "/api/v1/programs/me/readiness", apitest.Bearer(r.APIKey)); n != 2 {
		t.Errorf("the key's readiness (primary) counts %d clicks, want 2", n)
	}
	check("replica paused", withReplica, 3, "conversion", 1)
	check("no replica, while the standby is paused", primaryOnly, 4, "click", 2)

	// Authentication and authorization read the primary: a member and a program the standby does not
	// have yet are let in (the new program's events, still on no replica, list as none).
	analyst := member(t, withReplica, r.AdvertiserID, "analyst")
	if res := withReplica.Do(http.MethodGet, events, nil, apitest.Bearer(analyst)...); res.Status != http.StatusOK {
		t.Errorf("a member added while the standby is paused: %d %s", res.Status, res.Body)
	}
	fresh := withReplica.Seed(seed.Options{})
	if res := withReplica.Do(http.MethodGet, "/api/tracking/events/"+itoa(fresh.ProgramID), nil, apitest.Bearer(fresh.AccountToken)...); res.Status != http.StatusOK ||
		res.JSON(t)["meta"].(map[string]any)["pagination"].(map[string]any)["total"] != 0.0 {
		t.Errorf("events of a program created while the standby is paused: %d %s", res.Status, res.Body)
	}
	// The dashboard's readiness of a program the standby does not have is read from the primary.
	if res := withReplica.Do(http.MethodGet, "/api/v1/programs/"+itoa(fresh.ProgramID)+"/readiness", nil, apitest.Bearer(fresh.AccountToken)...); res.Status != http.StatusOK {
		t.Errorf("readiness of a program created while the standby is paused: %d %s", res.Status, res.Body)
	}
	// Partners and links are read back from the primary.
	partners := "/api/v1/programs/" + itoa(r.ProgramID) + "/partners"
	if res := withReplica.Do(http.MethodPost, partners, map[string]any{"name": "Rep", "email": "rep@example.com"}, owner...); res.Status != http.StatusCreated {
		t.Fatalf("create partner: %d %s", res.Status, res.Body)
	}
	if n := len(withReplica.Do(http.MethodGet, partners, nil, owner...).JSON(t)["data"].([]any)); n != 2 {
		t.Errorf("partners listed right after one was added: %d, want 2", n)
	}
	// The readiness route verifies the domain on the primary and answers it, though the report it reads
	// from the standby predates the verification.
	publishedReadiness := "/api/v1/programs/" + itoa(published.ProgramID) + "/readiness"
	publishedOwner := apitest.Bearer(published.AccountToken)
	if got := domainCheck(t, withReplica, publishedReadiness, publishedOwner); got != "pass" {
		t.Errorf("domain_verified right after the DNS check verified it: %q, want pass", got)
	}
	const isVerified = `SELECT dns_verified_at IS NOT NULL FROM programs WHERE id = $1`
	var onPrimary, onStandby bool
	if err := pair.Primary.Get(&onPrimary, isVerified, published.ProgramID); err != nil || !onPrimary {
		t.Errorf("the primary has no verification (%v)", err)
	}
	if err := pair.Replica.Get(&onStandby, isVerified, published.ProgramID); err != nil || onStandby {
		t.Errorf("the paused standby has the verification (%v): the check above proved nothing", err)
	}

	pair.Resume()
	pair.Sync()
	check("replica resumed", withReplica, 4, "click", 2)
	if got := domainCheck(t, withReplica, publishedReadiness, publishedOwner); got != "pass" {
		t.Errorf("domain_verified once replicated: %q, want pass", got)
	}
}

// readinessCounts is the clicks of the last 24 hours a readiness route answers.
func readinessCounts(t *testing.T, env *apitest.Env, path string, auth []string) int {
	t.Helper()
	var ready struct {
		Counts24h struct {
			Clicks int `json:"clicks"`
		} `json:"counts_24h"`
	}
	res := env.Do(http.MethodGet, path, nil, auth...)
	if res.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, res.Status, res.Body)
	}
	res.Decode(t, &ready)
	return ready.Counts24h.Clicks
}

// domainCheck is the status of the domain_verified check a readiness route answers.
func domainCheck(t *testing.T, env *apitest.Env, path string, auth []string) string {
	t.Helper()
	var ready struct {
		Checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"checks"`
	}
	res := env.Do(http.MethodGet, path, nil, auth...)
	if res.Status != http.StatusOK {
		t.Fatalf("%s: %d %s", path, res.Status, res.Body)
	}
	res.Decode(t, &ready)
	for _, c := range ready.Checks {
		if c.ID == "domain_verified" {
			return c.Status
		}
	}
	t.Fatalf("%s: no domain_verified check in %s", path, res.Body)
	return ""
}
