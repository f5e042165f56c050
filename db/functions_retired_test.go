package db_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/db"
)

// A retired function is only the previous build's: a later release drops it. So its replacement is one of
// this build's functions, and nothing of this build calls it: no function's body (a new function calling
// an old one would break once the old is dropped) and no Go source outside tests.
func TestRetiredFunctionsAreNotCalled(t *testing.T) {
	t.Parallel()
	fns, err := db.Functions()
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]bool{}
	for _, f := range fns {
		current[f.Name] = true
	}
	calls := map[string]*regexp.Regexp{}
	for old, replacement := range retiredFunctions {
		if !current[replacement] {
			t.Errorf("retired function %s names %s as its replacement, which is not one of this build's functions", old, replacement)
		}
		if current[old] {
			t.Errorf("retired function %s is still defined by an owner's sql/ folder", old)
		}
		calls[old] = regexp.MustCompile(`\b` + old + `\s*\(|"` + old + `"`)
	}
	for _, f := range fns {
		for old, call := range calls {
			if call.MatchString(f.SQL) {
				t.Errorf("%s/sql/%s.sql calls the retired function %s: call %s", f.Owner, f.Name, old, retiredFunctions[old])
			}
		}
	}
	var goFiles int
	for _, dir := range []string{"../cmd", "../pkg", "."} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "node_modules" || d.Name() == "migrations"):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			goFiles++
			for old, call := range calls {
				// The regular expression only where the name occurs at all: it was most of this test's time.
				if bytes.Contains(b, []byte(old)) && call.Match(b) {
					t.Errorf("%s calls the retired function %s: call %s", path, old, retiredFunctions[old])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if goFiles < 50 {
		t.Fatalf("read only %d Go files: is the walk looking in the right place?", goFiles)
	}
}
