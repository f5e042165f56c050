package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Fuzz targets of the outbound webhooks' routes (docs/rules.md#webhooks): one target writes through every
// route with a body (create, change, recover, test) and the resend, one reads the delivery log by its query.
// The checks are the other targets' (fuzz_test.go): no 5xx, an answer that fits the spec, the platform
// envelope.

// startWebhookFuzz is startFuzz with an endpoint ({{endpoint}}, on a local port nothing listens on) and
// a test delivery to it ({{delivery}}).
func startWebhookFuzz(f *testing.F) *fuzzEnv {
	f.Helper()
	e := startFuzz(f, seed.Options{})
	account := apitest.Bearer(e.seed.AccountToken)
	res := e.Do(http.MethodPost, "/api/v1/programs/"+itoa(e.seed.ProgramID)+"/webhook-endpoints",
		map[string]any{"url": "http://127.0.0.1:9/hook"}, account...)
	endpoint, _ := res.JSON(f)["data"].(map[string]any)["id"].(float64)
	if res.Status != http.StatusCreated || endpoint == 0 {
		f.Fatalf("endpoint: %d %s", res.Status, res.Body)
	}
	res = e.Do(http.MethodPost, fmt.Sprintf("/api/v1/webhook-endpoints/%v/test", endpoint), map[string]any{"event_type": "sale.created"}, account...)
	delivery, _ := res.JSON(f)["data"].(map[string]any)["id"].(float64)
	if res.Status != http.StatusAccepted || delivery == 0 {
		f.Fatalf("test event: %d %s", res.Status, res.Body)
	}
	e.fixture("{{endpoint}}", fmt.Sprint(endpoint), "{{delivery}}", fmt.Sprint(delivery))
	return e
}

// webhookWrites are the routes FuzzWebhookWrites sends to, by the input's first byte.
var webhookWrites = []struct{ method, path string }{
	{http.MethodPost, "/api/v1/programs/{{program}}/webhook-endpoints"},
	{http.MethodPatch, "/api/v1/webhook-endpoints/{{endpoint}}"},
	{http.MethodPost, "/api/v1/webhook-endpoints/{{endpoint}}/recover"},
	{http.MethodPost, "/api/v1/webhook-endpoints/{{endpoint}}/test"},
	{http.MethodPost, "/api/v1/webhook-endpoints/{{endpoint}}/rotate-secret"},
	{http.MethodPost, "/api/v1/webhook-deliveries/{{delivery}}/resend"},
	{http.MethodPost, "/api/v1/webhook-deliveries/99999999999999999999/resend"},
	{http.MethodDelete, "/api/v1/webhook-endpoints/0"},
}

func FuzzWebhookWrites(f *testing.F) {
	e := startWebhookFuzz(f)
	seeds := map[int][]jsonInput{
		0: jsonSeeds(`{"url":"http://127.0.0.1:9/a","events":["sale.created"],"description":"d"}`),
		1: jsonSeeds(`{"url":"http://127.0.0.1:9/b","events":[],"description":"x","enabled":false}`),
		2: jsonSeeds(`{"since":"2026-01-01T00:00:00Z"}`),
		3: jsonSeeds(`{"event_type":"payout.paid"}`),
		4: {{body: ""}},
		5: {{body: ""}},
	}
	for _, v := range []string{`"https://example.com"`, `"http://10.0.0.1/x"`, `"ftp://127.0.0.1/"`, `"http://user:pw@127.0.0.1/"`, `"/relative"`,
		`"http://[::1]:9/"`, `"http://0.0.0.0/"`, `"http://169.254.169.254/latest"`, `"` + strings.Repeat("a", 2049) + `"`, `""`, "5"} {
		seeds[0] = append(seeds[0], jsonInput{`{"url":"x"}`, "url", v})
		seeds[1] = append(seeds[1], jsonInput{`{"url":"x"}`, "url", v})
	}
	for _, v := range []string{`["sale.created","sale.created"]`, `["nope"]`, `[]`, `[1]`, `"sale.created"`, `{}`} {
		seeds[0] = append(seeds[0], jsonInput{`{"url":"http://127.0.0.1:9/c","events":[]}`, "events", v})
	}
	for _, v := range []string{`"9999-12-31T23:59:59Z"`, `"0001-01-01T00:00:00Z"`, `"2026-01-01"`, `"yesterday"`, `1`} {
		seeds[2] = append(seeds[2], jsonInput{`{"since":"x"}`, "since", v})
	}
	for _, v := range []string{`"sale.deleted"`, `""`, `null`, `["sale.created"]`} {
		seeds[3] = append(seeds[3], jsonInput{`{"event_type":"x"}`, "event_type", v})
	}
	for route, list := range seeds {
		for _, s := range list {
			f.Add(byte(route), s.body, s.field, s.value)
		}
	}
	account := apitest.Bearer(e.seed.AccountToken)
	f.Fuzz(func(t *testing.T, route byte, body, field, value string) {
		w := webhookWrites[int(route)%len(webhookWrites)]
		var req *http.Request
		if strings.HasSuffix(w.path, "/rotate-secret") || strings.HasSuffix(w.path, "/resend") {
			req = e.post(t, e.fill(w.path), "", "", account...) // they take no body: the path is the input
		} else {
			req = e.post(t, e.fill(w.path), "application/json", setField(e.fill(body), field, e.fill(value)), account...)
		}
		req.Method = w.method
		e.exchange(t, req, false)
	})
}

func FuzzListWebhookDeliveries(f *testing.F) {
	e := startWebhookFuzz(f)
	queries := []string{"status=pending", "status=succeeded&event_type=sale.created", "status=failed&limit=1", "status=open", "event_type=sale",
		"event_type=sale.created&event_type=lead.created", "limit=0", "limit=101", "limit=-5", "limit=1e3"}
	e.fuzzQuery(f, "/api/v1/webhook-endpoints/{{endpoint}}/deliveries", append(queries, cursorSeeds...)...)
}
