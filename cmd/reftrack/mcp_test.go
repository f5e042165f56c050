package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/reftrack/reftrack/pkg/seed"
)

// connectMCP serves `reftrack mcp`'s tools (with the command's --api-key and --program) to an MCP client
// over in-memory transports, against the test's real server; the key comes from the CLI's stored
// credentials in c.dir unless apiKey is given.
func (c *cli) connectMCP(apiKey, program string) *mcp.ClientSession {
	c.t.Helper()
	ctx := context.Background()
	a := c.app(strings.NewReader(""), io.Discard, io.Discard)
	a.configDir = c.dir
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := a.mcpServer(apiKey, program).Connect(ctx, serverT, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// callTool calls a tool that must answer without a protocol error; it returns the result, its text and
// its structured content decoded into a T.
func callTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string, T) {
	t.Helper()
	var out T
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text + "\n")
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	return res, text.String(), out
}

// mustTool calls a tool that must succeed.
func mustTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, T) {
	t.Helper()
	res, text, out := callTool[T](t, cs, name, args)
	if res.IsError || res.StructuredContent == nil {
		t.Fatalf("%s(%v) failed: %s", name, args, text)
	}
	return text, out
}

// failTool calls a tool that must answer a tool error (isError, not a protocol error) saying want.
func failTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, want ...string) {
	t.Helper()
	res, text, _ := callTool[map[string]any](t, cs, name, args)
	if !res.IsError {
		t.Errorf("%s(%v) succeeded: %s", name, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s(%v) answered %q, missing %q", name, args, text, w)
		}
	}
}

// An agent lists the tools and calls each against a real server with the program the CLI stored: test
// events land as is_test unless live is asked, the answers say what was recorded, and the API's refusals
// come back as tool errors with the API's message.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	s := c.env.Seed(seed.Options{})
	id := strconv.FormatInt(s.ProgramID, 10)
	// As `reftrack use ID --key KEY` leaves them.
	if err := (store{dir: c.dir}).save(credentials{Server: c.env.URL, Program: id, Keys: map[string]string{id: s.APIKey}}); err != nil {
		t.Fatal(err)
	}
	cs := c.connectMCP("", "")
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if len(tool.Description) < 80 || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s: description %q, input schema %v, output schema %v", tool.Name, tool.Description, tool.InputSchema, tool.OutputSchema)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		switch tool.Name {
		case "track_sale":
			if !strings.Contains(string(schema), `"required":["amount_cents"]`) || !strings.Contains(string(schema), `ISO 4217 code the program lists`) || strings.Contains(string(schema), `"enum":["USD"`) {
				t.Errorf("track_sale's input schema: %s", schema)
			}
		case "integration_plan":
			if !strings.Contains(string(schema), `"enum":["nextjs","express","django","rails","go","generic"]`) {
				t.Errorf("integration_plan's input schema: %s", schema)
			}
		}
	}
	slices.Sort(names)
	if want := []string{"integration_plan", "readiness", "run_verification", "track_click", "track_lead", "track_refund", "track_sale"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	text, ready := mustTool[readinessOut](t, cs, "readiness", nil)
	if ready.ProgramID != s.ProgramID || ready.State == "" || len(ready.Gates) != 5 || len(ready.Checks) == 0 ||
		!strings.Contains(text, "Program "+id+": "+ready.State) {
		t.Errorf("readiness: %+v\n%s", ready, text)
	}

	// click → lead → sale → refund, in test mode.
	text, click := mustTool[clickOut](t, cs, "track_click", map[string]any{"affiliate_url": s.AffiliateURL})
	if click.ClickID == "" || !click.Test || click.ProgramID != s.ProgramID || click.ShortLink != s.ShortLink || !strings.Contains(text, "Test click recorded") {
		t.Errorf("track_click: %+v\n%s", click, text)
	}
	if n := c.env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND program_id = $2 AND is_test`, click.ClickID, s.ProgramID); n != 1 {
		t.Errorf("test clicks recorded: %d", n)
	}
	text, lead := mustTool[leadOut](t, cs, "track_lead", map[string]any{"click_id": click.ClickID, "customer_key": "mcp_user_1", "email": "ada@example.com"})
	if lead.LeadID == 0 || lead.Attribution.Status != "attributed" || lead.Attribution.PartnerID != s.PartnerID || lead.Provisional || !lead.Test {
		t.Errorf("track_lead: %+v\n%s", lead, text)
	}
	if n := c.env.Count(`SELECT count(*) FROM leads WHERE id = $1 AND customer_key = 'mcp_user_1' AND is_test AND source = 'server' AND status = 'settled'`, lead.LeadID); n != 1 {
		t.Errorf("test leads recorded: %d", n)
	}
	text, sale := mustTool[saleOut](t, cs, "track_sale", map[string]any{"customer_key": "mcp_user_1", "amount_cents": 4900, "currency": "USD"})
	if !sale.Recorded || !sale.Test || !strings.HasPrefix(sale.TransactionID, "test_txn_") || sale.Attribution.PartnerID != s.PartnerID ||
		sale.Commission == nil || sale.Commission.AmountCents <= 0 || !strings.Contains(text, "Test sale "+strconv.FormatInt(sale.SaleID, 10)+" recorded") {
		t.Errorf("track_sale: %+v\n%s", sale, text)
	}
	if n := c.env.Count(`SELECT count(*) FROM sales WHERE id = $1 AND processor_event_id = $2 AND amount_cents = 4900 AND is_test`, sale.SaleID, sale.TransactionID); n != 1 {
		t.Errorf("test sales recorded: %d", n)
	}
	text, refund := mustTool[refundOut](t, cs, "track_refund", map[string]any{"transaction_id": sale.TransactionID})
	if refund.SaleID != sale.SaleID || refund.Status != "reversed" || refund.RefundedAmountCents != 4900 || refund.Commission == nil {
		t.Errorf("track_refund: %+v\n%s", refund, text)
	}
	if n := c.env.Count(`SELECT count(*) FROM refunds WHERE sale_id = $1 AND amount_cents = 4900`, sale.SaleID); n != 1 {
		t.Errorf("refunds recorded: %d", n)
	}
	// A sale this server did not record as a test sale is refunded only when live is asked; the API's
	// refusal is a tool error with its message.
	before := c.sent.count("POST /api/v1/track/refund")
	failTool(t, cs, "track_refund", map[string]any{"transaction_id": "in_live_1"}, "is not a test sale this server recorded", "Next: ")
	if c.sent.count("POST /api/v1/track/refund") != before {
		t.Error("a refused refund was sent")
	}
	failTool(t, cs, "track_refund", map[string]any{"transaction_id": "in_live_1", "live": true}, "Error: Sale not found for transaction_id")
	failTool(t, cs, "track_sale", map[string]any{"customer_key": "mcp_user_1", "amount_cents": 100, "currency": "GBP"}, "Error: currency GBP is not supported")
	failTool(t, cs, "track_lead", map[string]any{"email": "nobody@example.com"}, "Error: ")

	// Live, when asked: the events count.
	_, liveClick := mustTool[clickOut](t, cs, "track_click", map[string]any{"affiliate_url": s.AffiliateURL, "live": true})
	_, liveLead := mustTool[leadOut](t, cs, "track_lead", map[string]any{"click_id": liveClick.ClickID, "customer_key": "mcp_live_1", "live": true})
	if liveLead.Test || c.env.Count(`SELECT count(*) FROM leads WHERE id = $1 AND NOT is_test`, liveLead.LeadID) != 1 ||
		c.env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND NOT is_test`, liveClick.ClickID) != 1 {
		t.Errorf("live click and lead: %+v %+v", liveClick, liveLead)
	}

	text, chain := mustTool[verifyOut](t, cs, "run_verification", nil)
	if !chain.Attributed || chain.Verdict != (verdictOut{"attributed", "attributed", "attributed"}) || chain.ShortCode == "" ||
		chain.DashboardURL != c.env.URL+"/dashboard" || !strings.Contains(text, "Verdict: attributed.") {
		t.Errorf("run_verification: %+v\n%s", chain, text)
	}
	if n := c.env.Count(`SELECT count(*) FROM synthetic_chains WHERE program_id = $1`, s.ProgramID); n != 1 {
		t.Errorf("chains recorded: %d", n)
	}
	// The chain's test link, by its short link: the URL is the program's domain.
	_, click = mustTool[clickOut](t, cs, "track_click", map[string]any{"short_link": chain.ShortCode})
	if click.ShortLink != chain.ShortCode || !strings.HasPrefix(click.AffiliateURL, "https://shop.example.com/?aff=") {
		t.Errorf("track_click by short link: %+v", click)
	}
	failTool(t, cs, "track_click", nil, "Error: say which referral link")
	failTool(t, cs, "track_click", map[string]any{"affiliate_url": "https://shop.example.com/?aff=no-such-link"}, "Error: ")

	// No test event counts as real: the three real events are the live click and lead.
	_, ready = mustTool[readinessOut](t, cs, "readiness", nil)
	if ready.Counts24h != (eventCounts{Clicks: 1, Leads: 1}) {
		t.Errorf("readiness counts %+v, want the live click and lead only", ready.Counts24h)
	}

	// A key the server does not know: every tool answers the API's refusal as a tool error.
	bad := c.connectMCP("rt_not_a_key", "")
	failTool(t, bad, "readiness", nil, "Error: Invalid API token.", "Next: the program's API key is not valid")
	failTool(t, bad, "track_sale", map[string]any{"customer_key": "x", "amount_cents": 100}, "Error: Invalid API token")
	failTool(t, bad, "run_verification", nil, "Error: Invalid API token")
	// No key at all: the CLI's next step.
	none := newCLI(t)
	failTool(t, none.connectMCP("", ""), "readiness", nil, "Error: no API key for a program", "reftrack use ID --key KEY")
}

// integration_plan answers each framework's plan with the program's id and the server's URL, and uses
// only documented routes, tracker calls and SDK names.
func TestMCPIntegrationPlans(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	s := c.env.Seed(seed.Options{})
	id := strconv.FormatInt(s.ProgramID, 10)
	if err := (store{dir: c.dir}).save(credentials{Server: c.env.URL}); err != nil { // the server `reftrack login` keeps
		t.Fatal(err)
	}
	cs := c.connectMCP(s.APIKey, "")

	spec := specPaths(t)
	docs := readFiles(t, "../../docs/integration.md", "../../sdk/README.md", "../../sdk/typescript/README.md")
	// The calls each plan makes: the routes, or an SDK's (the Go SDK's; the TypeScript SDK's for Node).
	calls := map[string][]string{"go": {"rt.TrackLead(", "rt.TrackSale(", "rt.TrackRefund("},
		"nextjs":  {"reftrack.trackLead(", "reftrack.trackSale(", "reftrack.trackRefund("},
		"express": {"reftrack.trackLead(", "reftrack.trackSale(", "reftrack.trackRefund("}}
	routes := []string{"/api/v1/track/lead", "/api/v1/track/sale", "/api/v1/track/refund"}
	for _, fw := range planFrameworks {
		text, plan := mustTool[planOut](t, cs, "integration_plan", map[string]any{"framework": fw})
		if plan.ProgramID != id || plan.BaseURL != c.env.URL || plan.Plan+"\n" != text {
			t.Errorf("%s: %s %s, text and plan differ: %v", fw, plan.ProgramID, plan.BaseURL, plan.Plan+"\n" != text)
		}
		for _, want := range []string{`<script defer src="` + c.env.URL + `/js/svc.js" data-svc-program-id="` + id + `"></script>`,
			"svc.getClickId()", "customer_key", "transaction_id", "duplicate_transaction", "run_verification", "test_mode"} {
			if !strings.Contains(plan.Plan, want) {
				t.Errorf("%s: the plan lacks %q", fw, want)
			}
		}
		want := calls[fw]
		if want == nil {
			want = routes
		}
		for _, call := range want {
			if !strings.Contains(plan.Plan, call) {
				t.Errorf("%s: the plan lacks %s", fw, call)
			}
		}
		for _, path := range regexp.MustCompile(`/api/v1/[A-Za-z0-9_/{}.-]*[A-Za-z0-9_}]`).FindAllString(plan.Plan, -1) {
			if !slices.ContainsFunc(spec, func(re *regexp.Regexp) bool { return re.MatchString(path) }) {
				t.Errorf("%s: %s is not a route of the spec", fw, path)
			}
		}
		// The tracker's calls, the Go SDK's names, the TypeScript SDK's calls and the fields they take.
		names := regexp.MustCompile(`\b(?:svc|sdk)\.[A-Za-z]+|\breftrack\.track[A-Za-z]+|\bnew Reftrack\b|@reftrack/sdk`).FindAllString(plan.Plan, -1)
		if strings.Contains(plan.Plan, "@reftrack/sdk") {
			names = append(names, "customerExternalId", "clickId", "invoiceId", "amount:", "alreadyRecorded", "testMode")
		}
		for _, name := range names {
			if !strings.Contains(docs, name) {
				t.Errorf("%s: %s is not in docs/integration.md or the SDKs' READMEs", fw, name)
			}
		}
	}
	failTool(t, cs, "integration_plan", map[string]any{"framework": "cobol"}, "validating")

	// Without a key: placeholders, and why.
	_, plan := mustTool[planOut](t, newCLI(t).connectMCP("", ""), "integration_plan", map[string]any{"framework": "generic"})
	if plan.ProgramID != "PROGRAM_ID" || !strings.Contains(plan.Plan, "No API key is configured") {
		t.Errorf("plan without a key: %+v", plan)
	}
}

// `reftrack mcp` itself: the command speaks MCP on its standard input and output, with --api-key.
func TestMCPCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	s := c.env.Seed(seed.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := c.app(inR, outW, io.Discard)
	cmd := a.root()
	cmd.SetArgs([]string{"--server", c.env.URL, "--config-dir", c.dir, "mcp", "--api-key", s.APIKey})
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(context.Background())
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs.InitializeResult().ServerInfo.Name != "reftrack" || !strings.Contains(cs.InitializeResult().Instructions, "integration_plan") {
		t.Errorf("initialize: %+v", cs.InitializeResult())
	}
	if _, ready := mustTool[readinessOut](t, cs, "readiness", nil); ready.ProgramID != s.ProgramID {
		t.Errorf("readiness through the command: %+v", ready)
	}
	cs.Close() // the agent goes away: the command ends without an error
	if err := <-done; err != nil {
		t.Errorf("reftrack mcp: %v", err)
	}
}

// specPaths are the spec's paths as patterns ({programId} matches a segment).
func specPaths(t *testing.T) []*regexp.Regexp {
	t.Helper()
	var doc struct {
		Paths map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal([]byte(readFiles(t, "../../openapi/openapi.yaml")), &doc); err != nil {
		t.Fatal(err)
	}
	var out []*regexp.Regexp
	for p := range doc.Paths {
		out = append(out, regexp.MustCompile(`^`+regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(p), `[^/]+`)+`$`))
	}
	return out
}

func readFiles(t *testing.T, paths ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
	}
	return b.String()
}
