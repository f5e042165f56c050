package rounds

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/lib/pq"
)

type job struct {
	id  int
	err error
}

func run(t *testing.T, jobs []*job, extra int, round func([]*job) ([]*job, error)) {
	t.Helper()
	Run(context.Background(), slog.New(slog.DiscardHandler), "jobs", jobs, extra,
		func(_ context.Context, js []*job) ([]*job, error) { return round(js) }, func(j *job, err error) { j.err = err })
}

// Jobs that lost a race go round again; a deadlock reruns the round; a failure splits the batch so
// that only the bad job fails.
func TestRun(t *testing.T) {
	t.Parallel()
	jobs := []*job{{id: 1}, {id: 2}, {id: 3}}
	var seen [][]int
	deadlocked := false
	run(t, jobs, 2, func(js []*job) ([]*job, error) {
		ids := make([]int, len(js))
		for i, j := range js {
			ids[i] = j.id
		}
		seen = append(seen, ids)
		switch {
		case len(seen) == 1:
			return js[1:], nil // job 1 written; 2 and 3 lost a race
		case !deadlocked:
			deadlocked = true
			return nil, &pq.Error{Code: "40P01"}
		case slices.Contains(ids, 3):
			return nil, errors.New("job 3 is bad")
		}
		return nil, nil
	})
	want := [][]int{{1, 2, 3}, {2, 3}, {2, 3}, {2}, {3}} // written, lost, deadlocked, failed and split
	if !slices.EqualFunc(seen, want, slices.Equal[[]int]) {
		t.Errorf("rounds = %v, want %v", seen, want)
	}
	if jobs[0].err != nil || jobs[1].err != nil || jobs[2].err == nil {
		t.Errorf("errors = %v, %v, %v; want only job 3's", jobs[0].err, jobs[1].err, jobs[2].err)
	}
}

// Jobs still losing after len(jobs)+extra rounds fail with ExhaustedError.
func TestRunGivesUp(t *testing.T) {
	t.Parallel()
	jobs := []*job{{id: 1}, {id: 2}}
	n := 0
	run(t, jobs, 3, func(js []*job) ([]*job, error) { n++; return js, nil })
	var ex *ExhaustedError
	if n != 5 || !errors.As(jobs[0].err, &ex) || !errors.As(jobs[1].err, &ex) || ex.Rounds != 5 {
		t.Errorf("%d rounds, errors %v, %v; want 5 rounds and ExhaustedError", n, jobs[0].err, jobs[1].err)
	}
}
