package tracking

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/readiness"
)

// GetReadiness tells the key's program what it still needs before going live.
func (h *Tracking) GetReadiness(ctx context.Context, _ gen.GetReadinessRequestObject) (gen.GetReadinessResponseObject, error) {
	key, err := auth.ProgramKey(ctx)
	if err != nil {
		return nil, err
	}
	r, err := readiness.Assess(ctx, readiness.Sources{Primary: h.DB, DNS: h.DNS}, key.ProgramID, h.Now())
	if err != nil {
		return nil, err
	}
	out := wire.Readiness(r)
	out.Warnings = wire.Warnings(ctx)
	return gen.GetReadiness200JSONResponse{Body: out}, nil
}
