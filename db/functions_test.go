package db_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reftrack/reftrack/db"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// schemaFunctions stay in the migrations: a table's definition uses them (a CHECK constraint or a column
// default), so changing one is a schema change, made by a migration like any other.
var schemaFunctions = []string{"clicks_make_id", "clicks_month", "clicks_ref_month"}

// retiredFunctions are functions this build no longer calls, left in the database while the previous
// build may still be serving (a rolling deploy); a later release's migration drops them. Each names the
// function that replaced it.
var retiredFunctions = map[string]string{
	"clicks_record": "clicks_record_v2",
	// The sale path: '' and 0 stood for none, -1 for no commission; the new functions take NULL.
	"sales_state":                  "sales_state_v2",
	"sales_record":                 "sales_record_v2",
	"attribution_create_converted": "attribution_create_converted_v2",
	// The lead path: likewise.
	"leads_state":              "leads_state_v2",
	"leads_write":              "leads_write_v2",
	"leads_settle":             "leads_settle_v2",
	"leads_record_provisional": "leads_record_provisional_v2",
	"attribution_create_lead":  "attribution_create_lead_v2",
	"attribution_mark_lead":    "attribution_mark_lead_v2",
	// The refund path: likewise.
	"refunds_state": "refunds_state_v2",
	"sales_refund":  "sales_refund_v2",
}

// lastFunctionMigration is the newest migration allowed to define functions: after it, functions live
// beside their owners (pkg/*/sql) and migrations hold the schema only.
const lastFunctionMigration = "000019"

// Every pkg/*/sql/*.sql file is one of db.Functions(): a folder whose package is not listed in
// db/functions.go would never be applied.
func TestEveryFunctionFileIsApplied(t *testing.T) {
	t.Parallel()
	fns, err := db.Functions()
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]bool{}
	for _, f := range fns {
		applied[f.Owner+"/sql/"+f.Name+".sql"] = true
	}
	var onDisk []string
	err = filepath.WalkDir(filepath.Join("..", "pkg"), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "node_modules":
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".sql") && filepath.Base(filepath.Dir(path)) == "sql":
			rel, _ := filepath.Rel("..", path)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) < 20 {
		t.Fatalf("found only %d function files: is the walk looking in the right place?", len(onDisk))
	}
	for _, f := range onDisk {
		if !applied[f] {
			t.Errorf("%s is not applied: add its package to functionOwners in db/functions.go", f)
		}
	}
	if len(onDisk) != len(fns) {
		t.Errorf("%d function files on disk, %d applied", len(onDisk), len(fns))
	}
}

// The migrated database holds exactly the functions that have a home: an owner's file, the schema's
// own, or a retired one kept for the previous build. A function created by a migration and forgotten
// here fails, as does an owner's function that did not get applied.
func TestEveryDatabaseFunctionHasAHome(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	var inDB []string
	if err := d.Select(&inDB, `SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
		AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = p.oid AND e.deptype = 'e') ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	fns, err := db.Functions()
	if err != nil {
		t.Fatal(err)
	}
	home := map[string]string{}
	for _, f := range fns {
		home[f.Name] = f.Owner + "/sql"
	}
	for _, n := range schemaFunctions {
		home[n] = "the schema"
	}
	for n := range retiredFunctions {
		home[n] = "retired"
	}
	for _, n := range inDB {
		if home[n] == "" {
			t.Errorf("database function %s has no home: move it to its owner's sql/ folder (or list it in retiredFunctions)", n)
		}
	}
	for n, where := range home {
		if !slices.Contains(inDB, n) {
			t.Errorf("function %s (%s) is not in the migrated database", n, where)
		}
	}
}

// The schema's functions are the ones its tables use: each is referenced by a constraint or a default.
func TestSchemaFunctionsAreUsedByTheSchema(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	for _, n := range schemaFunctions {
		var uses int
		if err := d.Get(&uses, `SELECT count(*) FROM pg_depend e JOIN pg_proc p ON p.oid = e.refobjid
			WHERE p.proname = $1 AND e.classid IN ('pg_constraint'::regclass, 'pg_attrdef'::regclass)`, n); err != nil {
			t.Fatal(err)
		}
		if uses == 0 {
			t.Errorf("%s is used by no constraint or default: it is not part of the schema; move it to its owner's sql/ folder", n)
		}
	}
}

// Migrations after lastFunctionMigration hold the schema only.
func TestMigrationsDefineNoFunctions(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+(OR\s+REPLACE\s+)?FUNCTION`)
	for _, f := range files {
		if filepath.Base(f) <= lastFunctionMigration+"~" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if create.Match(b) {
			t.Errorf("%s defines a function: put it in its owner's sql/ folder (db.ApplyFunctions applies it)", f)
		}
	}
}

// A database whose functions are not this build's (migrated by an older build) is not current, and
// says which are missing; applying them makes it current.
func TestCheckCurrentNamesMissingFunctions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	if err := db.CheckCurrent(ctx, d.DB.DB); err != nil {
		t.Fatalf("CheckCurrent on a migrated database: %v", err)
	}
	if _, err := d.Exec(`DROP FUNCTION sales_state_v2`); err != nil {
		t.Fatal(err)
	}
	err := db.CheckCurrent(ctx, d.DB.DB)
	if !errors.Is(err, db.ErrSchemaNotCurrent) || !strings.Contains(err.Error(), "sales_state_v2") {
		t.Fatalf("CheckCurrent without sales_state_v2 = %v, want ErrSchemaNotCurrent naming it", err)
	}
	if err := db.MigrateUp(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckCurrent(ctx, d.DB.DB); err != nil {
		t.Errorf("CheckCurrent after migrate up: %v", err)
	}
}

// A database without one of the owners' triggers (pkg/webhooks' outbox) is not current, and says which;
// migrate up attaches it again.
func TestCheckCurrentNamesMissingTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	if _, err := d.Exec(`DROP TRIGGER webhooks_sales_insert ON sales`); err != nil {
		t.Fatal(err)
	}
	err := db.CheckCurrent(ctx, d.DB.DB)
	if !errors.Is(err, db.ErrSchemaNotCurrent) || !strings.Contains(err.Error(), "trigger webhooks_sales_insert on sales missing") {
		t.Fatalf("CheckCurrent without the trigger = %v", err)
	}
	if err := db.MigrateUp(ctx, d.DB.DB); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckCurrent(ctx, d.DB.DB); err != nil {
		t.Errorf("CheckCurrent after migrate up: %v", err)
	}
}

// Replicas may run `migrate up` at once: applying the functions concurrently succeeds for all.
func TestApplyFunctionsConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = db.ApplyFunctions(ctx, d.DB.DB) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
