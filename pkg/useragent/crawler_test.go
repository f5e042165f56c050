package useragent

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/x-way/crawlerdetect"
)

// corpus reads a file of testdata/ (see testdata/README.md), one User-Agent a line.
func corpus(t testing.TB, name string) []string {
	t.Helper()
	return lines(t, filepath.Join("testdata", name))
}

func lines(t testing.TB, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFastPathIsOn(t *testing.T) {
	t.Parallel()
	d := fastDetector()
	if d == nil {
		t.Fatalf("the fast crawler check is off, every User-Agent goes through crawlerdetect's regular expressions: %v", fastPathErr)
	}
	if !d.nonASCII {
		t.Error("User-Agents with a rune outside ASCII go through crawlerdetect's regular expressions: a pattern's class holds some of them only, or a literal is one")
	}
}

// TestSameAsReferenceOnCorpus: crawlerdetect's crawler list and a sample of its browser list give the same
// crawler verdicts, and the same devices, as before. Under the race detector, crawlerdetect itself is asked
// about every 100th line only (its regular expressions are that slow there), and the corpus file gives its
// verdict on the others: a run without the race detector asks it about every line.
func TestSameAsReferenceOnCorpus(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file    string
		crawler bool // crawlerdetect's verdict on every line
	}{{"crawlers.txt", true}, {"devices-sample.txt", false}} {
		uas := corpus(t, c.file)
		label := func(string) bool { return c.crawler }
		// Two halves in parallel: crawlerdetect's own check is most of the time.
		for half := range 2 {
			first := half * len(uas) / 2
			part := uas[first : (half+1)*len(uas)/2]
			t.Run(c.file+"/"+[]string{"first half", "second half"}[half], func(t *testing.T) {
				t.Parallel()
				for i, ua := range part {
					reference := crawlerdetect.IsCrawler
					if raceEnabled && (first+i)%100 != 0 {
						reference = label
					}
					verdict := reference(ua)
					if verdict != c.crawler {
						t.Errorf("crawlerdetect.IsCrawler(%q) = %v: the corpus says %v", ua, verdict, c.crawler)
					}
					if got := isCrawler(ua); got != verdict {
						t.Errorf("isCrawler(%q) = %v, crawlerdetect says %v", ua, got, verdict)
					}
					// The reference with crawlerdetect's verdict asked once.
					if got, want := Parse(ua), parseReferenceWith(ua, func(string) bool { return verdict }); got != want {
						t.Errorf("Parse(%q) = %+v, want %+v", ua, got, want)
					}
				}
			})
		}
	}
}

// TestSameAsReferenceOnAllDevices checks crawlerdetect's whole browser list (165,634 lines) from the module
// cache, and its crawler list. It takes about three minutes: REFTRACK_UA_FULL=1 runs it (make test-ua-full).
func TestSameAsReferenceOnAllDevices(t *testing.T) {
	if os.Getenv("REFTRACK_UA_FULL") == "" {
		t.Skip("REFTRACK_UA_FULL=1 checks crawlerdetect's whole browser list (make test-ua-full)")
	}
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/x-way/crawlerdetect").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, file := range []string{"devices.txt", "crawlers.txt"} {
		path := filepath.Join(strings.TrimSpace(string(out)), "testdata", file)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("crawlerdetect's test data is not in the module cache: %v", err)
		}
		uas := lines(t, path)
		var wg sync.WaitGroup
		for half := range 2 {
			wg.Go(func() {
				for _, ua := range uas[half*len(uas)/2 : (half+1)*len(uas)/2] {
					if got, want := Parse(ua), parseReference(ua); got != want {
						t.Errorf("Parse(%q) = %+v, want %+v", ua, got, want)
					}
					if got, want := isCrawler(ua), crawlerdetect.IsCrawler(ua); got != want {
						t.Errorf("isCrawler(%q) = %v, crawlerdetect says %v", ua, got, want)
					}
				}
			})
		}
		wg.Wait()
		t.Logf("%s: %d User-Agents compared", file, len(uas))
	}
}

// libraryExclusions is crawlerdetect's exclusion step composed as the library composes it, for tests.
var libraryExclusions = sync.OnceValue(func() *regexp.Regexp {
	_, exclusions, err := libraryLists()
	if err != nil {
		panic(err)
	}
	return regexp.MustCompile("(?i)(" + strings.Join(exclusions, "|") + ")")
})

// checkSame compares Parse and the crawler check, and their intermediate string, with the reference.
func checkSame(t *testing.T, ua string) {
	t.Helper()
	if got, want := Parse(ua), parseReference(ua); got != want {
		t.Errorf("Parse(%q) = %+v, want %+v", ua, got, want)
	}
	if got, want := isCrawler(ua), crawlerdetect.IsCrawler(ua); got != want {
		t.Errorf("isCrawler(%q) = %v, crawlerdetect says %v", ua, got, want)
	}
	d := fastDetector()
	if d == nil {
		return
	}
	trimmed := strings.TrimSpace(ua)
	folded, nonASCII, ok := fold(nil, trimmed)
	if _, took := d.isCrawler(trimmed); took != (ok && (!nonASCII || d.nonASCII)) {
		t.Errorf("the fast path took %q: %v", ua, took)
	}
	if !ok {
		return
	}
	want, _, _ := fold(nil, libraryExclusions().ReplaceAllString(trimmed, ""))
	if got := d.excluder.exclude(nil, folded); string(got) != string(want) {
		t.Errorf("exclusions of %q leave %q, crawlerdetect's leave %q (folded)", ua, got, want)
	}
}

// edgeCases are strings at the edges of the fast path's argument: overlapping and nested exclusions, the
// optional groups of (like )?Gecko(.[\d\.]*)?, greedy runs that stop early, case folding outside ASCII
// (the Kelvin sign folds to k, the long s to s), anchors, whitespace that is trimmed and whitespace that
// is not.
var edgeCases = []string{
	"", " ", "\t\n", "x", "bot", "BOT", "Bot ", " bot",
	"like gecko", "like like gecko", "Like Gecko/", "gecko", "gecko\n1", "like geckogecko/1.2", "geckolike gecko",
	"Opera", "Opera/", "Opera/9.80", "Opera Mini/12.34.5/6.", "opera mini/1.2./3.", "Opera Mini/123.4.5/6.", "Opera Mini/1.2.3",
	"Safari", "Safari/", "Safari\n1.2", "SafariSafari/1", "safari.1.2.3safari", " Chrome/1", "Chromium/2", "chrome/3",
	"CPU iPhone OS 17_5 like Mac OS X", "CPU iPhone OS like Mac OS X", "CPU iPhone OS 1_2 like Mac OS", "CPU OS 17_5 like Mac OS X",
	"Mac OS X 10_15_7", "mac os x", "Windows NT 10.0", "Windows NT", "x86_64", "x86_", "x86_6",
	"super/12/Android/34", "super/12/android/", "super//Android/3", "Android 14", "android",
	" .NET CLR 2.0.50727", " .NET4.0C", ".NET CLR", "; M bot", "; m bot", "; IDbot", "; ID bot x",
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 bot",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36\u00a0",
	"\u00a0Twitterbot/1.0\u3000", "Twitterbot/1.0\u0085",
	"Mozilla/5.0 (\u212Aindle) Safari/1", "\u017Fafari/1.2 curl/8", "ſafari", "CURL/8.5.0", "cUrL/7",
	"Java/1.8", "java/1.8", " Java/1.8", "xJava/1.8", "b0t", "B0T", "b0t ", "b0tx", "Amazon Simple Notification Service Agent",
	"\xff\xfe", "Mozilla/5.0 \xc3\x28", "\xe2\x84 Intel\xaa", "\xe2\x84 intelk", "Caf\u00e9 Safari/1.2", "\u00e9bot", "b\u00e9ot", "bo\ufffdt",
	"Mozilla/5.0 (Linux; Android 9; \u0421\u0430\u043c\u0441\u0443\u043d\u0433) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36",
	"Safari\u00e9/1", "Safari\u00e91.2", "like\u00e9gecko", "Gecko\u00e91.2", "Opera Mini/1.2.\u00e9/3.", "\ufffd", "\u2028bot\u2029", "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
	"Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; SLCC2; .NET CLR 2.0.50727; Media Center PC 6.0; rv:11.0) like Gecko",
	"Mozilla/5.0 (Linux; U; Android 4.0.3; ko-kr; LG-L160L Build/IML74K) AppleWebkit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30 YandexSearch/7",
}

// FuzzParse compares Parse, the crawler check and the exclusions' remainder with the reference on any
// string. Its seeds, the edge cases and every 200th line of both corpora, run in every `go test`.
func FuzzParse(f *testing.F) {
	for _, ua := range edgeCases {
		f.Add(ua)
	}
	for _, file := range []string{"crawlers.txt", "devices-sample.txt"} {
		for i, ua := range corpus(f, file) {
			if i%200 == 0 {
				f.Add(ua)
			}
		}
	}
	f.Fuzz(func(t *testing.T, ua string) {
		checkSame(t, ua)
	})
}

// synthetic is a pair of lists of our own, through both crawlerdetect and the fast path: exclusions that
// overlap, share a start, nest, end in optional groups or need a greedy run to stop; crawler patterns with
// anchors, word boundaries, alternations, classes that hold every rune outside ASCII, and none of a literal.
type synthetic struct {
	ref  *crawlerdetect.CrawlerDetect
	d    *detector
	excl *regexp.Regexp // the exclusion step as crawlerdetect composes it
}

var syntheticLists = sync.OnceValues(func() (*synthetic, error) {
	exclusions := []string{`ab`, `abc`, `A.[\d\.]*`, `(x )?ab(.[\d\.]*)?`, `b\d{1,2}\.`, `ca+`, `c ?a`, `[ ]b`, `B9`, `9[ab]*/`}
	crawlers := []string{`^ab`, `b$`, `x[0-9]+`, `\bca`, `a.b`, `c`, `9 9`, `(ab|ba)c`, `[0-9]{3}`, `^$`, `k`, `/x/`, `\.\.`,
		`[^/]9x`, `\S\S\S\S\S\S\S\S`, `0.{3}0`}
	ref := crawlerdetect.New()
	ref.SetExclusions(exclusions)
	ref.SetCrawlers(crawlers)
	d, err := newDetector(crawlers, exclusions)
	if err != nil {
		return nil, err
	}
	if len(d.always) == 0 || !d.nonASCII {
		return nil, fmt.Errorf("the test lists no longer cover a crawler pattern without a literal (%d) or strings outside ASCII (%v)", len(d.always), d.nonASCII)
	}
	return &synthetic{ref: ref, d: d, excl: regexp.MustCompile("(?i)(" + strings.Join(exclusions, "|") + ")")}, nil
})

// check compares the fast path with crawlerdetect on s; it returns crawlerdetect's verdict.
func (l *synthetic) check(t *testing.T, s string) bool {
	t.Helper()
	trimmed := strings.TrimSpace(s)
	want := l.ref.IsCrawler(s)
	folded, nonASCII, foldOK := fold(nil, trimmed)
	got, ok := l.d.isCrawler(trimmed)
	if ok != (foldOK && (!nonASCII || l.d.nonASCII)) {
		t.Fatalf("%q: fast path taken %v", s, ok)
	}
	if !ok {
		return want
	}
	if got != want {
		t.Errorf("%q: fast path says crawler %v, crawlerdetect %v", s, got, want)
	}
	wantRest, _, _ := fold(nil, l.excl.ReplaceAllString(trimmed, ""))
	if got := l.d.excluder.exclude(nil, folded); string(got) != string(wantRest) {
		t.Errorf("%q: exclusions leave %q, crawlerdetect's %q (folded)", s, got, wantRest)
	}
	return want
}

// syntheticPieces make the test strings: ASCII, a rune that folds to ASCII (the Kelvin sign), others, and
// the three bytes of the Kelvin sign alone (invalid UTF-8, which removals could join into the rune).
var syntheticPieces = []string{"a", "b", "c", "x", "A", "B", "C", "X", " ", ".", "0", "9", "/", "\n", "\t",
	"\u212A", "\u00e9", "\ufffd", "\u00a0", "\xe2", "\x84", "\xaa"}

func TestSyntheticLists(t *testing.T) {
	t.Parallel()
	l, err := syntheticLists()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(26, 7))
	crawlersSeen, n := 0, 20000
	if raceEnabled {
		n = 4000 // crawlerdetect's regular expressions are slow under the race detector
	}
	for range n {
		var b strings.Builder
		for range rng.IntN(24) {
			b.WriteString(syntheticPieces[rng.IntN(len(syntheticPieces))])
		}
		if l.check(t, b.String()) {
			crawlersSeen++
		}
	}
	if crawlersSeen < n/20 || crawlersSeen > n*19/20 {
		t.Errorf("%d of %d strings are crawlers: the test strings no longer exercise both verdicts", crawlersSeen, n)
	}
}

// FuzzSyntheticLists explores the synthetic lists' edges further than TestSyntheticLists, at a rate the
// real lists do not allow (crawlerdetect's regular expressions over 1,400 patterns are slow).
func FuzzSyntheticLists(f *testing.F) {
	for _, s := range []string{"", "x ab.1.2", "like x ab", "abc", "b12.c aa", "9ab/ ca", "\u212Aa", "\xe2\x84ab\xaa", "0\u00e9\u00e9\u00e90"} {
		f.Add(s)
	}
	l, err := syntheticLists()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) { l.check(t, s) })
}

// TestNonASCIIOff: a class that holds some runes outside ASCII but not all, or a literal outside ASCII, sends
// strings outside ASCII to crawlerdetect; ASCII strings still take the fast path.
func TestNonASCIIOff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ exclusions, crawlers []string }{
		{[]string{`ab`}, []string{`x[a-z\x{e0}-\x{ff}]`}},
		{[]string{`ab`}, []string{`caf\x{e9}`}},
		{[]string{`a[\pL]`}, []string{`x`}},
	} {
		d, err := newDetector(c.crawlers, c.exclusions)
		if err != nil {
			t.Fatal(err)
		}
		if d.nonASCII {
			t.Errorf("%q, %q: strings outside ASCII take the fast path", c.exclusions, c.crawlers)
		}
		if _, ok := d.isCrawler("x\u00e9"); ok {
			t.Errorf("%q, %q: the fast path took a string outside ASCII", c.exclusions, c.crawlers)
		}
		if _, ok := d.isCrawler("xe"); !ok {
			t.Errorf("%q, %q: the fast path refused an ASCII string", c.exclusions, c.crawlers)
		}
	}
}

// TestRefusesWhatItCannotDoExactly: lists the fast path cannot prove it handles exactly turn it off.
func TestRefusesWhatItCannotDoExactly(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                 string
		exclusions, crawlers []string
	}{
		{"exclusion without a leading literal", []string{`a*b`}, []string{`x`}},
		{"exclusion of alternatives", []string{`ab|cd`}, []string{`x`}},
		{"exclusion needing backtracking", []string{`ab*b`}, []string{`x`}},
		{"exclusion with a varying step before an optional one", []string{`ab*c?d`}, []string{`x`}},
		{"non-greedy exclusion", []string{`ab+?c`}, []string{`x`}},
		{"anchored exclusion", []string{`^ab`}, []string{`x`}},
		{"exclusion at a word boundary", []string{`ab\b`}, []string{`x`}},
		{"repeated group in an exclusion", []string{`a(bc)*`}, []string{`x`}},
		{"exclusion outside ASCII", []string{`aé`}, []string{`x`}},
		{"exclusion setting flags", []string{`(?-i)ab`}, []string{`x`}},
		{"crawler pattern setting flags", []string{`ab`}, []string{`(?-i)x`}},
		{"crawler pattern that does not parse", []string{`ab`}, []string{`x(`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := newDetector(c.crawlers, c.exclusions); err == nil {
				t.Errorf("newDetector(%q, %q) accepted lists it cannot handle exactly", c.crawlers, c.exclusions)
			}
		})
	}
}
