// Package sql holds pkg/events's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/events's tables. No trigger keeps the counts: their
// writers append what pkg/counting decided (performance_add) in their own statements.
package sql

import "embed"

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// The functions' names, for the Go code and the other owners' functions that call them.
const (
	PerformanceAdd = "performance_add"
	RollUp         = "roll_up_performance"
)
