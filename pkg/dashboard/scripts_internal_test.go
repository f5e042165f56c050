package dashboard

import (
	"io/fs"
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
