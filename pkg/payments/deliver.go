package payments

import (
	"context"

	"github.com/reftrack/reftrack/pkg/programs"
)

// Deliver takes one delivery to the program's Stripe endpoint: processed once (Handle), or, when the
// program's owner account is suspended, verified and logged but not applied (Withhold), so that the
// processor keeps the endpoint. A program that does not exist is programs.ErrNotFound.
func (s *Stripe) Deliver(ctx context.Context, programID int64, payload []byte, signature string) (Outcome, error) {
	p, err := programs.Get(ctx, s.DB, programID)
	if err != nil {
		return Outcome{}, err
	}
	if p.OwnerSuspended {
		return s.Withhold(ctx, programID, payload, signature)
	}
	return s.Handle(ctx, programID, payload, signature)
}
