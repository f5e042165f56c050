// Package sql holds pkg/leads's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/leads's tables.
package sql

import (
	"embed"

	accountssql "github.com/reftrack/reftrack/pkg/accounts/sql"
	attributionsql "github.com/reftrack/reftrack/pkg/attribution/sql"
	clickssql "github.com/reftrack/reftrack/pkg/clicks/sql"
	eventssql "github.com/reftrack/reftrack/pkg/events/sql"
)

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// The functions' names, for the Go code and the other owners' functions that call them.
const (
	Convert           = "leads_convert"
	RecordProvisional = "leads_record_provisional"
	Settle            = "leads_settle"
	State             = "leads_state"
	Write             = "leads_write"
)

// Calls are the other owners' functions these functions call, named through their packages so that the
// dependency is one Go's imports show (go list -deps); db's TestCallsBetweenOwnersAreImports keeps the list
// equal to the calls in the bodies.
var Calls = []string{
	accountssql.SuspendedOwners,
	attributionsql.CreateLead,
	attributionsql.LockUnchanged,
	attributionsql.MarkLead,
	clickssql.Convert,
	eventssql.PerformanceAdd,
}
