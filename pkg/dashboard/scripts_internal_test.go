package dashboard

import (
	"io/fs"
	"regexp"
	"slices"
	"testing"
)

// Every part in assets/dashboard is joined into app.js once, and the list names no file that is not
// there: a part added to the folder but not to the list would be missing from the page without a word.
func TestScriptsListsEveryPart(t *testing.T) {
	t.Parallel()
	inFolder, err := fs.Glob(files, "assets/dashboard/*.js")
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range inFolder {
		inFolder[i] = p[len("assets/dashboard/"):]
	}
	listed := slices.Clone(scripts)
	slices.Sort(listed)
	if len(slices.Compact(slices.Clone(listed))) != len(listed) {
		t.Errorf("scripts names a part twice: %v", scripts)
	}
	if !slices.Equal(listed, inFolder) {
		t.Errorf("scripts lists %v; assets/dashboard holds %v", listed, inFolder)
	}
	js, err := joinScripts()
	if err != nil {
		t.Fatal(err)
	}
	if len(js) < 10000 {
		t.Errorf("app.js is %d bytes: parts missing", len(js))
	}
}

// topLevel finds the names a script declares in its one function scope (two spaces in).
var topLevel = regexp.MustCompile(`(?m)^  (?:function|var) ([A-Za-z_$][A-Za-z0-9_$]*)`)

// Each name is declared once in a page's joined script: the parts and the shared helpers share one scope,
// where a second function of one name would replace the first without a word.
func TestScriptsDeclareEachNameOnce(t *testing.T) {
	t.Parallel()
	dash, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	portal, err := LoadPortal()
	if err != nil {
		t.Fatal(err)
	}
	for _, js := range []struct {
		name string
		body []byte
	}{{"app.js", dash.Files["app.js"].Body}, {"portal.js", portal.Files["portal.js"].Body}} {
		seen := map[string]bool{}
		for _, m := range topLevel.FindAllSubmatch(js.body, -1) {
			if n := string(m[1]); seen[n] {
				t.Errorf("%s declares %s twice", js.name, n)
			} else {
				seen[n] = true
			}
		}
		for _, shared := range []string{"api", "money", "notice", "el", "LOGIN"} {
			if !seen[shared] {
				t.Errorf("%s declares no %s (the shared helpers or the page's LOGIN missing)", js.name, shared)
			}
		}
	}
}
