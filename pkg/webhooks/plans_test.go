package webhooks_test

import (
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The outbox's functions that every watched statement calls (a sale, a lead, a commission's status…) keep
// one plan for the session. Left to PostgreSQL, a function taking arrays is planned again at every call
// (the actual array always looks cheaper than the generic plan's guess), which cost each sale 240 µs of
// PostgreSQL time (docs/performance.md); and a plan made on a near-empty table must still use the index.
func TestHotPathFunctionsKeepOneIndexedPlan(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	for _, fn := range []string{"webhooks_watched", "webhooks_emit"} {
		var config pq.StringArray
		if err := d.Get(&config, `SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname = $1`, fn); err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		got := strings.Join(config, " ")
		for _, want := range []string{"plan_cache_mode=force_generic_plan", "enable_seqscan=off"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s runs with %q, want %s", fn, got, want)
			}
		}
	}
}
