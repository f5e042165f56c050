// Package sql holds pkg/ledger's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/ledger's tables.
package sql

import "embed"

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// The functions' names, for the Go code and the other owners' functions that call them.
const (
	Clawback = "ledger_clawback"
	Create   = "ledger_create"
	Refund   = "ledger_refund"
	Status   = "ledger_status"
)
