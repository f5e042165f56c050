package events_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// events_counted, called directly: what counts in the real view and in the test-data view.
func TestCountedFunction(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	for _, tc := range []struct {
		test, bot, testView, want bool
	}{
		{false, false, false, true}, // a real event counts in the real view
		{true, false, false, false}, // a test event does not
		{false, true, false, false}, // nor a bot's click
		{true, true, false, false},
		{true, false, true, true}, // the test-data view counts test events
		{false, false, true, false},
		{true, true, true, false}, // never a bot's click
		{false, true, true, false},
	} {
		var got bool
		if err := d.Get(&got, `SELECT events_counted($1, $2, $3)`, tc.test, tc.bot, tc.testView); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("events_counted(test %v, bot %v, test view %v) = %v, want %v", tc.test, tc.bot, tc.testView, got, tc.want)
		}
	}
}

// Asked with a constant view, the rule is inlined and folded to the clicks' partial index predicates:
// a query that asks it is planned exactly as one with the predicate written out (index scans included).
func TestCountedKeepsThePartialIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	tx, err := d.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.Exec(`SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	plan := func(where string) string {
		t.Helper()
		var lines []string
		if err := tx.Select(&lines, `EXPLAIN (COSTS OFF) SELECT id FROM clicks WHERE program_id = 1 AND `+where+
			` ORDER BY click_timestamp DESC, id DESC LIMIT 50`); err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	for view, written := range map[bool]string{false: "NOT is_test AND NOT is_bot", true: "is_test AND NOT is_bot"} {
		got, want := plan(fmt.Sprintf("events_counted(is_test, is_bot, %v)", view)), plan(written)
		if got != want || !strings.Contains(got, "_idx") {
			t.Errorf("test view %v: plan with events_counted\n%s\nwant the written-out predicate's\n%s", view, got, want)
		}
	}
}
