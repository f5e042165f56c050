package events_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The counting rules written as SQL predicates (for the readers that count rows: readiness, the test-data
// view) select exactly the rows the rules in Go count, for every combination of the columns they read.
func TestRowRulesAgree(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	eval := func(pred string, cols string, args ...any) bool {
		t.Helper()
		var got bool
		if err := d.DB.GetContext(ctx, &got, `SELECT `+pred+` FROM (SELECT `+cols+`) AS r`, args...); err != nil {
			t.Fatalf("%s: %v", pred, err)
		}
		return got
	}
	for _, test := range []bool{false, true} {
		for _, bot := range []bool{false, true} {
			want := counting.Click(test, bot).Clicks == 1
			if got := eval(counting.ClickRows, `$1::boolean AS is_test, $2::boolean AS is_bot`, test, bot); got != want {
				t.Errorf("click (test %v, bot %v): ClickRows %v, Click counts %v", test, bot, got, want)
			}
		}
		for _, provisional := range []bool{false, true} {
			class := counting.Lead(test, provisional)
			var stored any // as the writers store it: NULL for nowhere
			if class != counting.LeadNowhere {
				stored = class
			}
			want := counting.LeadMeasures(class).Leads == 1
			got := eval(fmt.Sprintf("COALESCE(%s, false)", counting.LeadRows), `$1::boolean AS is_test, $2::text AS counts_as`, test, stored)
			if got != want {
				t.Errorf("lead (test %v, provisional %v): LeadRows %v, Lead counts %v", test, provisional, got, want)
			}
		}
		want := counting.Sale(counting.SaleFacts{AmountCents: 100, Test: test}).Sales == 1
		if got := eval(counting.SaleRows, `$1::boolean AS is_test`, test); got != want {
			t.Errorf("sale (test %v): SaleRows %v, Sale counts %v", test, got, want)
		}
	}
}
