// Package docs is the repository's documentation (Markdown, and the images it shows). Its tests keep the
// documentation true where a program can tell: the README's size, every relative link, no rule cited from
// outside the repository, and `make fuzz` running every fuzz target, as docs/testing.md says.
package docs

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository's root, from this package's directory (where go test runs its tests).
const root = ".."

// maxREADME is the README's budget: what it is, the two commands, the first minute and the map of docs/;
// the rest belongs in docs/.
const maxREADME = 15 << 10

func TestREADMEFitsItsBudget(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxREADME {
		t.Errorf("README.md is %d bytes, over its %d: move the detail to a page of docs/ and link it", len(b), maxREADME)
	}
}

// Every relative link of the README, the changelog and docs/*.md names a file that exists, and an anchor
// into a Markdown file names one of its headings.
func TestRelativeLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "CHANGELOG.md"))
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(text)) {
			if isAbsolute(target) {
				continue
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			file := page // a bare #anchor is this page's
			if path != "" {
				file = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s, which does not exist", rel(page), target)
				continue
			}
			if anchor != "" && strings.HasSuffix(file, ".md") && !hasAnchor(t, file, anchor) {
				t.Errorf("%s links to %s: %s has no heading with that anchor", rel(page), target, rel(file))
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no relative link at all; has the link pattern stopped matching?")
	}
}

// The rules the code follows live in the repository (docs/rules.md, the spec): no tracked file but the
// changelog's history cites the decisions file that lay outside it, and every section of docs/rules.md
// cited anywhere exists.
func TestRulesCitedFromTheRepository(t *testing.T) {
	t.Parallel()
	outside := "decisions" + ".md" // spelled apart, so that this file does not cite it
	section := regexp.MustCompile(`rules\.md#([A-Za-z0-9_-]+)`)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files; is this a checkout of the repository?", len(files))
	}
	rules := filepath.Join(root, "docs", "rules.md")
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary
		}
		text := string(b)
		if name != "CHANGELOG.md" && strings.Contains(text, outside) {
			t.Errorf("%s cites %s, which is not in the repository: cite docs/rules.md#<section> or the spec", name, outside)
		}
		for _, m := range section.FindAllStringSubmatch(text, -1) {
			if !hasAnchor(t, rules, m[1]) {
				t.Errorf("%s cites docs/rules.md#%s, which is not a section of docs/rules.md", name, m[1])
			}
		}
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```[^\\n]*$")
	codeSpan   = regexp.MustCompile("`[^`\\n]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
)

// links returns the targets of text's Markdown links and images, outside code.
func links(text string) []string {
	text = codeSpan.ReplaceAllString(fence.ReplaceAllString(text, ""), "")
	var out []string
	for _, re := range []*regexp.Regexp{inlineLink, refLink} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			out = append(out, strings.Trim(m[1], "<>"))
		}
	}
	return out
}

// isAbsolute reports whether target leaves the repository: a URL with a scheme, or a host-relative path.
func isAbsolute(target string) bool {
	if strings.HasPrefix(target, "/") {
		return true
	}
	scheme, _, ok := strings.Cut(target, ":")
	return ok && !strings.ContainsAny(scheme, "/#.")
}

// hasAnchor reports whether the Markdown file has a heading whose anchor, as GitHub makes them, is anchor.
func hasAnchor(t *testing.T, file, anchor string) bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(fence.ReplaceAllString(string(b), ""), "\n") {
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		// A repeated heading's anchor gets -1, -2, … as GitHub numbers them.
		a := slug(heading)
		n := seen[a]
		seen[a] = n + 1
		if n > 0 {
			a += "-" + strconv.Itoa(n)
		}
		if a == anchor {
			return true
		}
	}
	return false
}

var linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor of a heading: its text (a link's words only), lower case, without punctuation,
// spaces turned into hyphens.
func slug(heading string) string {
	heading = strings.TrimSpace(linkText.ReplaceAllString(heading, "$1"))
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func rel(path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}
