// Package rounds records a batch of jobs the way the tracking recorders do: in rounds of one read, a
// decision in Go and one guarded write, each round taking the jobs that lost a race in the one before
// (their row changed between the read and the write).
package rounds

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/reftrack/reftrack/pkg/platform/dbfault"
)

// Run runs round over jobs until none is left to decide again: round reads, decides and writes the jobs
// it is given once and returns those to decide again. A round the database rolled back for a conflict
// between transactions (a deadlock) runs again; a round that failed otherwise is run job by job when it
// held several, so that one job's bad data fails only that job (log says so, naming what), and fails its
// jobs (fail) when alone or when the database is unavailable. A round writes at least one of the jobs it
// is given unless they all lost races, so len(jobs) + extra rounds are enough; the jobs still pending
// after that fail.
func Run[J any](ctx context.Context, log *slog.Logger, what string, jobs []J, extra int,
	round func(context.Context, []J) ([]J, error), fail func(J, error)) {
	pending := jobs
	for n := 0; len(pending) > 0; n++ {
		if n == len(jobs)+extra {
			for _, j := range pending {
				fail(j, &ExhaustedError{What: what, Rounds: n})
			}
			return
		}
		again, err := round(ctx, pending)
		switch {
		case err == nil:
		case dbfault.Conflict(err):
			again = pending
		case len(pending) > 1 && !dbfault.Unavailable(err):
			log.WarnContext(ctx, "batch failed; recording its "+what+" one by one", what, len(pending), "err", err)
			for _, j := range pending {
				Run(ctx, log, what, []J{j}, extra, round, fail)
			}
			return
		default:
			for _, j := range pending {
				fail(j, err)
			}
			return
		}
		pending = again
	}
}

// ExhaustedError fails a job still undecided after every round it was given.
type ExhaustedError struct {
	What   string
	Rounds int
}

func (e *ExhaustedError) Error() string {
	return fmt.Sprintf("%s not recorded after %d rounds", e.What, e.Rounds)
}
