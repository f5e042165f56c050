// Package sql holds pkg/sales's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/sales's tables.
package sql

import (
	"embed"

	attributionsql "github.com/reftrack/reftrack/pkg/attribution/sql"
	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
	eventssql "github.com/reftrack/reftrack/pkg/events/sql"
	leadssql "github.com/reftrack/reftrack/pkg/leads/sql"
	ledgersql "github.com/reftrack/reftrack/pkg/ledger/sql"
)

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// The functions' names, for the Go code and the other owners' functions that call them.
const (
	RefundsState = "refunds_state"
	Record       = "sales_record"
	Refund       = "sales_refund"
	State        = "sales_state"
)

// Calls are the other owners' functions these functions call, named through their packages so that the
// dependency is one Go's imports show (go list -deps); db's TestCallsBetweenOwnersAreImports keeps the list
// equal to the calls in the bodies.
var Calls = []string{
	attributionsql.Convert,
	attributionsql.CreateConverted,
	attributionsql.LockUnchanged,
	clickssql.Convert,
	eventssql.PerformanceAdd,
	leadssql.Convert,
	ledgersql.Clawback,
	ledgersql.Create,
	ledgersql.Refund,
	ledgersql.Status,
}
