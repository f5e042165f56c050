package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/reftrack/reftrack/gen/client"
)

// mcpCmd is `reftrack mcp`: the Model Context Protocol on standard input and output, so that a coding
// agent can integrate a program. Its tools call the same routes as the other commands, with the same
// key (--api-key, REFTRACK_API_KEY, or the stored key of --program or the current program), read again
// at each call, so `reftrack use` or `reftrack init` in another terminal takes effect at once.
func (a *app) mcpCmd() *cobra.Command {
	var apiKey, program string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol on stdio for coding agents (readiness, test events, verification, integration plans)",
		Long: "Serve the Model Context Protocol on standard input and output, for a coding agent (Claude Code, Cursor, …)\n" +
			"to integrate the program: tools readiness, track_click, track_lead, track_sale, track_refund (test events\n" +
			"unless live is set), run_verification (the synthetic chain) and integration_plan. Configure the agent to\n" +
			"run `reftrack mcp`; see docs/cli.md, \"reftrack mcp\".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.interactive {
				fmt.Fprintln(a.errOut, "reftrack mcp speaks the Model Context Protocol on standard input and output: "+
					"configure your agent to run it (see docs/cli.md). Ctrl-C ends it.")
			}
			s := a.mcpServer(apiKey, program)
			err := s.Run(cmd.Context(), &mcp.IOTransport{Reader: io.NopCloser(a.in), Writer: nopWriteCloser{a.out}})
			if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
				return nil // the agent went away, or Ctrl-C
			}
			return err
		},
	}
	cmd.Flags().StringVar(&apiKey, "api-key", "", "program API key (default REFTRACK_API_KEY or the current program's)")
	cmd.Flags().StringVar(&program, "program", "", "program id whose stored key to use (default the current program)")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpInstructions is what the server tells the agent at the start.
const mcpInstructions = `reftrack tracks referrals: a brand's site loads its tracker, the brand's backend reports leads and sales with the program's API key, and partners earn commissions.
Integrating a program: call integration_plan with the brand's framework for the code to add; readiness says what is still missing before go-live.
track_click, track_lead, track_sale and track_refund record TEST events (is_test: never paid, left out of real counts) unless live is true; set live only when the user asks for real events.
run_verification runs the synthetic click → lead → sale chain and gives a verdict per step (10 per program per hour).
The program is the one the reftrack CLI has stored (reftrack use / reftrack init), unless the server was started with --program or --api-key.`

// mcpTools are the tools' handlers, with what they share.
type mcpTools struct {
	a               *app
	apiKey, program string // the command's flags, resolved at each call

	mu        sync.Mutex
	testSales map[string]bool // transaction ids of the test sales this server recorded
}

// mcpServer is the MCP server with its tools.
func (a *app) mcpServer(apiKey, program string) *mcp.Server {
	t := &mcpTools{a: a, apiKey: apiKey, program: program, testSales: map[string]bool{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "reftrack", Title: "reftrack referral tracking", Version: "0.1.0"},
		&mcp.ServerOptions{Instructions: mcpInstructions})
	yes, no := true, false
	addTool(s, &mcp.Tool{Name: "readiness", Title: "Program readiness",
		Description: "What the program still needs before go-live: the state, the first failing gate (blocker), each gate " +
			"(profile, economics, payout, tracking, live) with its next action, each check with its hint, and the real events " +
			"of the last 24 hours. Test events never count here: run_verification shows whether tracking works.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}}, nil, t.readiness)
	addTool(s, &mcp.Tool{Name: "track_click", Title: "Record a click",
		Description: "Records a referral click, as the tracker does when a visitor lands through a referral link, and returns " +
			"its click_id (what the tracker keeps in the svc_click_id cookie; pass it to track_lead). A test click unless " +
			"live is true. Give affiliate_url (a landing URL with ?aff=SHORT_LINK) or short_link (then the URL is the " +
			"program's domain). run_verification's answer names the program's test link (short_code).",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no}},
		nil, t.trackClick)
	addTool(s, &mcp.Tool{Name: "track_lead", Title: "Record a lead (sign-up)",
		Description: "Reports a sign-up from the brand's backend with the program key (POST /api/v1/track/lead, server mode): " +
			"click_id (from track_click or the svc_click_id cookie), customer_key (the brand's stable customer id; send the " +
			"same with the sales) and email. A test lead unless live is true.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no}}, nil, t.trackLead)
	addTool(s, &mcp.Tool{Name: "track_sale", Title: "Record a sale",
		Description: "Reports a payment from the brand's backend (POST /api/v1/track/sale): amount_cents in the currency's " +
			"smallest unit, the customer_key given with the lead (or the click_id), and transaction_id, the idempotency key " +
			"(optional for a test sale: the service makes one up). Answers the sale, its attribution and the partner's " +
			"commission. A test sale (never paid) unless live is true.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no}},
		nil, t.trackSale) // currency: any the program lists, so no enum
	addTool(s, &mcp.Tool{Name: "track_refund", Title: "Refund a sale",
		Description: "Refunds a sale by its transaction_id (POST /api/v1/track/refund), in full or refund_amount_cents of it, " +
			"and reverses the partner's commission in proportion. Without live, only a test sale this server recorded " +
			"(track_sale) is refunded; live: true refunds any sale of the program, which changes a partner's real commission: " +
			"only when the user asks.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}},
		map[string][]any{"reason": {"refund", "chargeback"}}, t.trackRefund)
	addTool(s, &mcp.Tool{Name: "run_verification", Title: "Run the synthetic chain",
		Description: "Runs the synthetic click → lead → sale chain on the program's test partner and link, through the " +
			"service's real recording paths (what `reftrack test --chain` does), and answers a verdict per step " +
			"(attributed, unattributed, wrong_partner, pending). Test data only; at most 10 runs per program per hour.",
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no}}, nil, t.runVerification)
	addTool(s, &mcp.Tool{Name: "integration_plan", Title: "Integration plan",
		Description: "The code a brand adds to integrate the program, from reftrack's documentation, for a framework: the " +
			"tracker tag, forwarding the click id at sign-up, the server-side lead, sale and refund calls, and how to " +
			"verify. Filled in with this program's id and the server's URL when a key is configured.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no}},
		map[string][]any{"framework": anys(planFrameworks)}, t.integrationPlan)
	return s
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// addTool adds a tool whose input schema is inferred from In (descriptions from jsonschema tags), with
// enum values for the properties enums names.
func addTool[In, Out any](s *mcp.Server, tool *mcp.Tool, enums map[string][]any, h mcp.ToolHandlerFor[In, Out]) {
	in, err := jsonschema.ForType(reflect.TypeFor[In](), nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", tool.Name, err)) // a programming error, met by every test
	}
	for prop, values := range enums {
		p, ok := in.Properties[prop]
		if !ok {
			panic(fmt.Sprintf("tool %s: no property %s", tool.Name, prop))
		}
		p.Enum = values
	}
	tool.InputSchema = in
	mcp.AddTool(s, tool, h)
}

// key is the endpoint the program-key routes take, found as the other commands find it.
func (t *mcpTools) key() (endpoint, error) { return t.a.programKey(t.apiKey, t.program) }

// toolError is a failure as the agent reads it: the API's message (or the CLI's), the request id and the
// next step. It becomes a tool result with isError, never a protocol error.
func toolError(err error) error {
	var u *userError
	if errors.As(err, &u) {
		return errors.New(u.Render())
	}
	return err
}

// result is a tool's text: a summary for the agent, then the structured output as JSON (for clients
// that do not read structuredContent).
func result(summary string, out any) *mcp.CallToolResult {
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte("{}")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}, &mcp.TextContent{Text: string(b)}}}
}

// warnings are the answer's warnings (the key is marked for rotation) as sentences.
func warnings(ws *[]client.Warning) []string {
	if ws == nil {
		return nil
	}
	var out []string
	for _, w := range *ws {
		out = append(out, strings.TrimSpace(w.Message+" "+w.Hint))
	}
	return out
}

func withWarnings(summary string, ws []string) string {
	for _, w := range ws {
		summary += "\nWarning: " + w
	}
	return summary
}

// testData is additional_data for a test event (nil for a live one).
func testData(live bool) *client.AdditionalData {
	if live {
		return nil
	}
	yes := true
	return &client.AdditionalData{TestMode: &yes}
}

func kind(live bool) string {
	if live {
		return "Live"
	}
	return "Test"
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
