package events

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/counting"
	eventssql "github.com/reftrack/reftrack/pkg/events/sql"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
)

// addCall appends deltas of the counts (pkg/events/sql/performance_add.sql).
var addCall = pgcall.New[delta, pgcall.None](eventssql.PerformanceAdd)

// delta is a counting.Delta as performance_add takes it.
type delta struct {
	Program          int64     `pg:"p_program"`
	Hour             time.Time `pg:"p_hour"`
	Partner          int64     `pg:"p_partner"`
	Currency         string    `pg:"p_currency"`
	Clicks           int64     `pg:"p_clicks"`
	BotClicks        int64     `pg:"p_bot_clicks"`
	Leads            int64     `pg:"p_leads"`
	ProvisionalLeads int64     `pg:"p_provisional_leads"`
	Sales            int64     `pg:"p_sales"`
	Customers        int64     `pg:"p_customers"`
	Revenue          int64     `pg:"p_revenue"`
	Commission       int64     `pg:"p_commission"`
}

// Add appends what events add to the counts (counting's deltas) in the caller's transaction, the one that
// writes the events; performance_add sums them per key and leaves out what adds nothing. The writers whose
// events are written by a database function pass the same deltas to performance_add from within it
// instead.
func Add(ctx context.Context, db sqlx.ExecerContext, ds ...counting.Delta) error {
	rows := make([]delta, 0, len(ds))
	for _, d := range ds {
		if d.Measures == (counting.Measures{}) {
			continue
		}
		rows = append(rows, delta{Program: d.ProgramID, Hour: d.Hour, Partner: d.PartnerID, Currency: d.Currency, Clicks: d.Clicks,
			BotClicks: d.BotClicks, Leads: d.Leads, ProvisionalLeads: d.ProvisionalLeads, Sales: d.Sales, Customers: d.Customers,
			Revenue: d.RevenueCents, Commission: d.CommissionCents})
	}
	if len(rows) == 0 {
		return nil // a round trip for nothing
	}
	if _, err := db.ExecContext(ctx, addCall.Query(), addCall.Args(rows, pgcall.None{})...); err != nil {
		return fmt.Errorf("add to the counts: %w", err)
	}
	return nil
}
