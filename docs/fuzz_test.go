package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// `make fuzz` runs every fuzz target of every package (docs/testing.md): the Makefile's list, which it
// finds with grep, must hold every function the Go parser reads as a fuzz target, and nothing else.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	want := fuzzTargets(t, root)
	if len(want) == 0 {
		t.Fatal("found no fuzz target in the repository's test files; has the walk lost its way?")
	}
	cmd := exec.Command("make", "-s", "--no-print-directory", "fuzz-targets")
	cmd.Dir = root
	// A `make test` above this test passes its flags and job server down; this make needs neither.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make fuzz-targets: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	for _, target := range want {
		if !slices.Contains(got, target) {
			t.Errorf("make fuzz would not run %s (not in `make fuzz-targets`)", target)
		}
	}
	for _, target := range got {
		if !slices.Contains(want, target) {
			t.Errorf("`make fuzz-targets` lists %s, which is not a fuzz target", target)
		}
	}
}

// fuzzTargets is every fuzz target under dir as `./package/dir:FuzzName`, sorted: each test file's
// top-level `func FuzzName(f *testing.F)`, the functions `go test -fuzz` runs.
func fuzzTargets(t *testing.T, dir string) []string {
	t.Helper()
	var targets []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			// The go tool skips testdata, and names starting with . or _; node_modules, bin and .data
			// hold no code of ours.
			if path != dir && (name == "testdata" || name == "node_modules" || name == "bin" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := "./" + filepath.ToSlash(rel) // as make lists it: ./pkg/api, or . at the root
		if rel == "." {
			pkg = "."
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && isFuzzTarget(fn) {
				targets = append(targets, pkg+":"+fn.Name.Name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(targets)
	return targets
}

// isFuzzTarget reports whether fn is a fuzz target: FuzzXxx, no receiver, one parameter of type *testing.F.
func isFuzzTarget(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || fn.Type.Params.NumFields() != 1 {
		return false
	}
	star, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testing" && sel.Sel.Name == "F"
}
