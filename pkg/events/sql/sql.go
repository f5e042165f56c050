// Package sql holds pkg/events's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/events's tables.
package sql

import (
	"embed"

	"github.com/reftrack/reftrack/pkg/platform/pgtrigger"
)

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// Triggers keep the event counts (*_count_events: event_count_deltas) and the performance counts
// (performance_on_*: performance_deltas) as clicks, leads, sales, commissions and clawbacks are written;
// db.ApplyFunctions attaches the missing ones. When it attaches a performance INSERT trigger it counts the
// table's rows already there (its Backfill) in the same transaction, which CREATE TRIGGER's lock keeps
// every writer out of until it commits.
var Triggers = []pgtrigger.Trigger{
	pgtrigger.On("clicks_count_insert", "clicks", "INSERT", "clicks_count_events"),
	pgtrigger.On("clicks_count_update", "clicks", "UPDATE", "clicks_count_events"),
	pgtrigger.On("clicks_count_delete", "clicks", "DELETE", "clicks_count_events"),
	pgtrigger.On("leads_count_insert", "leads", "INSERT", "leads_count_events"),
	pgtrigger.On("leads_count_update", "leads", "UPDATE", "leads_count_events"),
	pgtrigger.On("leads_count_delete", "leads", "DELETE", "leads_count_events"),
	pgtrigger.On("sales_count_insert", "sales", "INSERT", "sales_count_events"),
	pgtrigger.On("sales_count_update", "sales", "UPDATE", "sales_count_events"),
	pgtrigger.On("sales_count_delete", "sales", "DELETE", "sales_count_events"),
	{Name: "performance_clicks_insert", Table: "clicks", Event: "INSERT", Function: "performance_on_click", Backfill: "SELECT performance_backfill('clicks')"},
	pgtrigger.On("performance_clicks_update", "clicks", "UPDATE", "performance_on_click"),
	pgtrigger.On("performance_clicks_delete", "clicks", "DELETE", "performance_on_click"),
	{Name: "performance_leads_insert", Table: "leads", Event: "INSERT", Function: "performance_on_lead", Backfill: "SELECT performance_backfill('leads')"},
	pgtrigger.On("performance_leads_update", "leads", "UPDATE", "performance_on_lead"),
	pgtrigger.On("performance_leads_delete", "leads", "DELETE", "performance_on_lead"),
	{Name: "performance_sales_insert", Table: "sales", Event: "INSERT", Function: "performance_on_sale", Backfill: "SELECT performance_backfill('sales')"},
	pgtrigger.On("performance_sales_update", "sales", "UPDATE", "performance_on_sale"),
	pgtrigger.On("performance_sales_delete", "sales", "DELETE", "performance_on_sale"),
	{Name: "performance_commissions_insert", Table: "commissions", Event: "INSERT", Function: "performance_on_commission", Backfill: "SELECT performance_backfill('commissions')"},
	pgtrigger.On("performance_commissions_update", "commissions", "UPDATE", "performance_on_commission"),
	pgtrigger.On("performance_commissions_delete", "commissions", "DELETE", "performance_on_commission"),
	{Name: "performance_clawbacks_insert", Table: "commission_clawbacks", Event: "INSERT", Function: "performance_on_clawback", Backfill: "SELECT performance_backfill('commission_clawbacks')"},
}
