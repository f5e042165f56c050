package cli

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/synthetic"
)

// CliStatus answers the key's program status.
func (h *CLI) CliStatus(ctx context.Context, req gen.CliStatusRequestObject) (gen.CliStatusResponseObject, error) {
	programID, err := programOfKey(ctx, req.Params.ProgramId)
	if err != nil {
		return nil, err
	}
	p, err := programs.Get(ctx, h.DB, programID)
	if err != nil {
		return nil, err
	}
	out := gen.CliStatusResponse{Warnings: wire.Warnings(ctx)}
	d := &out.Data
	d.ProgramId, d.Name, d.Domain = p.ID, p.Name, p.Domain
	dns, err := programs.CheckDNS(ctx, h.DB, h.DNS, programID, h.Now())
	if err != nil {
		return nil, err
	}
	d.DnsVerified = dns.Verified
	d.DnsRecord.Name, d.DnsRecord.Type, d.DnsRecord.Value = dns.Record.Name, gen.TXT, dns.Record.Value
	counts, err := readiness.RecentActivity(ctx, h.DB, programID, h.Now().Add(-24*time.Hour))
	if err != nil {
		return nil, err
	}
	d.RecentEvents.Clicks24h, d.RecentEvents.Leads24h, d.RecentEvents.Sales24h = counts.Clicks, counts.Leads, counts.Sales
	d.ActivePartners, d.PendingCommissions = counts.ActivePartners, counts.PendingCommissions
	c, err := payments.Get(ctx, h.DB, programID, payments.ProviderStripe)
	switch {
	case err == nil:
		d.StripeConnected, d.StripeChargesEnabled = true, c.ChargesEnabled
	case !errors.Is(err, payments.ErrNotConnected):
		return nil, err
	}
	return gen.CliStatus200JSONResponse{Body: out}, nil
}

// CliTestEvent records a test event or runs the synthetic chain.
func (h *CLI) CliTestEvent(ctx context.Context, req gen.CliTestEventRequestObject) (gen.CliTestEventResponseObject, error) {
	k, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	body, err := jsonbody.Parse((*json.RawMessage)(req.Body))
	if err != nil {
		return nil, err
	}
	if id, present, ok := body.ID("program_id"); present && (!ok || id != k.ProgramID) {
		return nil, auth.ErrProgramMismatch
	}
	runner := &synthetic.Runner{DB: h.DB, Log: h.Log, Click: h.Clicks.Record, Now: h.Now}
	out := gen.CliTestEventResponse{Warnings: wire.Warnings(ctx)}
	if t, _, _ := body.Str("type"); t == "chain" {
		ch, err := runner.RunChain(ctx, k.ProgramID)
		if err != nil {
			return nil, err
		}
		res := gen.CliChainResult{Type: gen.Chain, ShortCode: ch.ShortCode, CustomerKey: ch.CustomerKey,
			Verdict:    gen.ChainVerdict{Click: gen.StepVerdict(ch.Click), Lead: gen.StepVerdict(ch.Lead), Sale: gen.StepVerdict(ch.Sale)},
			Attributed: ch.Attributed()}
		if err := out.Data.FromCliChainResult(res); err != nil {
			return nil, err
		}
		h.Metrics.Event("synthetic_chain", true)
		return gen.CliTestEvent200JSONResponse{Body: out}, nil
	}
	et, _, _ := body.Str("event_type")
	if et != "click" && et != "lead" && et != "sale" {
		shown := et
		if raw, present := body["event_type"]; present && et == "" {
			shown = string(raw)
		}
		return nil, invalidEventType(shown)
	}
	one, err := runner.One(ctx, k.ProgramID, et)
	if err != nil {
		return nil, err
	}
	res := gen.CliTestEventResult{EventType: gen.CliTestEventResultEventType(one.EventType), EventId: one.EventID,
		Received: true, Attributed: one.Attributed, Message: one.Message}
	if err := out.Data.FromCliTestEventResult(res); err != nil {
		return nil, err
	}
	return gen.CliTestEvent200JSONResponse{Body: out}, nil
}

// CliStripeConnect is retired: the connection is a program setting now.
func (h *CLI) CliStripeConnect(context.Context, gen.CliStripeConnectRequestObject) (gen.CliStripeConnectResponseObject, error) {
	return nil, apierr.New(apierr.KindGone, "This endpoint is retired: connect the payment processor from the dashboard program settings (PUT /api/v1/programs/{programId}/payment-processor).")
}
