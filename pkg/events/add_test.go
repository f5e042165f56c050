package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Add appends one delta per program, hour, partner and currency, what the deltas of that key add up to,
// and none for a key whose deltas add up to nothing (performance_add sums them).
func TestAddSumsPerKey(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	h := time.Date(2026, 5, 4, 16, 0, 0, 0, time.UTC)
	delta := func(program, partner int64, currency string, m counting.Measures) counting.Delta {
		return counting.Delta{Key: counting.Key{ProgramID: program, Hour: h.Add(17 * time.Minute), PartnerID: partner, Currency: currency}, Measures: m}
	}
	if err := events.Add(context.Background(), d.DB,
		delta(2, 1, "", counting.Measures{Clicks: 1}),
		delta(1, 1, "USD", counting.Measures{Sales: 1, RevenueCents: 100}),
		delta(2, 1, "", counting.Measures{Clicks: 1, BotClicks: 1}),
		delta(1, 1, "USD", counting.Measures{RevenueCents: -100}),
		delta(1, 1, "", counting.Measures{Leads: 1, ProvisionalLeads: -1}),
		delta(1, 1, "", counting.Measures{ProvisionalLeads: 1}),
		delta(3, 0, "", counting.Measures{}), // adds nothing
		delta(4, 0, "", counting.Measures{Leads: 1}),
		delta(4, 0, "", counting.Measures{Leads: -1}), // adds up to nothing
	); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Program   int64     `db:"program_id"`
		Hour      time.Time `db:"hour"`
		Partner   int64     `db:"partner_id"`
		Currency  string    `db:"currency"`
		Clicks    int64     `db:"clicks"`
		BotClicks int64     `db:"bot_clicks"`
		Leads     int64     `db:"leads"`
		Prov      int64     `db:"provisional_leads"`
		Sales     int64     `db:"sales"`
		Revenue   int64     `db:"revenue_cents"`
	}
	var got []row
	if err := d.DB.Select(&got, `SELECT program_id, hour, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales,
		revenue_cents FROM performance_deltas ORDER BY program_id, currency`); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i].Hour = got[i].Hour.UTC()
	}
	want := []row{
		{Program: 1, Hour: h, Partner: 1, Currency: "", Leads: 1},
		{Program: 1, Hour: h, Partner: 1, Currency: "USD", Sales: 1},
		{Program: 2, Hour: h, Partner: 1, Currency: "", Clicks: 2, BotClicks: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if err := events.Add(context.Background(), d.DB, delta(5, 0, "", counting.Measures{})); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := d.DB.Get(&n, `SELECT count(*) FROM performance_deltas WHERE program_id = 5`); err != nil || n != 0 {
		t.Errorf("a delta of nothing appended %d rows (%v)", n, err)
	}
}
