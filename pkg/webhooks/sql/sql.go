// Package sql holds pkg/webhooks' database functions, one file per function named for it, and the
// triggers that call them. They are the live definitions: db.MigrateUp applies the functions (CREATE OR
// REPLACE) after the schema migrations, then attaches the triggers, and db/ownership_test.go holds them
// to writing only pkg/webhooks' tables.
//
// The triggers are the outbox: every change a webhook describes is written by some statement on an
// owner's table (a sale, a commission's status, a payout…), and an AFTER trigger on that statement writes
// the event in the same transaction. No writer can forget to: the sale's and the refund's batch
// statements, the ledger's actions and background pass, and a future owner function all get their events.
//
// Each trigger is one statement, which writes only the events, of the programs with an endpoint (enabled
// or not: a disabled endpoint's events are kept for recovery); a statement of a program without endpoints
// costs one index probe per row. The delivery worker fans each event out to its endpoints when it first
// picks it up (webhooks_fan_out): deliveries written in the change's statement, through a function and a
// first call to learn which programs are watched, cost a sale with an endpoint about a fifth of its
// throughput (docs/performance.md). TestTriggersWriteEventsOnly holds the triggers to that shape.
//
// Every function is PL/pgSQL, even those of one query: PL/pgSQL keeps each statement's plan for the
// session, where a SQL function called from a trigger is planned again at every call. Planned each time,
// the six queries a sale's statement ran cost it a fifth of its throughput (docs/performance.md). The
// triggers' statements read only their transition tables, so their plan is the generic one; a cached
// plan is made again when ANALYZE changes webhook_endpoints' statistics.
package sql

import (
	"embed"

	"github.com/reftrack/reftrack/pkg/platform/pgtrigger"
)

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// Trigger is a statement-level trigger on an owner's table.
type Trigger = pgtrigger.Trigger

// Triggers are attached by db.ApplyFunctions when missing (by name, table and function).
var Triggers = []Trigger{
	pgtrigger.On("webhooks_leads_insert", "leads", "INSERT", "webhooks_on_lead_insert"),
	pgtrigger.On("webhooks_sales_insert", "sales", "INSERT", "webhooks_on_sale_insert"),
	pgtrigger.On("webhooks_sales_update", "sales", "UPDATE", "webhooks_on_sale_update"),
	pgtrigger.On("webhooks_commissions_insert", "commissions", "INSERT", "webhooks_on_commission_insert"),
	pgtrigger.On("webhooks_commissions_update", "commissions", "UPDATE", "webhooks_on_commission_update"),
	pgtrigger.On("webhooks_clawbacks_insert", "commission_clawbacks", "INSERT", "webhooks_on_clawback_insert"),
	pgtrigger.On("webhooks_payouts_insert", "payouts", "INSERT", "webhooks_on_payout_insert"),
	pgtrigger.On("webhooks_payouts_update", "payouts", "UPDATE", "webhooks_on_payout_update"),
	pgtrigger.On("webhooks_partner_programs_insert", "partner_programs", "INSERT", "webhooks_on_partner_program_insert"),
	pgtrigger.On("webhooks_partners_update", "partners", "UPDATE", "webhooks_on_partner_update"),
	pgtrigger.On("webhooks_partner_programs_update", "partner_programs", "UPDATE", "webhooks_on_partner_program_update"),
	pgtrigger.On("webhooks_links_update", "referral_links", "UPDATE", "webhooks_on_link_update"),
	// The outbox's own cascades (it has no foreign keys: the schema says why).
	pgtrigger.On("webhooks_events_delete", "webhook_events", "DELETE", "webhooks_on_event_delete"),
	pgtrigger.On("webhooks_endpoints_delete", "webhook_endpoints", "DELETE", "webhooks_on_endpoint_delete"),
	pgtrigger.On("webhooks_deliveries_delete", "webhook_deliveries", "DELETE", "webhooks_on_delivery_delete"),
}
