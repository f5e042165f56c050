package leads

import (
	"context"

	"github.com/reftrack/reftrack/pkg/apikeys"
)

// Request is a lead as the lead route receives it, before its mode is decided.
type Request struct {
	// Claim is the valid program key the request carried, if any, and additional_data.program_id.
	Claim       apikeys.Claim
	ClickID     string
	CustomerKey string
	Email       string
	Test        bool
	// Origin is the request's Origin header ("" when it has none).
	Origin string
}

// Mode decides how a lead is taken: in server mode when the request carried a valid program key (the
// key's program, source server, no Origin check), in browser mode otherwise (the program named by
// additional_data.program_id, if any, else the click's; the request's Origin is checked against the
// program's). A test lead carrying a key and naming another program is refused
// (apikeys.ErrProgramMismatch).
func Mode(q Request) (Input, error) {
	if err := q.Claim.CheckTest(q.Test); err != nil {
		return Input{}, err
	}
	in := Input{ServerMode: q.Claim.HasKey, ClickID: q.ClickID, CustomerKey: q.CustomerKey, Email: q.Email, Test: q.Test,
		Source: SourceBrowser}
	switch {
	case q.Claim.HasKey:
		in.ProgramID, in.Source = q.Claim.KeyProgramID, SourceServer
	case q.Claim.Named != nil:
		in.ProgramID = *q.Claim.Named
	}
	if !q.Claim.HasKey {
		in.Origin = q.Origin
	}
	return in, nil
}

// Take decides the request's mode (Mode) and records the lead in the next batch.
func (r *Recorder) Take(ctx context.Context, q Request) (Result, error) {
	in, err := Mode(q)
	if err != nil {
		return Result{}, err
	}
	return r.Record(ctx, in)
}
