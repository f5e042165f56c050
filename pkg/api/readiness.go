package api

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/readiness"
)

// GetReadiness tells the key's program what it still needs before going live. Its errors use the typed
// envelope (invalid_key, internal_error).
func (s *Server) GetReadiness(ctx context.Context, _ gen.GetReadinessRequestObject) (gen.GetReadinessResponseObject, error) {
	key, err := s.requireKey(ctx, readinessKeyMessages)
	if err != nil {
		return nil, err
	}
	out, err := s.readiness(ctx, key.ProgramID)
	if err != nil {
		return nil, err
	}
	out.Warnings = wireWarnings(s.warnings(ctx))
	return gen.GetReadiness200JSONResponse{Body: out}, nil
}

// readiness is the program's readiness as the API answers it.
func (s *Server) readiness(ctx context.Context, programID int64) (gen.Readiness, error) {
	r, err := readiness.Compute(ctx, s.deps.DB, programID)
	if err != nil {
		return gen.Readiness{}, err
	}
	out := gen.Readiness{
		ProgramId:           r.ProgramID,
		State:               gen.ReadinessState(r.State),
		IntegrationVerified: r.IntegrationVerified,
		KeyRotatedAt:        r.KeyRotatedAt,
	}
	if r.Blocker != nil {
		b := gen.ReadinessBlocker(*r.Blocker)
		out.Blocker = &b
	}
	gate := func(name string) gen.ReadinessGate {
		g := r.Gates[name]
		out := gen.ReadinessGate{Status: gen.ReadinessGateStatus(g.Status), NextAction: g.NextAction}
		if v := g.Verdict; v != nil {
			out.Verdict = &gen.ChainVerdict{Click: gen.StepVerdict(v.Click), Lead: gen.StepVerdict(v.Lead), Sale: gen.StepVerdict(v.Sale)}
		}
		return out
	}
	out.Gates.Profile, out.Gates.Economics, out.Gates.Payout = gate("profile"), gate("economics"), gate("payout")
	out.Gates.Tracking, out.Gates.Live = gate("tracking"), gate("live")
	checks := make([]gen.ReadinessCheck, len(r.Checks))
	for i, c := range r.Checks {
		checks[i] = gen.ReadinessCheck{Id: gen.ReadinessCheckId(c.ID), Status: gen.ReadinessCheckStatus(c.Status), Hint: c.Hint}
	}
	out.Checks = &checks
	out.LastEventAt.Click, out.LastEventAt.Lead, out.LastEventAt.Sale = r.LastClick, r.LastLead, r.LastSale
	out.Counts24h.Clicks, out.Counts24h.Leads, out.Counts24h.Sales = r.Clicks24h, r.Leads24h, r.Sales24h
	out.Poll.RetryAfterSeconds = readiness.PollSeconds
	return out, nil
}
