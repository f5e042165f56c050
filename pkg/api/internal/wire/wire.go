// Package wire converts domain values to the generated wire types where more than one area of the API
// answers them (rotation warnings, test-mode data, the readiness report).
package wire

import (
	"context"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/readiness"
)

// Warnings is the response's "warnings" array: set when the request's API key is marked for rotation.
func Warnings(ctx context.Context) *[]gen.Warning {
	ws := request.From(ctx).Warnings
	if len(ws) == 0 {
		return nil
	}
	out := make([]gen.Warning, len(ws))
	for i, w := range ws {
		t, _ := time.Parse(time.RFC3339, w.RotateBy)
		out[i] = gen.Warning{Code: gen.WarningCode(w.Code), Message: w.Message, Hint: w.Hint, RotateBy: t, DocsUrl: w.DocsURL}
	}
	return &out
}

// TestData is the "data" object test-mode answers add.
func TestData(eventID *int64, programID int64) *gen.TestModeData {
	return &gen.TestModeData{EventId: eventID, ProgramId: &programID, TestMode: true}
}

// Ptr is a pointer to v.
func Ptr[T any](v T) *T { return &v }

// Deref is the value p points to, or T's zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Readiness is the readiness report as the API answers it.
func Readiness(r readiness.Report) gen.Readiness {
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
	return out
}
