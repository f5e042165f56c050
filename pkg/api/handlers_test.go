package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	gen "github.com/reftrack/reftrack/gen/server"
)

// maxHandlerLines bounds a strict handler method, from its func line to its closing brace: a handler
// turns wire types into a domain input, makes one domain call and turns its result into the typed
// response. A longer one carries rules that belong in a domain package.
const maxHandlerLines = 40

// Every method of the strict server interface is a method of one of the areas Server embeds, in that
// area's package, and none is longer than maxHandlerLines.
func TestHandlersAreShort(t *testing.T) {
	t.Parallel()
	operations := map[string]bool{}
	iface := reflect.TypeFor[gen.StrictServerInterface]()
	for i := range iface.NumMethod() {
		operations[iface.Method(i).Name] = true
	}
	found := map[string]string{}
	server := reflect.TypeFor[Server]()
	for i := range server.NumField() {
		area := server.Field(i).Type.Elem() // *tracking.Tracking, …
		const here = "github.com/reftrack/reftrack/pkg/api/"
		if !strings.HasPrefix(area.PkgPath(), here) {
			t.Fatalf("Server embeds %s from outside pkg/api", area)
		}
		dir := strings.TrimPrefix(area.PkgPath(), here)
		for _, m := range handlerMethods(t, dir, area.Name(), operations) {
			if prev, ok := found[m.name]; ok {
				t.Errorf("%s is implemented twice: %s and %s", m.name, prev, m.where)
			}
			found[m.name] = m.where
			if m.lines > maxHandlerLines {
				t.Errorf("%s (%s) has %d lines, at most %d: move its rules into a domain package", m.name, m.where, m.lines, maxHandlerLines)
			}
		}
	}
	for op := range operations {
		if _, ok := found[op]; !ok {
			t.Errorf("operation %s: no handler method found in the areas Server embeds", op)
		}
	}
}

type handlerMethod struct {
	name, where string
	lines       int
}

// handlerMethods are the methods of type typeName in the non-test files of dir that implement an
// operation.
func handlerMethods(t *testing.T, dir, typeName string, operations map[string]bool) []handlerMethod {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the files of %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var out []handlerMethod
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || !operations[fn.Name.Name] || receiverName(fn.Recv.List[0].Type) != typeName {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			out = append(out, handlerMethod{name: fn.Name.Name, where: start.String(), lines: end.Line - start.Line + 1})
		}
	}
	return out
}

func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
