package useragent

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/coregx/ahocorasick"
	"github.com/x-way/crawlerdetect"
)

// isCrawler is crawlerdetect.IsCrawler, the same verdict for every string, at a small fraction of its cost
// (about 1 µs against 350 – 500 µs) for the strings browsers and crawlers send.
//
// crawlerdetect (v0.2.24) runs two regular expressions, each a (?i) alternation of a whole list: it deletes
// every match of the 51 exclusions (browser tokens such as "Mozilla/5.0" or "Safari/537.36") from the
// trimmed User-Agent, then looks for any of the 1,411 crawler patterns in what remains. Go's regexp runs an
// alternation that wide as one automaton over every byte, some 350 µs per string. The fast path computes
// the same two steps from the same lists, pattern by pattern:
//
//   - Case. A (?i) pattern matches a string exactly where the pattern rewritten case-sensitively, its
//     literals lowercased, matches the string folded: ASCII lowercased, every other rune one byte (the
//     conditions, checked when the lists are read, and the strings that go to crawlerdetect instead, are
//     in fold.go). Character classes are already closed under case folding when parsed with (?i).
//   - Exclusions: see excluder (exclusions.go). Every exclusion is a literal followed by single-byte steps
//     that greedy matching gets right without backtracking (checked when the lists are read). Walking the
//     string from the left, where one of those literals starts, the exclusions are tried in list order:
//     the earliest start, then the earlier exclusion in the list, wins, as in ReplaceAllString.
//   - Crawlers. MatchString of an alternation is the OR of its alternatives' MatchString. Every match of
//     a pattern contains one of a few literals, computed from its syntax tree (requiredLiterals); one
//     Aho-Corasick pass over the remainder finds which of them occur, and only the patterns they name,
//     plus any pattern without such literals, are run. A pattern that is one plain literal needs no run.
//     On a browser's User-Agent no literal usually occurs and no pattern runs.
//
// A pattern is taken alone, not in the joined alternation, only when it parses alone and sets no flags
// ("(?"), so that the alternation is exactly the OR of its parts. Anything else, a string fold.go sends
// back (invalid UTF-8, the Kelvin sign or the long s), or lists the fast path cannot prove it handles
// exactly, goes to crawlerdetect.IsCrawler itself. The tests compare both on crawlerdetect's own crawler list, a sample of its browser list,
// lists of their own and a fuzz target.
func isCrawler(ua string) bool {
	// The library looks at the trimmed string only.
	if d := fastDetector(); d != nil {
		if crawler, ok := d.isCrawler(strings.TrimSpace(ua)); ok {
			return crawler
		}
	}
	return crawlerdetect.IsCrawler(ua)
}

// fastDetector builds the detector on first use (compiling some 1,450 small expressions takes a few
// milliseconds); nil when the lists could not be read or fail a check.
var fastDetector = sync.OnceValue(func() *detector {
	d, err := newDetectorFromLibrary()
	if err != nil {
		fastPathErr = err
		return nil
	}
	return d
})

// fastPathErr says why the fast path is off (tests assert it is on).
var fastPathErr error

// libraryLists reads the crawler and exclusion patterns of a crawlerdetect instance. The library keeps them
// in unexported fields and offers no getter; copying them into this repository would let the two drift
// apart at the next upgrade, so they are read from an instance the library builds (New uses the same lists
// as IsCrawler). Reflection may read unexported fields (Len, Index, String); a renamed or retyped field
// turns the fast path off, and a test fails.
func libraryLists() (crawlers, exclusions []string, err error) {
	v := reflect.ValueOf(crawlerdetect.New()).Elem()
	read := func(name string) ([]string, error) {
		f := v.FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Slice || f.Type().Elem().Kind() != reflect.String {
			return nil, fmt.Errorf("crawlerdetect.CrawlerDetect has no []string field %q", name)
		}
		out := make([]string, f.Len())
		for i := range out {
			out[i] = f.Index(i).String()
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("crawlerdetect.CrawlerDetect.%s is empty", name)
		}
		return out, nil
	}
	if crawlers, err = read("crawlers"); err != nil {
		return nil, nil, err
	}
	if exclusions, err = read("exclusions"); err != nil {
		return nil, nil, err
	}
	return crawlers, exclusions, nil
}

func newDetectorFromLibrary() (*detector, error) {
	crawlers, exclusions, err := libraryLists()
	if err != nil {
		return nil, err
	}
	return newDetector(crawlers, exclusions)
}

// detector is the fast path for lists as crawlerdetect compiles them: "(?i)(" + strings.Join(list, "|") + ")".
type detector struct {
	excluder *excluder
	crawlers []crawlerPattern
	always   []int                  // crawler patterns without a required literal: run on every string
	literals *ahocorasick.Automaton // the crawler patterns' required literals
	owners   [][]int32              // per literal: the crawler patterns that require it
	nonASCII bool                   // strings with runes outside ASCII can take the fast path (fold.go)
}

type crawlerPattern struct {
	re *regexp.Regexp // nil: the pattern is its literal, found means matched
}

func newDetector(crawlers, exclusions []string) (*detector, error) {
	d := &detector{}
	var excl []*syntax.Regexp
	for _, p := range exclusions {
		re, err := parseCaseless(p)
		if err != nil {
			return nil, fmt.Errorf("exclusion %q: %w", p, err)
		}
		excl = append(excl, re)
	}
	var err error
	if d.excluder, err = newExcluder(excl); err != nil {
		return nil, err
	}
	d.nonASCII = d.excluder.nonASCII
	var lits []string
	index := map[string]int{}
	for i, p := range crawlers {
		re, err := parseCaseless(p)
		if err != nil {
			return nil, fmt.Errorf("crawler pattern %q: %w", p, err)
		}
		var cp crawlerPattern
		if re.Op != syntax.OpLiteral {
			if cp.re, err = regexp.Compile(re.String()); err != nil {
				return nil, fmt.Errorf("crawler pattern %q: %w", p, err)
			}
		}
		d.crawlers = append(d.crawlers, cp)
		d.nonASCII = d.nonASCII && foldable(re)
		req := requiredLiterals(re)
		if req == nil {
			d.always = append(d.always, i)
			continue
		}
		for _, l := range req {
			j, ok := index[l]
			if !ok {
				j = len(lits)
				index[l] = j
				lits = append(lits, l)
				d.owners = append(d.owners, nil)
			}
			d.owners[j] = append(d.owners[j], int32(i))
		}
	}
	if d.literals, err = ahocorasick.NewBuilder().AddStrings(lits).Build(); err != nil {
		return nil, err
	}
	return d, nil
}

// errFlags: a pattern that sets flags would change its neighbours' in the joined alternation.
var errFlags = errors.New("sets flags")

// parseCaseless parses a pattern as the library's "(?i)(...)" does and rewrites it for lowercased ASCII
// input: FoldCase literals become lowercase case-sensitive literals.
func parseCaseless(p string) (*syntax.Regexp, error) {
	if strings.Contains(p, "(?") {
		return nil, errFlags
	}
	re, err := syntax.Parse(p, syntax.Perl|syntax.FoldCase)
	if err != nil {
		return nil, err
	}
	lowerLiterals(re)
	return re, nil
}

func lowerLiterals(re *syntax.Regexp) {
	if re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase != 0 {
		for i, r := range re.Rune {
			re.Rune[i] = asciiFold(r)
		}
	}
	// Character classes were folded by the parser; nothing else reads the flag.
	re.Flags &^= syntax.FoldCase
	for _, sub := range re.Sub {
		lowerLiterals(sub)
	}
	// Literals that differed only in the flag ("[ ]Intel": a space, then INTEL folded) now join.
	if re.Op == syntax.OpConcat {
		subs := re.Sub[:0]
		for _, sub := range re.Sub {
			if n := len(subs); n > 0 && sub.Op == syntax.OpLiteral && subs[n-1].Op == syntax.OpLiteral {
				subs[n-1].Rune = append(subs[n-1].Rune[:len(subs[n-1].Rune):len(subs[n-1].Rune)], sub.Rune...)
				continue
			}
			subs = append(subs, sub)
		}
		re.Sub = subs
		if len(subs) == 1 {
			*re = *subs[0]
		}
	}
}

// asciiFold is the lowercase ASCII member of r's case-folding orbit (k for K and for the Kelvin sign), or r
// itself when the orbit has none (then r matches no ASCII input either way).
func asciiFold(r rune) rune {
	for f := r; ; {
		if f < utf8.RuneSelf {
			return unicode.ToLower(f)
		}
		if f = unicode.SimpleFold(f); f == r {
			return r
		}
	}
}

// requiredLiterals returns strings one of which every match of re contains, or nil when it finds none.
func requiredLiterals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if s := requiredLiterals(sub); s != nil && (best == nil || better(s, best)) {
				best = s
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			s := requiredLiterals(sub)
			if s == nil {
				return nil
			}
			all = append(all, s...)
		}
		return all
	}
	return nil
}

// better prefers the set whose shortest literal is longer (rarer), then the smaller set.
func better(a, b []string) bool {
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(s []string) int {
	m := len(s[0])
	for _, x := range s[1:] {
		m = min(m, len(x))
	}
	return m
}

// isCrawler is crawlerdetect's verdict on a trimmed string; ok is false when the fast path cannot tell.
func (d *detector) isCrawler(ua string) (crawler, ok bool) {
	var folded, rest [512]byte // on the stack for the lengths Parser passes
	s, nonASCII, ok := fold(folded[:0], ua)
	if !ok || nonASCII && !d.nonASCII {
		return false, false
	}
	r := d.excluder.exclude(rest[:0], s)
	var seen [64]uint64 // crawler patterns already run, when they fit; a larger list may run one twice
	var rs string       // r as a string, made when a pattern is run (regexp's Match would move r to the heap)
	for _, m := range d.literals.FindAllOverlapping(r) {
		for _, i := range d.owners[m.PatternID] {
			re := d.crawlers[i].re
			if re == nil {
				return true, true
			}
			if int(i) < 64*len(seen) {
				if seen[i/64]&(1<<(i%64)) != 0 {
					continue
				}
				seen[i/64] |= 1 << (i % 64)
			}
			if rs == "" {
				rs = string(r)
			}
			if re.MatchString(rs) {
				return true, true
			}
		}
	}
	if rs == "" && len(d.always) > 0 {
		rs = string(r)
	}
	for _, i := range d.always {
		if d.crawlers[i].re.MatchString(rs) {
			return true, true
		}
	}
	return false, true
}
