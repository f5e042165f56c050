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

// schemaFunctions are the functions the migrations define: a table's definition uses them (a CHECK
// constraint or a column default), so changing one is a schema change, made by a migration like any other.
var schemaFunctions = []string{"clicks_make_id", "clicks_month", "clicks_ref_month"}

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

// The migrated database holds exactly the functions that have a home: an owner's file or the schema's
// own. A function created by a migration and forgotten here fails, as does an owner's function that did
// not get applied.
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
	for _, n := range inDB {
		if home[n] == "" {
			t.Errorf("database function %s has no home: move it to its owner's sql/ folder", n)
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

// Migrations hold the schema only: the only functions they define are the schema's own, and they neither
// call an owner's function nor attach a trigger (the owners' triggers are attached by db.ApplyFunctions,
// after the functions they call).
func TestMigrationsDefineNoFunctions(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	fns, err := db.Functions()
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([a-z_][a-z0-9_]*)`)
	trigger := regexp.MustCompile(`(?i)CREATE\s+(?:OR\s+REPLACE\s+)?TRIGGER`)
	var defined []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			defined = append(defined, m[1])
			if !slices.Contains(schemaFunctions, m[1]) {
				t.Errorf("%s defines function %s: put it in its owner's sql/ folder (db.ApplyFunctions applies it)", f, m[1])
			}
		}
		if trigger.Match(b) {
			t.Errorf("%s attaches a trigger: list it in its owner's Triggers (db.ApplyFunctions attaches it)", f)
		}
		code := stripComments(string(b))
		for _, fn := range fns {
			if regexp.MustCompile(`\b` + fn.Name + `\s*\(`).MatchString(code) {
				t.Errorf("%s calls %s, a function of %s: the schema uses none of the owners' functions", f, fn.Name, fn.Owner)
			}
		}
	}
	for _, n := range schemaFunctions {
		if !slices.Contains(defined, n) {
			t.Errorf("no migration defines the schema function %s: is the scan looking in the right place?", n)
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
	if _, err := d.Exec(`DROP FUNCTION sales_state`); err != nil {
		t.Fatal(err)
	}
	err := db.CheckCurrent(ctx, d.DB.DB)
	if !errors.Is(err, db.ErrSchemaNotCurrent) || !strings.Contains(err.Error(), "sales_state") {
		t.Fatalf("CheckCurrent without sales_state = %v, want ErrSchemaNotCurrent naming it", err)
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
