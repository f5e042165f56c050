package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reftrack/reftrack/gen/client"
)

// The handlers of `reftrack mcp`'s tools (mcp.go), one section each, with their input and output types:
// the SDK derives each tool's input and output schemas from them. The track_* tools are in mcp_track.go.

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
			p.Note = "The program's id could not be read (" + err.Error() + "): replace PROGRAM_ID."
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
