package db_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners is who writes each table: exactly one package, whose exported functions every other package
// (handlers, seeding, the synthetic chain, the other domain packages) calls to change the table. This
// table is the documented source of truth; TestOneWriterPerTable holds the code to it.
var owners = map[string]string{
	// Accounts and who may act in a workspace.
	"accounts":          "pkg/accounts",
	"workspaces":        "pkg/accounts",
	"workspace_members": "pkg/accounts",
	// Signing in.
	"login_sessions": "pkg/logins",
	"login_tokens":   "pkg/logins",
	// Program API keys.
	"api_keys": "pkg/apikeys",
	// A program's settings, partners (with their partner-program relationships) and referral links.
	"programs":         "pkg/programs",
	"partners":         "pkg/programs",
	"partner_programs": "pkg/programs",
	"referral_links":   "pkg/programs",
	// Tracking.
	"clicks": "pkg/clicks",
	// The months of click ids that carry none, and the clicks kept past retention (migration 000019).
	"clicks_legacy": "pkg/clicks",
	"clicks_kept":   "pkg/clicks",
	"customers":     "pkg/attribution",
	"leads":         "pkg/leads",
	"sales":         "pkg/sales",
	"commissions":   "pkg/sales",
	"refunds":       "pkg/sales",
	// Payment processors.
	"processor_connections": "pkg/payments",
	"processor_events":      "pkg/payments",
	// The audit log of operator actions (suspend, unsuspend, key rotation mark, key regeneration).
	"audit_log": "pkg/audit",
	// Runs of `reftrack test --chain`.
	"synthetic_chains": "pkg/synthetic",
	// Kept by the database's own triggers and functions (migrations 000004, 000009): no Go code writes them.
	"event_counts":       byTriggers,
	"event_counts_daily": byTriggers,
	"event_count_deltas": byTriggers,
	// The migrations' record of which migrations are backward compatible (written by db.MigrateUp).
	"schema_compatibility": "db",
	// The reftrackd processes serving the database.
	"server_instances": "pkg/platform/peers",
	// cmd/loadgen's own benchmark table (it creates it itself; not part of the schema).
	"bench_insert": "cmd/loadgen",
}

const byTriggers = "database triggers"

// write finds a write statement in SQL text: the table an INSERT, UPDATE or DELETE names. Keywords are
// upper case in this code base, table names lower case, so `ON CONFLICT … DO UPDATE SET` and
// `FOR UPDATE OF` are not writes of a table.
var write = regexp.MustCompile(`\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)`)

// writeSite is one statement that writes a table.
type writeSite struct {
	table, pkg, pos string
}

// writes lists the write statements in the string literals of one Go file, its package being pkg.
func writes(t *testing.T, fset *token.FileSet, path, pkg string, src any) []writeSite {
	t.Helper()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []writeSite
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		text, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
		}
		for _, m := range write.FindAllStringSubmatch(text, -1) {
			out = append(out, writeSite{table: m[1], pkg: pkg, pos: fset.Position(lit.Pos()).String()})
		}
		return true
	})
	return out
}

// repositoryWrites scans every non-test Go file under pkg/ and cmd/.
func repositoryWrites(t *testing.T) []writeSite {
	t.Helper()
	fset := token.NewFileSet()
	var out []writeSite
	for _, root := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join("..", root), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "node_modules":
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			rel, err := filepath.Rel("..", filepath.Dir(path))
			if err != nil {
				return err
			}
			out = append(out, writes(t, fset, path, filepath.ToSlash(rel), nil)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestOneWriterPerTable(t *testing.T) {
	t.Parallel()
	sites := repositoryWrites(t)
	if len(sites) < len(owners)/2 {
		t.Fatalf("found only %d write statements: is the scan looking in the right place?", len(sites))
	}
	for _, s := range sites {
		owner, known := owners[s.table]
		switch {
		case !known:
			t.Errorf("%s: %s writes table %s, which has no owner: add it to owners (db/ownership_test.go)", s.pos, s.pkg, s.table)
		case owner != s.pkg:
			t.Errorf("%s: %s writes table %s, owned by %s: call a function of %s instead", s.pos, s.pkg, s.table, owner, owner)
		}
	}
}

// functionOwner is the comment line naming the owner of the database function defined next.
var functionOwner = regexp.MustCompile(`(?m)^-- owner: (\S+)$`)

// functionDef finds a function definition and its body (between $$ or $tag$ quotes).
var functionDef = regexp.MustCompile(`(?s)CREATE (?:OR REPLACE )?FUNCTION ([a-z_][a-z0-9_]*)\(.*?AS (\$[a-z_]*\$)(.*?)(\$[a-z_]*\$)`)

// migrationWrites lists the write statements in the bodies of the database functions the up migrations
// define. A function's writer is the package its "-- owner:" comment names (the last such comment since
// the previous function); a function without one (trigger and count functions) writes as byTriggers.
func migrationWrites(t *testing.T) []writeSite {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("migrations", "*.up.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	var out []writeSite
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		prev := 0
		for _, m := range functionDef.FindAllStringSubmatchIndex(text, -1) {
			owner := byTriggers
			if o := functionOwner.FindAllStringSubmatch(text[prev:m[0]], -1); len(o) > 0 {
				owner = o[len(o)-1][1]
			}
			prev = m[1]
			name, body := text[m[2]:m[3]], text[m[6]:m[7]]
			for _, w := range write.FindAllStringSubmatch(body, -1) {
				out = append(out, writeSite{table: w[1], pkg: owner, pos: f + ": function " + name})
			}
		}
	}
	return out
}

// Database functions write only their owner's tables, as Go code does: the sale's statement converts
// customers, leads and clicks by calling their owners' functions.
func TestFunctionsWriteOnlyTheirOwnersTables(t *testing.T) {
	t.Parallel()
	sites := migrationWrites(t)
	byOwner := map[string]bool{}
	for _, s := range sites {
		byOwner[s.pkg] = true
		if owner, known := owners[s.table]; !known || owner != s.pkg {
			t.Errorf("%s (owner %s) writes table %s, owned by %q", s.pos, s.pkg, s.table, owner)
		}
	}
	for _, want := range []string{"pkg/sales", "pkg/attribution", "pkg/leads", "pkg/clicks", byTriggers} {
		if !byOwner[want] {
			t.Errorf("no function of %s found writing: is the scan looking in the right place?", want)
		}
	}
}

// Every table the migrations create has an owner in the table above.
func TestOwnersCoverTheSchema(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("migrations", "*.up.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v %v", files, err)
	}
	create := regexp.MustCompile(`CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			if _, ok := owners[m[1]]; !ok {
				t.Errorf("%s creates table %s, which has no owner in db/ownership_test.go", f, m[1])
			}
		}
	}
}

// The scan sees what it must (statements over several lines, concatenated queries) and nothing else
// (upserts' DO UPDATE, row locks, comments, lower-case prose).
func TestWriteScan(t *testing.T) {
	t.Parallel()
	src := "package x\n" +
		"// UPDATE comments_are_not_code SET x = 1\n" +
		"const q = `INSERT INTO\n\t\tcustomers (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id`\n" +
		"var r = `SELECT 1 FROM leads FOR UPDATE OF leads` + `; UPDATE clicks SET converted = true`\n" +
		"var s = \"DELETE FROM refunds WHERE id = $1\"\n" +
		"var u = \"update your backend's key\"\n"
	var got []string
	for _, w := range writes(t, token.NewFileSet(), "x.go", "pkg/x", src) {
		got = append(got, w.table)
	}
	if want := []string{"customers", "clicks", "refunds"}; !slices.Equal(got, want) {
		t.Errorf("tables written = %v, want %v", got, want)
	}
}
