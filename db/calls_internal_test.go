package db

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/reftrack/reftrack"

var (
	sqlCall    = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\s*\(`)
	sqlComment = regexp.MustCompile(`--[^\n]*`)
)

// A database function may call another owner's function only when its owner's sql package names that
// function in Calls, through the callee's sql package: the dependency between owners is then one Go's
// imports show (go list -deps ./pkg/sales lists pkg/ledger/sql), and Go refuses a cycle between them.
// Calls holds exactly the calls the bodies make.
func TestCallsBetweenOwnersAreImports(t *testing.T) {
	t.Parallel()
	fns, ownerOf := functionOwnersByName(t)
	made := map[string]map[string]string{} // caller owner → callee function → a file calling it
	for _, f := range fns {
		for _, m := range sqlCall.FindAllStringSubmatch(sqlComment.ReplaceAllString(f.SQL, ""), -1) {
			o, ok := ownerOf[m[1]]
			if !ok || o == f.Owner {
				continue
			}
			if made[f.Owner] == nil {
				made[f.Owner] = map[string]string{}
			}
			made[f.Owner][m[1]] = f.Owner + "/sql/" + f.Name + ".sql"
		}
	}
	if len(made["pkg/sales"]) == 0 {
		t.Fatal("found no call from pkg/sales' functions to another owner's: the scan is broken")
	}
	for _, o := range functionOwners {
		declared := map[string]bool{}
		for _, name := range o.calls {
			declared[name] = true
			switch callee, ok := ownerOf[name]; {
			case !ok:
				t.Errorf("%s/sql's Calls names %s, which is no owner's function", o.pkg, name)
			case callee == o.pkg:
				t.Errorf("%s/sql's Calls names its own function %s", o.pkg, name)
			case made[o.pkg][name] == "":
				t.Errorf("%s/sql's Calls names %s, which none of its functions calls", o.pkg, name)
			}
		}
		imports := sqlPackageImports(t, o.pkg)
		for name, file := range made[o.pkg] {
			callee := ownerOf[name]
			if !declared[name] {
				t.Errorf("%s calls %s of %s: name it in %s/sql's Calls, through %s/sql", file, name, callee, o.pkg, callee)
			}
			if !imports[module+"/"+callee+"/sql"] {
				t.Errorf("%s calls %s of %s, but %s/sql does not import %s/sql", file, name, callee, o.pkg, callee)
			}
		}
	}
}

// functionOwnersByName is every owner's functions, and each function's owner by its name.
func functionOwnersByName(t *testing.T) ([]Function, map[string]string) {
	t.Helper()
	fns, err := Functions()
	if err != nil {
		t.Fatal(err)
	}
	ownerOf := map[string]string{}
	for _, f := range fns {
		ownerOf[f.Name] = f.Owner
	}
	return fns, ownerOf
}

// sqlPackageImports are the import paths of the Go files of pkg's sql folder.
func sqlPackageImports(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	dir := filepath.Join("..", pkg, "sql")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s (%v)", dir, err)
	}
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			out[p] = true
		}
	}
	return out
}

// Go code outside a function's owner calls it through the owner's sql package's constant (accountssql.
// SuspendedOwners), never by a name in a string: the dependency is then an import, as between functions.
func TestGoCallsOtherOwnersFunctionsThroughTheirPackages(t *testing.T) {
	t.Parallel()
	_, ownerOf := functionOwnersByName(t)
	checked := 0
	for _, root := range []string{"pkg", "cmd"} {
		err := filepath.WalkDir(filepath.Join("..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			af, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
			checked++
			ast.Inspect(af, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				for _, m := range sqlCall.FindAllStringSubmatch(lit.Value, -1) {
					o, ok := ownerOf[m[1]]
					if ok && !strings.HasPrefix(rel, o+"/") {
						t.Errorf("%s calls %s, a function of %s, by its name: use the constant of %s/sql", rel, m[1], o, o)
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files: the walk is broken", checked)
	}
}
