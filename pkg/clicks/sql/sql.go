// Package sql holds pkg/clicks's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/clicks's tables.
package sql

import "embed"

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS
