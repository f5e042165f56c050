// Package sql holds pkg/clicks's database functions, one file per function named for it. They are the live
// definitions: db.MigrateUp applies them (CREATE OR REPLACE) after the schema migrations, and
// db/ownership_test.go holds them to writing only pkg/clicks's tables.
package sql

import (
	"embed"

	"github.com/reftrack/reftrack/pkg/platform/pgtrigger"
)

// Files are the function definitions.
//
//go:embed *.sql
var Files embed.FS

// Triggers are attached by db.ApplyFunctions when missing: a click_id without a month is noted in
// clicks_legacy.
var Triggers = []pgtrigger.Trigger{
	pgtrigger.On("clicks_legacy_insert", "clicks", "INSERT", "clicks_note_legacy"),
}
