// Package sql holds pkg/accounts's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/accounts's tables.
package sql

import "embed"

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// The functions' names, for the Go code and the other owners' functions that call them.
const (
	SuspendedOwners = "accounts_suspended_owners"
)
