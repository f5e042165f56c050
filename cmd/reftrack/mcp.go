package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

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
			"run `reftrack mcp`; see the README's \"reftrack mcp\" section.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if a.interactive {
				fmt.Fprintln(a.errOut, "reftrack mcp speaks the Model Context Protocol on standard input and output: "+
					"configure your agent to run it (see the README). Ctrl-C ends it.")
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
		map[string][]any{"currency": {"USD", "EUR", "VND"}}, t.trackSale)
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

// readiness

type readinessIn struct{}

type readinessGate struct {
	Status     string `json:"status" jsonschema:"pass, fail or unknown"`
	NextAction string `json:"next_action,omitempty" jsonschema:"what to do next, when the gate does not pass"`
}

type readinessCheck struct {
	ID     string `json:"id"`
	Status string `json:"status" jsonschema:"pass, fail or unknown (an optional check not done; it never blocks)"`
	Hint   string `json:"hint"`
}

type eventCounts struct {
	Clicks int `json:"clicks"`
	Leads  int `json:"leads"`
	Sales  int `json:"sales"`
}

type readinessOut struct {
	ProgramID           int64                    `json:"program_id"`
	State               string                   `json:"state" jsonschema:"draft, configuring, integration_verified, live_verified or ready"`
	Blocker             string                   `json:"blocker,omitempty" jsonschema:"the first gate that does not pass, if any"`
	IntegrationVerified bool                     `json:"integration_verified"`
	Gates               map[string]readinessGate `json:"gates" jsonschema:"profile, economics, payout, tracking and live"`
	Checks              []readinessCheck         `json:"checks"`
	Counts24h           eventCounts              `json:"counts_24h" jsonschema:"real (not test) events of the last 24 hours"`
	Warnings            []string                 `json:"warnings,omitempty"`
}

func (t *mcpTools) readiness(ctx context.Context, _ *mcp.CallToolRequest, _ readinessIn) (*mcp.CallToolResult, readinessOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, readinessOut{}, toolError(err)
	}
	r, err := call[client.Readiness](t.a, to, func(api *client.Client) (*http.Response, error) { return api.GetReadiness(ctx) })
	if err != nil {
		return nil, readinessOut{}, toolError(err)
	}
	out := readinessOut{ProgramID: r.ProgramId, State: string(r.State), IntegrationVerified: r.IntegrationVerified,
		Gates:     map[string]readinessGate{},
		Checks:    []readinessCheck{},
		Counts24h: eventCounts{Clicks: r.Counts24h.Clicks, Leads: r.Counts24h.Leads, Sales: r.Counts24h.Sales},
		Warnings:  warnings(r.Warnings)}
	if r.Blocker != nil {
		out.Blocker = string(*r.Blocker)
	}
	var summary strings.Builder
	fmt.Fprintf(&summary, "Program %d: %s", out.ProgramID, out.State)
	if out.Blocker != "" {
		fmt.Fprintf(&summary, " (blocked at %s)", out.Blocker)
	}
	summary.WriteString("\nGates:")
	for _, g := range []struct {
		name string
		gate client.ReadinessGate
	}{{"profile", r.Gates.Profile}, {"economics", r.Gates.Economics}, {"payout", r.Gates.Payout},
		{"tracking", r.Gates.Tracking}, {"live", r.Gates.Live}} {
		rg := readinessGate{Status: string(g.gate.Status)}
		if g.gate.NextAction != nil {
			rg.NextAction = *g.gate.NextAction
		}
		out.Gates[g.name] = rg
		fmt.Fprintf(&summary, "\n  %-9s %s", g.name, rg.Status)
		if rg.NextAction != "" {
			fmt.Fprintf(&summary, ": %s", rg.NextAction)
		}
	}
	if r.Checks != nil {
		summary.WriteString("\nChecks:")
		for _, c := range *r.Checks {
			out.Checks = append(out.Checks, readinessCheck{ID: string(c.Id), Status: string(c.Status), Hint: c.Hint})
			fmt.Fprintf(&summary, "\n  %-22s %-7s %s", c.Id, c.Status, c.Hint)
		}
	}
	fmt.Fprintf(&summary, "\nLast 24 h (real events): %d clicks, %d leads, %d sales", out.Counts24h.Clicks, out.Counts24h.Leads, out.Counts24h.Sales)
	return result(withWarnings(summary.String(), out.Warnings), out), out, nil
}

// track_click

type clickIn struct {
	AffiliateURL string `json:"affiliate_url,omitempty" jsonschema:"the landing page URL with the aff query parameter, e.g. https://shop.example.com/?aff=SHORT_LINK"`
	ShortLink    string `json:"short_link,omitempty" jsonschema:"a referral link's short link (its aff value), when affiliate_url is not given"`
	Live         bool   `json:"live,omitempty" jsonschema:"record a real click instead of a test one; only when the user asks"`
}

type clickOut struct {
	ClickID          string   `json:"click_id" jsonschema:"pass it to track_lead (the tracker keeps it in the svc_click_id cookie)"`
	ShortLink        string   `json:"short_link,omitempty"`
	ProgramID        int64    `json:"program_id,omitempty" jsonschema:"the link's program (test clicks)"`
	CookieWindowDays int      `json:"cookie_window_days"`
	Test             bool     `json:"test"`
	AffiliateURL     string   `json:"affiliate_url"`
	Warnings         []string `json:"warnings,omitempty"`
}

func (t *mcpTools) trackClick(ctx context.Context, _ *mcp.CallToolRequest, in clickIn) (*mcp.CallToolResult, clickOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, clickOut{}, toolError(err)
	}
	affURL := in.AffiliateURL
	if affURL == "" {
		if in.ShortLink == "" {
			return nil, clickOut{}, toolError(&userError{Message: "say which referral link: affiliate_url (a landing URL with ?aff=SHORT_LINK) or short_link",
				Next: "run_verification's answer names the program's test link (short_code); `reftrack links list` lists the program's links."})
		}
		st, err := call[client.CliStatusResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
			return api.CliStatus(ctx, &client.CliStatusParams{})
		})
		if err != nil {
			return nil, clickOut{}, toolError(err)
		}
		affURL = (&url.URL{Scheme: "https", Host: st.Data.Domain, Path: "/", RawQuery: "aff=" + url.QueryEscape(in.ShortLink)}).String()
	}
	// A test click carries the key (test mode may authenticate with it); a live one is the browser's, keyless.
	if in.Live {
		to.token = ""
	}
	r, err := call[client.ClickResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackClick(ctx, client.ClickRequest{AffiliateUrl: affURL, AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, clickOut{}, toolError(err)
	}
	out := clickOut{ClickID: r.ClickId, CookieWindowDays: r.CookieWindowDays, Test: !in.Live, AffiliateURL: affURL, Warnings: warnings(r.Warnings)}
	if r.PartnerCode != nil {
		out.ShortLink = *r.PartnerCode
	}
	if r.Data != nil && r.Data.ProgramId != nil {
		out.ProgramID = *r.Data.ProgramId
	}
	summary := fmt.Sprintf("%s click recorded on link %s: click_id %s (the cookie would last %d days).", kind(in.Live), out.ShortLink, out.ClickID, out.CookieWindowDays)
	if out.ProgramID != 0 {
		summary += fmt.Sprintf(" Program %d.", out.ProgramID)
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_lead

type leadIn struct {
	ClickID     string `json:"click_id,omitempty" jsonschema:"the click id (track_click's answer, or the svc_click_id cookie)"`
	CustomerKey string `json:"customer_key,omitempty" jsonschema:"the brand's stable id for the customer; the same value at sale time"`
	Email       string `json:"email,omitempty" jsonschema:"the customer's email (improves attribution)"`
	Live        bool   `json:"live,omitempty" jsonschema:"record a real lead instead of a test one; only when the user asks"`
}

type attributionOut struct {
	Status    string `json:"status" jsonschema:"attributed, provisional or unattributed"`
	PartnerID int64  `json:"partner_id,omitempty"`
	ClickID   string `json:"click_id,omitempty"`
}

type leadOut struct {
	LeadID      int64          `json:"lead_id,omitempty"`
	CustomerKey string         `json:"customer_key,omitempty"`
	Attribution attributionOut `json:"attribution"`
	Provisional bool           `json:"provisional"`
	Test        bool           `json:"test"`
	Message     string         `json:"message"`
	Warnings    []string       `json:"warnings,omitempty"`
}

func attribution(a client.Attribution) attributionOut {
	out := attributionOut{Status: string(a.Status)}
	if a.PartnerId != nil {
		out.PartnerID = *a.PartnerId
	}
	if a.ClickId != nil {
		out.ClickID = *a.ClickId
	}
	return out
}

func (a attributionOut) String() string {
	if a.PartnerID != 0 {
		return fmt.Sprintf("%s to partner %d", a.Status, a.PartnerID)
	}
	return a.Status
}

func (t *mcpTools) trackLead(ctx context.Context, _ *mcp.CallToolRequest, in leadIn) (*mcp.CallToolResult, leadOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, leadOut{}, toolError(err)
	}
	r, err := call[client.LeadResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackLead(ctx, client.LeadRequest{ClickId: opt(in.ClickID), CustomerKey: opt(in.CustomerKey), Email: opt(in.Email),
			AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, leadOut{}, toolError(err)
	}
	out := leadOut{Attribution: attribution(r.Attribution), Provisional: r.Provisional != nil && bool(*r.Provisional), Test: !in.Live,
		Message: r.Message, Warnings: warnings(r.Warnings)}
	if r.LeadId != nil {
		out.LeadID = *r.LeadId
	}
	if r.CustomerKey != nil {
		out.CustomerKey = *r.CustomerKey
	}
	summary := fmt.Sprintf("%s lead %d recorded for customer %s: %s. %s", kind(in.Live), out.LeadID, out.CustomerKey, out.Attribution, out.Message)
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_sale

type saleIn struct {
	AmountCents   int64  `json:"amount_cents" jsonschema:"the amount in the currency's smallest unit (4900 = 49.00 USD), a positive integer"`
	Currency      string `json:"currency,omitempty" jsonschema:"USD (default), EUR or VND"`
	CustomerKey   string `json:"customer_key,omitempty" jsonschema:"the customer_key given with the lead"`
	ClickID       string `json:"click_id,omitempty" jsonschema:"the click id, when there is no customer_key"`
	TransactionID string `json:"transaction_id,omitempty" jsonschema:"the idempotency key: the processor's invoice or payment id, unique within the program; optional for a test sale"`
	Live          bool   `json:"live,omitempty" jsonschema:"record a real sale (it pays the partner) instead of a test one; only when the user asks"`
}

type commissionOut struct {
	ID          int64  `json:"id"`
	AmountCents int64  `json:"amount_cents"`
	Currency    string `json:"currency"`
	Status      string `json:"status"`
}

type saleOut struct {
	Recorded      bool           `json:"recorded" jsonschema:"false when the click was older than the attribution window: nothing recorded"`
	SaleID        int64          `json:"sale_id,omitempty"`
	TransactionID string         `json:"transaction_id,omitempty" jsonschema:"what track_refund takes"`
	AmountCents   int64          `json:"amount_cents,omitempty"`
	Currency      string         `json:"currency,omitempty"`
	Test          bool           `json:"test"`
	Attribution   attributionOut `json:"attribution"`
	Commission    *commissionOut `json:"commission,omitempty" jsonschema:"the partner's commission, absent when the sale pays none"`
	Message       string         `json:"message"`
	Warnings      []string       `json:"warnings,omitempty"`
}

// saleAnswer reads both 200 answers of the sale route (recorded, or the attribution window expired).
type saleAnswer struct {
	Message       string                 `json:"message"`
	SaleID        *int64                 `json:"sale_id"`
	TransactionID string                 `json:"transaction_id"`
	AmountCents   int64                  `json:"amount_cents"`
	Currency      string                 `json:"currency"`
	IsTest        bool                   `json:"is_test"`
	Attribution   *client.Attribution    `json:"attribution"`
	Commission    *client.SaleCommission `json:"commission"`
	Reason        string                 `json:"reason"`
	Warnings      *[]client.Warning      `json:"warnings"`
}

func (t *mcpTools) trackSale(ctx context.Context, _ *mcp.CallToolRequest, in saleIn) (*mcp.CallToolResult, saleOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, saleOut{}, toolError(err)
	}
	r, err := call[saleAnswer](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.TrackSale(ctx, client.SaleRequest{AmountCents: in.AmountCents, Currency: opt(in.Currency), CustomerKey: opt(in.CustomerKey),
			ClickId: opt(in.ClickID), TransactionId: opt(in.TransactionID), AdditionalData: testData(in.Live)})
	})
	if err != nil {
		return nil, saleOut{}, toolError(err)
	}
	out := saleOut{Recorded: r.SaleID != nil, TransactionID: r.TransactionID, AmountCents: r.AmountCents, Currency: r.Currency,
		Test: !in.Live, Attribution: attributionOut{Status: "unattributed"}, Message: r.Message, Warnings: warnings(r.Warnings)}
	if r.Attribution != nil {
		out.Attribution = attribution(*r.Attribution)
	}
	if !out.Recorded {
		summary := "Nothing recorded: " + r.Message
		return result(withWarnings(summary, out.Warnings), out), out, nil
	}
	out.SaleID, out.Test = *r.SaleID, r.IsTest
	if out.Test {
		t.mu.Lock()
		t.testSales[out.TransactionID] = true
		t.mu.Unlock()
	}
	summary := fmt.Sprintf("%s sale %d recorded (transaction_id %s, %d %s in minor units): %s.", kind(!out.Test), out.SaleID,
		out.TransactionID, out.AmountCents, out.Currency, out.Attribution)
	if c := r.Commission; c != nil {
		out.Commission = &commissionOut{ID: c.Id, AmountCents: c.AmountCents, Currency: c.Currency, Status: string(c.Status)}
		summary += fmt.Sprintf(" Commission %d: %d %s, %s.", c.Id, c.AmountCents, c.Currency, c.Status)
	} else {
		summary += " No commission."
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// track_refund

type refundIn struct {
	TransactionID     string `json:"transaction_id" jsonschema:"the transaction_id of the sale (track_sale's answer)"`
	RefundAmountCents int64  `json:"refund_amount_cents,omitempty" jsonschema:"a partial refund, in the currency's smallest unit; default the whole remaining amount"`
	Reason            string `json:"reason,omitempty" jsonschema:"refund (default) or chargeback"`
	RefundReason      string `json:"refund_reason,omitempty" jsonschema:"free text"`
	Live              bool   `json:"live,omitempty" jsonschema:"refund a sale this server did not record as a test sale (a real one: its partner's commission changes); only when the user asks"`
}

type refundOut struct {
	SaleID              int64          `json:"sale_id"`
	TransactionID       string         `json:"transaction_id"`
	Status              string         `json:"status" jsonschema:"reversed (fully refunded), refunded (partially), no_commission or skipped (already fully refunded)"`
	RefundedAmountCents int64          `json:"refunded_amount_cents" jsonschema:"total refunded so far"`
	Reason              string         `json:"reason"`
	Commission          *commissionOut `json:"commission,omitempty"`
	Message             string         `json:"message"`
	Warnings            []string       `json:"warnings,omitempty"`
}

func (t *mcpTools) trackRefund(ctx context.Context, _ *mcp.CallToolRequest, in refundIn) (*mcp.CallToolResult, refundOut, error) {
	t.mu.Lock()
	test := t.testSales[in.TransactionID]
	t.mu.Unlock()
	if !test && !in.Live {
		return nil, refundOut{}, toolError(&userError{
			Message: fmt.Sprintf("%q is not a test sale this server recorded, and refunding a real sale changes a partner's commission: nothing was sent", in.TransactionID),
			Next:    "refund a test sale recorded with track_sale, or pass live: true if the user asked to refund that sale."})
	}
	to, err := t.key()
	if err != nil {
		return nil, refundOut{}, toolError(err)
	}
	req := client.RefundRequest{TransactionId: in.TransactionID, RefundReason: opt(in.RefundReason)}
	if in.RefundAmountCents != 0 {
		req.RefundAmountCents = &in.RefundAmountCents
	}
	if in.Reason != "" {
		reason := client.RefundRequestReason(in.Reason)
		req.Reason = &reason
	}
	r, err := call[client.RefundResponse](t.a, to, func(api *client.Client) (*http.Response, error) { return api.TrackRefund(ctx, req) })
	if err != nil {
		return nil, refundOut{}, toolError(err)
	}
	out := refundOut{SaleID: r.SaleId, TransactionID: r.TransactionId, Status: string(r.Status), RefundedAmountCents: r.RefundedAmountCents,
		Reason: string(r.Reason), Message: r.Message, Warnings: warnings(r.Warnings)}
	summary := fmt.Sprintf("Refund of sale %d (transaction_id %s): %s, %d refunded in all. %s", out.SaleID, out.TransactionID, out.Status,
		out.RefundedAmountCents, out.Message)
	if c := r.Commission; c != nil {
		out.Commission = &commissionOut{ID: c.Id, AmountCents: c.AmountCents, Currency: c.Currency, Status: string(c.Status)}
		summary += fmt.Sprintf(" Commission %d is %s (%d of %d %s reversed).", c.Id, c.Status, c.ReversedAmountCents, c.AmountCents, c.Currency)
	}
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// run_verification

type verifyIn struct{}

type verdictOut struct {
	Click string `json:"click"`
	Lead  string `json:"lead"`
	Sale  string `json:"sale"`
}

type verifyOut struct {
	Attributed   bool       `json:"attributed" jsonschema:"every step reached the test partner: tracking works end to end"`
	Verdict      verdictOut `json:"verdict" jsonschema:"per step: attributed, unattributed, wrong_partner or pending"`
	ShortCode    string     `json:"short_code" jsonschema:"the program's test referral link (usable with track_click's short_link)"`
	CustomerKey  string     `json:"customer_key"`
	DashboardURL string     `json:"dashboard_url" jsonschema:"where to see the test events (tick Test data)"`
	Warnings     []string   `json:"warnings,omitempty"`
}

func (t *mcpTools) runVerification(ctx context.Context, _ *mcp.CallToolRequest, _ verifyIn) (*mcp.CallToolResult, verifyOut, error) {
	to, err := t.key()
	if err != nil {
		return nil, verifyOut{}, toolError(err)
	}
	chain := client.CliTestEventRequestType("chain")
	res, err := call[client.CliTestEventResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
		return api.CliTestEvent(ctx, client.CliTestEventRequest{Type: &chain})
	})
	if err != nil {
		return nil, verifyOut{}, toolError(err)
	}
	r, err := res.Data.AsCliChainResult()
	if err != nil {
		return nil, verifyOut{}, err
	}
	out := verifyOut{Attributed: r.Attributed, ShortCode: r.ShortCode, CustomerKey: r.CustomerKey, DashboardURL: to.server + "/dashboard",
		Verdict:  verdictOut{Click: string(r.Verdict.Click), Lead: string(r.Verdict.Lead), Sale: string(r.Verdict.Sale)},
		Warnings: warnings(res.Warnings)}
	summary := fmt.Sprintf("Synthetic chain on link %s (customer %s): click %s, lead %s, sale %s.\n", out.ShortCode, out.CustomerKey,
		out.Verdict.Click, out.Verdict.Lead, out.Verdict.Sale)
	if out.Attributed {
		summary += "Verdict: attributed. Every step reached the partner; tracking works end to end."
	} else {
		summary += "Verdict: not attributed end to end. Check the program's attribution window and referral links (readiness, `reftrack status`)."
	}
	summary += "\nSee it in the dashboard: " + out.DashboardURL + " (tick Test data)."
	return result(withWarnings(summary, out.Warnings), out), out, nil
}

// integration_plan

type planIn struct {
	Framework string `json:"framework" jsonschema:"the brand's stack: nextjs, express, django, rails, go, or generic (curl, any language)"`
}

type planOut struct {
	Framework string `json:"framework"`
	ProgramID string `json:"program_id" jsonschema:"the program's id, or PROGRAM_ID when no key is configured"`
	BaseURL   string `json:"base_url"`
	Plan      string `json:"plan" jsonschema:"the steps and code, in Markdown"`
}

func (t *mcpTools) integrationPlan(ctx context.Context, _ *mcp.CallToolRequest, in planIn) (*mcp.CallToolResult, planOut, error) {
	p := planParams{ProgramID: "PROGRAM_ID", Domain: "www.brand.com"}
	to, keyErr := t.key()
	if keyErr == nil {
		p.BaseURL = to.server
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		st, err := call[client.CliStatusResponse](t.a, to, func(api *client.Client) (*http.Response, error) {
			return api.CliStatus(ctx, &client.CliStatusParams{})
		})
		if err == nil {
			p.ProgramID, p.Domain = fmt.Sprint(st.Data.ProgramId), st.Data.Domain
		} else {
			p.Note = "The program's id could not be read (" + strings.TrimPrefix(toolError(err).Error(), "Error: ") + "): replace PROGRAM_ID."
		}
	} else {
		c, _ := t.a.store().load()
		p.BaseURL = t.a.serverURL(c)
		p.Note = "No API key is configured for this server (reftrack use ID --key KEY, or --api-key): replace PROGRAM_ID with the program's id."
	}
	plan, err := renderPlan(in.Framework, p)
	if err != nil {
		return nil, planOut{}, err
	}
	out := planOut{Framework: in.Framework, ProgramID: p.ProgramID, BaseURL: p.BaseURL, Plan: plan}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: plan}}}, out, nil
}
