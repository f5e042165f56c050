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

	"github.com/reftrack/reftrack/db"
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
	// Partners' invitations; their enrollments are pkg/programs' relationships.
	"partner_invitations": "pkg/enrollment",
	// The people who sign in to the partner portal, and their sessions.
	"partner_people":   "pkg/logins",
	"partner_sessions": "pkg/logins",
	// Mail to send, and sent (the outbox).
	"mail_outbox": "pkg/mail",
	// Tracking.
	"clicks": "pkg/clicks",
	// The clicks kept past retention.
	"clicks_kept": "pkg/clicks",
	"customers":   "pkg/attribution",
	"leads":       "pkg/leads",
	"sales":       "pkg/sales",
	"refunds":     "pkg/sales",
	// A commission's life after its sale: hold, approval, payouts, clawbacks.
	"commissions":          "pkg/ledger",
	"commission_clawbacks": "pkg/ledger",
	"payouts":              "pkg/ledger",
	// Outbound webhooks: endpoints, the outbox (written by pkg/webhooks' triggers on the owners' tables),
	// deliveries and their attempts.
	"webhook_endpoints":  "pkg/webhooks",
	"webhook_events":     "pkg/webhooks",
	"webhook_deliveries": "pkg/webhooks",
	"webhook_attempts":   "pkg/webhooks",
	// The first answers to POSTs sent with an Idempotency-Key.
	"idempotency_keys": "pkg/idempotency",
	// Payment processors.
	"processor_connections": "pkg/payments",
	"processor_events":      "pkg/payments",
	// The audit log of operator actions (suspend, unsuspend, key rotation mark, key regeneration).
	"audit_log": "pkg/audit",
	// Runs of `reftrack test --chain`.
	"synthetic_chains": "pkg/synthetic",
	// The counts of a program's activity: deltas appended by pkg/events (Add, and performance_add, which the
	// events' writers call with what pkg/counting decided), folded into the rest by its roll-up.
	"performance_hourly":        "pkg/events",
	"performance_daily":         "pkg/events",
	"performance_monthly":       "pkg/events",
	"performance_program_daily": "pkg/events",
	"performance_deltas":        "pkg/events",
	// The migrations' record of which migrations are backward compatible (written by db.MigrateUp).
	"schema_compatibility": "db",
	// The reftrackd processes serving the database.
	"server_instances": "pkg/platform/peers",
	// cmd/loadgen's own benchmark table (it creates it itself; not part of the schema).
	"bench_insert": "cmd/loadgen",
}

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

// functionWrites lists the write statements in the bodies of the owner packages' database functions
// (pkg/*/sql/*.sql); a function's writer is the package whose folder holds it.
func functionWrites(t *testing.T) []writeSite {
	t.Helper()
	fns, err := db.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var out []writeSite
	for _, f := range fns {
		for _, w := range write.FindAllStringSubmatch(stripComments(f.SQL), -1) {
			out = append(out, writeSite{table: w[1], pkg: f.Owner, pos: f.Owner + "/sql/" + f.Name + ".sql"})
		}
	}
	return out
}

// stripComments drops SQL line comments, whose prose may say "update" or "insert into".
func stripComments(s string) string {
	return regexp.MustCompile(`--[^\n]*`).ReplaceAllString(s, "")
}

// Database functions write only their owners' tables, as Go code does: the sale's function converts
// customers, leads and clicks by calling their owners' functions.
func TestFunctionsWriteOnlyTheirOwnersTables(t *testing.T) {
	t.Parallel()
	sites := functionWrites(t)
	byOwner := map[string]bool{}
	for _, s := range sites {
		byOwner[s.pkg] = true
		if owner, known := owners[s.table]; !known || owner != s.pkg {
			t.Errorf("%s (owner %s) writes table %s, owned by %q", s.pos, s.pkg, s.table, owner)
		}
	}
	for _, want := range []string{"pkg/sales", "pkg/attribution", "pkg/leads", "pkg/clicks", "pkg/events"} {
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
