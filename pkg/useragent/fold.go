package useragent

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// The fast path matches the rewritten, case-sensitive patterns against a folded copy of the string: ASCII
// lowercased, and each other rune replaced by one byte, other. Matching the original (?i) pattern on the
// original string and the rewritten one on the folded string agree, rune for rune, when:
//   - every literal rune of the patterns folds to ASCII (asciiFold), so a literal never matches a rune
//     outside ASCII, nor the byte other;
//   - every character class holds all of the runes outside ASCII that do not fold to ASCII or none of them
//     (uniform), as ., [^/] and [\d\.] do; Go's regexp reads the byte other, invalid UTF-8, as U+FFFD,
//     one of those runes;
//   - the string holds no rune outside ASCII that folds to ASCII (the Kelvin sign, the long s): lowercased
//     to k or s it would become a word character for \b, which the original is not. Such strings, and
//     invalid UTF-8 (whose bytes, cut and joined by the exclusions, could form new runes), go to
//     crawlerdetect itself.
//
// Each rune becomes one byte, so repetition counts (runes) and anchors are unchanged, and \b sees the same
// word characters (ASCII letters, digits and _ only).
const other = 0x80

// foldsToASCII are the runes outside ASCII in the case-folding orbit of an ASCII letter.
var foldsToASCII = func() map[rune]bool {
	m := map[rune]bool{}
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				m[f] = true
			}
		}
	}
	return m
}()

// fold appends the folded s to dst. ok is false when s is not valid UTF-8 or holds a rune outside ASCII
// that folds to ASCII; nonASCII says whether it holds any rune outside ASCII.
func fold(dst []byte, s string) (folded []byte, nonASCII, ok bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || foldsToASCII[r] {
			return dst, true, false
		}
		dst = append(dst, other)
		nonASCII = true
		i += n
	}
	return dst, nonASCII, true
}

// uniform says whether a character class holds all runes outside ASCII that do not fold to ASCII, or none
// of them; all says which.
func uniform(class []rune) (all, ok bool) {
	var n int
	for i := 0; i+1 < len(class); i += 2 {
		lo, hi := max(class[i], utf8.RuneSelf), class[i+1]
		if lo > hi {
			continue
		}
		n += int(hi - lo + 1)
		for r := range foldsToASCII {
			if lo <= r && r <= hi {
				n--
			}
		}
	}
	whole := unicode.MaxRune - utf8.RuneSelf + 1 - len(foldsToASCII)
	return n == whole, n == 0 || n == whole
}

// foldable says whether a rewritten pattern meets the first two conditions above: its literals are ASCII
// and its classes uniform.
func foldable(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return false
			}
		}
	case syntax.OpCharClass:
		if _, ok := uniform(re.Rune); !ok {
			return false
		}
	}
	for _, sub := range re.Sub {
		if !foldable(sub) {
			return false
		}
	}
	return true
}
