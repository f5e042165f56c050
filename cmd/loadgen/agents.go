package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"

	"github.com/reftrack/reftrack/pkg/useragent"
)

// browsers makes a browser User-Agent of its own for every request of the click-ua load: real browsers'
// User-Agents (the corpus the useragent tests keep, pkg/useragent/testdata) with their last version
// number varied. Request i takes template i mod n, whose last dotted number (the build in
// "Safari/537.36", "Firefox/132.0") grows by i div n: realistic strings, each seen once, so that every
// click misses the server's User-Agent cache.
type browsers struct {
	templates []template
}

// template is a User-Agent cut around its last number that follows a dot.
type template struct {
	before, after string
	number        int
}

// loadBrowsers reads a corpus of User-Agents, one a line, and keeps those useragent.Parse calls a
// desktop, mobile or tablet browser on a known OS (not a bot) and that have a dotted number to vary.
func loadBrowsers(path string) (*browsers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("browser User-Agents for the click-ua load: %w", err)
	}
	defer f.Close()
	b := &browsers{}
	seen := map[[2]string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		ua := sc.Text()
		d := useragent.Parse(ua)
		if d.Bot || d.Browser == "" || d.OS == "" || (d.Type != "desktop" && d.Type != "mobile" && d.Type != "tablet") {
			continue
		}
		t, ok := cut(ua)
		if !ok || seen[[2]string{t.before, t.after}] {
			continue
		}
		seen[[2]string{t.before, t.after}] = true
		b.templates = append(b.templates, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(b.templates) == 0 {
		return nil, fmt.Errorf("no browser User-Agent in %s", path)
	}
	return b, nil
}

// cut finds the last run of digits that follows a dot. Since no dot followed by a digit comes after it,
// two templates can only make the same string from the same cut: the strings are distinct as long as the
// templates' (before, after) pairs are.
func cut(ua string) (template, bool) {
	for end := len(ua); end > 0; end-- {
		if !isDigit(ua[end-1]) {
			continue
		}
		start := end
		for start > 0 && isDigit(ua[start-1]) {
			start--
		}
		if start == 0 || ua[start-1] != '.' {
			end = start
			continue
		}
		n, err := strconv.Atoi(ua[start:end])
		if err != nil || end-start > 9 {
			return template{}, false
		}
		return template{before: ua[:start], after: ua[end:], number: n}, true
	}
	return template{}, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// at is request i's User-Agent.
func (b *browsers) at(i uint64) string {
	n := uint64(len(b.templates))
	t := b.templates[i%n]
	return t.before + strconv.FormatUint(uint64(t.number)+i/n, 10) + t.after
}
