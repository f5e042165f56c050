package main

import (
	"testing"

	"github.com/reftrack/reftrack/pkg/useragent"
)

func TestCut(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ua            string
		before, after string
		number        int
		ok            bool
	}{
		{"Mozilla/5.0 (X11) Gecko/20100101 Firefox/132.0", "Mozilla/5.0 (X11) Gecko/20100101 Firefox/132.", "", 0, true},
		{"AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.", "", 36, true},
		{"Version/17.5 Mobile/15E148 Safari/604.1 x", "Version/17.5 Mobile/15E148 Safari/604.", " x", 1, true},
		{"Opera/9.80 (J2ME/MIDP; Opera Mini/5.1.21214/28.2725; U; ru) Presto/2.8.119 Version/11.10", "Opera/9.80 (J2ME/MIDP; Opera Mini/5.1.21214/28.2725; U; ru) Presto/2.8.119 Version/11.", "", 10, true},
		{"Build 12 and 34", "", "", 0, false},
		{"", "", "", 0, false},
	} {
		got, ok := cut(c.ua)
		if ok != c.ok || (ok && (got.before != c.before || got.after != c.after || got.number != c.number)) {
			t.Errorf("cut(%q) = %+v, %v; want %q %d %q, %v", c.ua, got, ok, c.before, c.number, c.after, c.ok)
		}
	}
}

// TestBrowsers: the click-ua load's User-Agents are browsers', not bots', and no two of a load's are alike.
func TestBrowsers(t *testing.T) {
	t.Parallel()
	b, err := loadBrowsers("../../pkg/useragent/testdata/devices-sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.templates) < 1000 {
		t.Fatalf("%d templates of 2,600 User-Agents: too few kept", len(b.templates))
	}
	const n = 200000 // a 10 s load sends some 40,000
	seen := make(map[string]bool, n)
	for i := range uint64(n) {
		ua := b.at(i)
		if seen[ua] {
			t.Fatalf("User-Agent %d, %q, came before", i, ua)
		}
		seen[ua] = true
		if i%20 != 0 {
			continue
		}
		if d := useragent.Parse(ua); d.Bot || d.Browser == "" || d.OS == "" || d.Type == "" {
			t.Errorf("User-Agent %d, %q, parses as %+v: not a browser", i, ua, d)
		}
	}
}
