package webui_test

import (
	"regexp"
	"testing"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/portalpage"
)

// topLevel finds the names a script declares in its one function scope (two spaces in).
var topLevel = regexp.MustCompile(`(?m)^  (?:function|var) ([A-Za-z_$][A-Za-z0-9_$]*)`)

// Each name is declared once in a page's joined script: the parts and the shared helpers share one scope,
// where a second function of one name would replace the first without a word.
func TestScriptsDeclareEachNameOnce(t *testing.T) {
	t.Parallel()
	for _, js := range pageScripts(t) {
		seen := map[string]bool{}
		for _, m := range topLevel.FindAllSubmatch(js.body, -1) {
			if n := string(m[1]); seen[n] {
				t.Errorf("%s declares %s twice", js.name, n)
			} else {
				seen[n] = true
			}
		}
		for _, shared := range []string{"api", "money", "notice", "el", "copyText", "LOGIN"} {
			if !seen[shared] {
				t.Errorf("%s declares no %s (the shared helpers or the page's LOGIN missing)", js.name, shared)
			}
		}
	}
}

// pageScripts are both pages' joined scripts, as served.
func pageScripts(t *testing.T) []struct {
	name string
	body []byte
} {
	t.Helper()
	dash, err := dashboard.Load()
	if err != nil {
		t.Fatal(err)
	}
	portal, err := portalpage.Load()
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		name string
		body []byte
	}{{"app.js", dash.Files["app.js"].Body}, {"portal.js", portal.Files["portal.js"].Body}}
}
