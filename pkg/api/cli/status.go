package cli

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/synthetic"
	"github.com/reftrack/reftrack/pkg/testevent"
)

// CliStatus answers the key's program status.
func (h *CLI) CliStatus(ctx context.Context, req gen.CliStatusRequestObject) (gen.CliStatusResponseObject, error) {
	programID, err := programOfKey(ctx, req.Params.ProgramId)
	if err != nil {
		return nil, err
	}
	st, err := readiness.ReadStatus(ctx, h.DB, h.DNS, programID, h.Now())
	if err != nil {
		return nil, err
	}
	out := gen.CliStatusResponse{Warnings: wire.Warnings(ctx)}
	d := &out.Data
	d.ProgramId, d.Name, d.Domain = st.Program.ID, st.Program.Name, st.Program.Domain
	d.DnsVerified = st.DNS.Verified
	d.DnsRecord.Name, d.DnsRecord.Type, d.DnsRecord.Value = st.DNS.Record.Name, gen.TXT, st.DNS.Record.Value
	a := st.Activity
	d.RecentEvents.Clicks24h, d.RecentEvents.Leads24h, d.RecentEvents.Sales24h = a.Clicks, a.Leads, a.Sales
	d.ActivePartners, d.PendingCommissions = a.ActivePartners, a.PendingCommissions
	if c := st.Stripe; c != nil {
		d.StripeConnected, d.StripeChargesEnabled = true, c.ChargesEnabled
	}
	return gen.CliStatus200JSONResponse{Body: out}, nil
}

// CliTestEvent records a test event or runs the synthetic chain.
func (h *CLI) CliTestEvent(ctx context.Context, req gen.CliTestEventRequestObject) (gen.CliTestEventResponseObject, error) {
	k, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	if err := request.ObjectBody(ctx); err != nil {
		return nil, err
	}
	b := req.Body
	if id, _ := b.ProgramId.ID(); b.ProgramId.Sent() && id != k.ProgramID {
		return nil, apikeys.ErrProgramMismatch
	}
	runner := &synthetic.Runner{DB: h.DB, Log: h.Log, Click: h.Clicks.Record, Now: h.Now}
	out := gen.CliTestEventResponse{Warnings: wire.Warnings(ctx)}
	if t, _ := b.Type.Str(); t == "chain" {
		err = h.testChain(ctx, runner, k.ProgramID, &out.Data)
	} else {
		err = testEvent(ctx, runner, k.ProgramID, b.EventType, &out.Data)
	}
	if err != nil {
		return nil, err
	}
	return gen.CliTestEvent200JSONResponse{Body: out}, nil
}

// testChain runs the synthetic chain (click, lead, sale) and answers its verdict.
func (h *CLI) testChain(ctx context.Context, runner *synthetic.Runner, programID int64, data *gen.CliTestEventResponse_Data) error {
	ch, err := runner.RunChain(ctx, programID)
	if err != nil {
		return err
	}
	res := gen.CliChainResult{Type: gen.Chain, ShortCode: ch.ShortCode, CustomerKey: ch.CustomerKey,
		Verdict:    gen.ChainVerdict{Click: gen.StepVerdict(ch.Click), Lead: gen.StepVerdict(ch.Lead), Sale: gen.StepVerdict(ch.Sale)},
		Attributed: ch.Attributed()}
	if err := data.FromCliChainResult(res); err != nil {
		return err
	}
	h.Metrics.Event("synthetic_chain", true)
	return nil
}

// testEvent records one test event of the body's event_type.
func testEvent(ctx context.Context, runner *synthetic.Runner, programID int64, eventType jsonbody.Value, data *gen.CliTestEventResponse_Data) error {
	et, _ := eventType.Str()
	shown := et
	if et == "" {
		shown = eventType.JSON() // "", 7, {}: what was sent
	}
	if err := testevent.Check(et, shown); err != nil {
		return apierr.Invalid(err.Error())
	}
	one, err := runner.One(ctx, programID, et)
	if err != nil {
		return err
	}
	return data.FromCliTestEventResult(gen.CliTestEventResult{EventType: gen.CliTestEventResultEventType(one.EventType),
		EventId: one.EventID, Received: true, Attributed: one.Attributed, Message: one.Message})
}

// CliStripeConnect is retired: the connection is a program setting now.
func (h *CLI) CliStripeConnect(context.Context, gen.CliStripeConnectRequestObject) (gen.CliStripeConnectResponseObject, error) {
	return nil, apierr.New(apierr.KindGone, "This endpoint is retired: connect the payment processor from the dashboard program settings (PUT /api/v1/programs/{programId}/payment-processor).")
}
