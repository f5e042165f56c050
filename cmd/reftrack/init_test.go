package main

import (
	"encoding/json"
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
