package clicks

import (
	"context"

	"github.com/reftrack/reftrack/pkg/apikeys"
)

// Track records a click from the click route: a test click carrying a program key and naming another
// program is refused (apikeys.ErrProgramMismatch) before anything is recorded.
func (r *Recorder) Track(ctx context.Context, in Input, claim apikeys.Claim) (Result, error) {
	if err := claim.CheckTest(in.Test); err != nil {
		return Result{}, err
	}
	return r.Record(ctx, in)
}
