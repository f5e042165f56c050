package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

const initRoute = "POST /api/v1/cli/init"

// Whatever the server would refuse, init refuses before sending, printing the server's own message: the
// same body is sent to the server directly, and its answer is what the CLI must have said. A value the
// CLI once dropped quietly (--duration-months -1, --cookie-days 0) is refused, never made a default.
func TestCLIInitRefusesWhatTheServerRefuses(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("refusals@brand.example")
	token := c.token()
	valid := []string{"init", "--name", "Acme", "--domain", "acme.example.com", "--commission-type", "recurring_percent", "--commission-rate", "30"}
	validBody := map[string]any{"name": "Acme", "domain": "acme.example.com", "commission_type": "recurring_percent", "commission_rate": 30}
	for _, tc := range []struct {
		name  string
		flags []string       // given after valid's (the last value of a flag wins)
		body  map[string]any // the same change to validBody
	}{
		{"lifetime by mistake", []string{"--duration-months", "-1"}, map[string]any{"duration_months": -1}},
		{"months beyond the range", []string{"--duration-months", "1201"}, map[string]any{"duration_months": 1201}},
		{"no cookie days", []string{"--cookie-days", "0"}, map[string]any{"cookie_duration": 0}},
		{"negative cookie days", []string{"--cookie-days", "-5"}, map[string]any{"cookie_duration": -5}},
		{"cookie days beyond the range", []string{"--cookie-days", "3651"}, map[string]any{"cookie_duration": 3651}},
		{"domain with a path", []string{"--domain", "acme.example.com/shop"}, map[string]any{"domain": "acme.example.com/shop"}},
		{"domain with a port", []string{"--domain", "acme.example.com:8080"}, map[string]any{"domain": "acme.example.com:8080"}},
		{"domain with a space", []string{"--domain", "acme example.com"}, map[string]any{"domain": "acme example.com"}},
		{"unknown commission type", []string{"--commission-type", "bounty"}, map[string]any{"commission_type": "bounty"}},
		{"rate zero", []string{"--commission-rate", "0"}, map[string]any{"commission_rate": 0}},
		{"rate negative", []string{"--commission-rate", "-5"}, map[string]any{"commission_rate": -5}},
		{"percent above 100", []string{"--commission-rate", "100.5"}, map[string]any{"commission_rate": 100.5}},
		{"fixed above a million", []string{"--commission-type", "fixed", "--commission-rate", "1000001"},
			map[string]any{"commission_type": "fixed", "commission_rate": 1000001}},
		{"five decimal places", []string{"--commission-rate", "12.34567"}, map[string]any{"commission_rate": 12.34567}},
		{"NUL in the name", []string{"--name", "Ac\x00me"}, map[string]any{"name": "Ac\x00me"}},
		{"NUL in the domain and the name", []string{"--name", "Ac\x00me", "--domain", "acme\x00.example.com"},
			map[string]any{"name": "Ac\x00me", "domain": "acme\x00.example.com"}},
		{"several mistakes: the server's first", []string{"--domain", "acme example.com", "--commission-rate", "0", "--duration-months", "-1", "--cookie-days", "0"},
			map[string]any{"domain": "acme example.com", "commission_rate": 0, "duration_months": -1, "cookie_duration": 0}},
		{"domain and months", []string{"--domain", "acme example.com", "--duration-months", "-1"},
			map[string]any{"domain": "acme example.com", "duration_months": -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := maps.Clone(validBody)
			maps.Copy(body, tc.body)
			res := c.env.Do(http.MethodPost, "/api/v1/cli/init", body, apitest.Bearer(token)...)
			var answer struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			res.Decode(t, &answer)
			if res.Status != http.StatusBadRequest || answer.Error.Message == "" {
				t.Fatalf("the server answered %d %s: not a refusal", res.Status, res.Body)
			}

			sent := c.sent.count(initRoute)
			_, errOut, err := c.run(append(slices.Clone(valid), tc.flags...)...)
			if want := "Error: " + answer.Error.Message; err == nil || errOut != want {
				t.Errorf("reftrack init %q: %v, printed %q; the server says %q", tc.flags, err, errOut, want)
			}
			if n := c.sent.count(initRoute) - sent; n != 0 {
				t.Errorf("reftrack init %q sent %d requests; a refused value must not leave", tc.flags, n)
			}
		})
	}
	// Blank values are missing values, for the CLI as for the server: the CLI says which flags to pass.
	for _, blank := range [][]string{{"--name", "  "}, {"--domain", " "}} {
		sent := c.sent.count(initRoute)
		if _, errOut, err := c.run(append(slices.Clone(valid), blank...)...); err == nil || !strings.Contains(errOut, "Next: pass --name, --domain") {
			t.Errorf("blank %s: %v %q", blank[0], err, errOut)
		}
		if c.sent.count(initRoute) != sent {
			t.Errorf("blank %s was sent", blank[0])
		}
	}
	if n := c.env.Count(`SELECT count(*) FROM programs`); n != 0 {
		t.Errorf("%d programs created from refused values", n)
	}
}

// The optional settings reach the program as given: months (0 is lifetime), cookie days; an advertiser id
// is the server's to judge, so it is sent whatever it is.
func TestCLIInitSettings(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("settings@brand.example")
	base := []string{"--domain", "acme.example.com", "--commission-type", "recurring_fixed", "--commission-rate", "25"}

	out := c.must(append([]string{"init", "--name", "Twelve months", "--duration-months", "12", "--cookie-days", "30"}, base...)...)
	if !strings.Contains(out, "Created program ") {
		t.Fatalf("init printed %q", out)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE name = 'Twelve months' AND commission_duration_months = 12 AND cookie_window_days = 30`); n != 1 {
		t.Error("duration and cookie days not stored as given")
	}
	c.must(append([]string{"init", "--name", "Lifetime", "--duration-months", "0"}, base...)...)
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE name = 'Lifetime' AND commission_duration_months IS NULL AND cookie_window_days = 60`); n != 1 {
		t.Error("--duration-months 0 is not lifetime, or the cookie default changed")
	}

	var created struct {
		Data struct {
			ProgramID string `json:"program_id"`
			APIKey    string `json:"api_key"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(c.must(append([]string{"init", "--name", "As JSON", "--json"}, base...)...)), &created); err != nil ||
		!regexp.MustCompile(`^\d+$`).MatchString(created.Data.ProgramID) || !strings.HasPrefix(created.Data.APIKey, "rt_") {
		t.Errorf("init --json: %+v %v", created, err)
	}

	sent := c.sent.count(initRoute)
	_, errOut, err := c.run(append([]string{"init", "--name", "Nobody's", "--advertiser-id", "0"}, base...)...)
	if err == nil || !strings.HasPrefix(errOut, "Error: advertiser_id does not match the authenticated account\n(request id ") {
		t.Errorf("--advertiser-id 0: %v %q", err, errOut)
	}
	if c.sent.count(initRoute) != sent+1 {
		t.Error("--advertiser-id 0 was not sent to the server")
	}
}

// `reftrack test <type>` refuses an event type the server refuses, in its words, before sending.
func TestCLITestRefusesWhatTheServerRefuses(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	brand := c.env.Seed(seed.Options{})
	for _, eventType := range []string{"refund", "Click", "chain"} {
		res := c.env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"event_type": eventType}, apitest.Bearer(brand.APIKey)...)
		var answer struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		res.Decode(t, &answer)
		if res.Status != http.StatusBadRequest || answer.Error.Message == "" {
			t.Fatalf("the server answered %d %s: not a refusal", res.Status, res.Body)
		}
		sent := c.sent.count("POST /api/v1/cli/test-event")
		_, errOut, err := c.run("test", eventType, "--api-key", brand.APIKey)
		if want := "Error: " + answer.Error.Message; err == nil || errOut != want {
			t.Errorf("reftrack test %s: %v, printed %q; the server says %q", eventType, err, errOut, want)
		}
		if n := c.sent.count("POST /api/v1/cli/test-event") - sent; n != 0 {
			t.Errorf("reftrack test %s sent %d requests; a refused value must not leave", eventType, n)
		}
	}
}

// The ledger's settings: cli/init does not take them (the original product's contract), so init sets them
// on the new program with PATCH /api/v1/programs/{programId}, only when given; they reach the program as
// given, the ranges' ends included.
func TestCLIInitLedgerSettings(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("ledger@brand.example")
	base := []string{"--domain", "acme.example.com", "--commission-type", "percent", "--commission-rate", "20"}
	created := regexp.MustCompile(`Created program (\d+) `)
	patch := func(id string) string { return "PATCH /api/v1/programs/" + id }

	out := c.must(append([]string{"init", "--name", "Manual", "--hold-days", "14", "--commission-approval", "manual", "--payout-minimum", "5000"}, base...)...)
	m := created.FindStringSubmatch(out)
	if m == nil || !strings.HasSuffix(out, "\n\nLedger: commissions held 14 days, approval manual, payout minimum 5000 (minor units, each currency).\n"+
		"Next: `reftrack test --chain` checks the whole chain; `reftrack status` shows the program.\n") ||
		!regexp.MustCompile(`API key \(shown once, kept in .*\): rt_\w+\n`).MatchString(out) {
		t.Fatalf("init printed %q", out)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND hold_days = 14 AND commission_approval = 'manual' AND payout_minimum_cents = 5000`, m[1]); n != 1 {
		t.Error("the ledger settings did not reach the program")
	}
	if c.sent.count(initRoute) != 1 || c.sent.count(patch(m[1])) != 1 {
		t.Errorf("sent init %d times, the settings %d times", c.sent.count(initRoute), c.sent.count(patch(m[1])))
	}

	out = c.must(append([]string{"init", "--name", "Defaults"}, base...)...)
	if m := created.FindStringSubmatch(out); m == nil || c.sent.count(patch(m[1])) != 0 || strings.Contains(out, "Ledger:") {
		t.Errorf("init without ledger settings sent them, or printed %q", out)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE name = 'Defaults' AND hold_days = 30 AND commission_approval = 'auto' AND payout_minimum_cents = 0`); n != 1 {
		t.Error("the defaults changed")
	}

	// The ends of the ranges; --json prints cli/init's answer, as without them.
	var answer struct {
		Data struct {
			ProgramID string `json:"program_id"`
			APIKey    string `json:"api_key"`
		} `json:"data"`
	}
	out = c.must(append([]string{"init", "--name", "Ends", "--json", "--hold-days", "0", "--commission-approval", "auto", "--payout-minimum", "1000000000"}, base...)...)
	if err := json.Unmarshal([]byte(out), &answer); err != nil || !strings.HasPrefix(answer.Data.APIKey, "rt_") {
		t.Fatalf("init --json printed %q: %v", out, err)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND hold_days = 0 AND commission_approval = 'auto' AND payout_minimum_cents = 1000000000`, answer.Data.ProgramID); n != 1 {
		t.Error("the ranges' ends did not reach the program")
	}
	c.must(append([]string{"init", "--name", "Longest hold", "--hold-days", "365", "--payout-minimum", "0"}, base...)...)
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE name = 'Longest hold' AND hold_days = 365 AND payout_minimum_cents = 0`); n != 1 {
		t.Error("--hold-days 365 did not reach the program")
	}
}

// A ledger setting the server would refuse is refused before anything is sent, cli/init included, in the
// server's words: the same change sent to a program's PATCH answers what the CLI must have said.
func TestCLIInitRefusesLedgerSettings(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("ledger-refusals@brand.example")
	token := c.token()
	base := []string{"init", "--name", "Acme", "--domain", "acme.example.com", "--commission-type", "percent", "--commission-rate", "20"}
	id := regexp.MustCompile(`Created program (\d+) `).FindStringSubmatch(c.must(base...))[1]
	programs := c.env.Count(`SELECT count(*) FROM programs`)
	for _, tc := range []struct {
		name  string
		flags []string
		body  map[string]any // the same change, sent to the existing program
	}{
		{"hold days negative", []string{"--hold-days", "-1"}, map[string]any{"hold_days": -1}},
		{"hold days beyond a year", []string{"--hold-days", "366"}, map[string]any{"hold_days": 366}},
		{"approval capitalised", []string{"--commission-approval", "Manual"}, map[string]any{"commission_approval": "Manual"}},
		{"approval empty", []string{"--commission-approval", ""}, map[string]any{"commission_approval": ""}},
		{"approval NUL", []string{"--commission-approval", "man\x00ual"}, map[string]any{"commission_approval": "man\x00ual"}},
		{"minimum negative", []string{"--payout-minimum", "-1"}, map[string]any{"payout_minimum_cents": -1}},
		{"minimum beyond 10^9", []string{"--payout-minimum", "1000000001"}, map[string]any{"payout_minimum_cents": 1000000001}},
		{"several: the server's first", []string{"--payout-minimum", "-1", "--commission-approval", "x", "--hold-days", "400"},
			map[string]any{"payout_minimum_cents": -1, "commission_approval": "x", "hold_days": 400}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.env.Do(http.MethodPatch, "/api/v1/programs/"+id, tc.body, apitest.Bearer(token)...)
			var answer struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			res.Decode(t, &answer)
			if res.Status != http.StatusBadRequest || answer.Error.Message == "" {
				t.Fatalf("the server answered %d %s: not a refusal", res.Status, res.Body)
			}
			sent := c.sent.total()
			_, errOut, err := c.run(append(slices.Clone(base), tc.flags...)...)
			if want := "Error: " + answer.Error.Message; err == nil || errOut != want {
				t.Errorf("reftrack init %q: %v, printed %q; the server says %q", tc.flags, err, errOut, want)
			}
			if n := c.sent.total() - sent; n != 0 {
				t.Errorf("reftrack init %q sent %d requests; a refused value must not leave", tc.flags, n)
			}
		})
	}
	// A value cli/init refuses comes first: it would be sent first.
	sent := c.sent.total()
	if _, errOut, err := c.run(append(slices.Clone(base), "--cookie-days", "0", "--hold-days", "-1")...); err == nil ||
		errOut != "Error: cookie_duration must be between 1 and 3650" || c.sent.total() != sent {
		t.Errorf("init and ledger refusals: %v %q", err, errOut)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs`); n != programs {
		t.Errorf("%d programs created from refused values", n-programs)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND hold_days = 30 AND commission_approval = 'auto' AND payout_minimum_cents = 0`, id); n != 1 {
		t.Error("a refused change reached the program")
	}
}

// When the settings cannot be set once the program exists, its API key (shown once) is still shown, and
// the error says the program exists and how to set them; init is not to be run again.
func TestCLIInitLedgerSettingsNotSet(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.login("ledger-down@brand.example")
	var out, errOut bytes.Buffer
	a := c.app(strings.NewReader(""), &out, &errOut)
	a.httpClient.Transport = failPatch{c.sent}
	cmd := a.root()
	cmd.SetArgs([]string{"--server", c.env.URL, "--config-dir", c.dir, "init", "--name", "Half", "--domain", "acme.example.com",
		"--commission-type", "percent", "--commission-rate", "20", "--hold-days", "7"})
	err := cmd.ExecuteContext(context.Background())
	var ue *userError
	if !errors.As(err, &ue) {
		t.Fatalf("init: %v", err)
	}
	m := regexp.MustCompile(`Created program (\d+) .*\nAPI key \(shown once, kept in .*\): rt_\w+\n`).FindStringSubmatch(out.String())
	if m == nil || strings.Contains(out.String(), "Ledger:") || strings.Contains(out.String(), "Next:") {
		t.Fatalf("init printed %q", out.String())
	}
	want := "Error: program " + m[1] + " was created, but its ledger settings were not set: cannot reach " + c.env.URL + ": "
	if got := ue.Render(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " Its other settings and API key are as shown; set the ledger's with PATCH /api/v1/programs/"+m[1]+
		` {"hold_days":7} (running init again would create another program).`) {
		t.Errorf("rendered %q", got)
	}
	if n := c.env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND hold_days = 30`, m[1]); n != 1 {
		t.Error("the program is not there with its default hold")
	}
	if c.must("programs") == "" || !strings.Contains(c.must("programs"), "*") {
		t.Error("the program created is not current")
	}
}

// failPatch sends every request but a PATCH, which gets no answer.
type failPatch struct{ next http.RoundTripper }

func (f failPatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPatch {
		return nil, errors.New("connection reset by peer")
	}
	return f.next.RoundTrip(r)
}
