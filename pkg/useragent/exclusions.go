package useragent

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// excluder removes from a folded string (fold.go) what crawlerdetect's exclusion step removes from the
// original: ReplaceAllString(s, "") of the (?i) alternation of its exclusion list.
//
// That replacement removes, from left to right, the match that starts earliest; at that start the first
// alternative in list order wins, with the end its own leftmost-first match gives. Every exclusion in the
// list is a literal followed by single-character steps (Safari.[\d\.]*, Opera Mini\/\d{1,2}\.…), sometimes
// with an optional group before the literal or at the end ((like )?Gecko(.[\d\.]*)?). Such a pattern is
// split into branches, each starting with a literal, its prefix: every match starts where a prefix occurs.
// exclude walks the string from the cursor; where a prefix begins (a bitmap of the prefixes' first two
// bytes rules out most places at once), it tries the branches of that byte in list order, and the first
// that matches is removed. At each start a branch's steps are matched greedily, which is what
// leftmost-first gives when each step whose length varies is last or is followed by a step that cannot
// match its first character with any character of the varying step (then a shorter run leaves a character
// the next step refuses): newExcluder checks that for every pattern and refuses any pattern outside this
// shape (the fast path is then off). An optional group at the end is taken when it matches, as
// leftmost-first prefers; one at the start becomes two branches, with the group and without, tried in that
// order.
type excluder struct {
	pairs    [1 << 16 / 64]uint64 // first and second byte of a prefix; a one-byte prefix sets its byte's whole row
	byFirst  [256][]*branch       // the branches whose prefix starts with the byte, in list order
	nonASCII bool                 // every class is uniform (fold.go): folded strings with other can be handled
}

// branch is one way for an exclusion to match: prefix, then steps, then optionally tail.
type branch struct {
	prefix string
	steps  []step
	tail   []step // an optional group ending the pattern; nil when none
}

// step matches between min and max (max < 0: any number) bytes of set, greedily.
type step struct {
	set      byteSet
	min, max int
}

// byteSet is a set of bytes of a folded string.
type byteSet [4]uint64

func (b *byteSet) add(c byte) { b[c>>6] |= 1 << (c & 63) }

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

func (b byteSet) disjoint(o byteSet) bool {
	return b[0]&o[0] == 0 && b[1]&o[1] == 0 && b[2]&o[2] == 0 && b[3]&o[3] == 0
}

// single is the one byte of a one-byte set.
func (b byteSet) single() (byte, bool) {
	var c byte
	n := 0
	for i := range 256 {
		if b.has(byte(i)) {
			c = byte(i)
			n++
		}
	}
	return c, n == 1
}

var errShape = errors.New("outside the shapes the fast path handles exactly")

func newExcluder(patterns []*syntax.Regexp) (*excluder, error) {
	x := &excluder{nonASCII: true}
	for _, re := range patterns {
		bs, err := branchesOf(re)
		if err != nil {
			return nil, fmt.Errorf("exclusion %v: %w", re, err)
		}
		for _, b := range bs {
			x.byFirst[b.prefix[0]] = append(x.byFirst[b.prefix[0]], b)
			if len(b.prefix) == 1 {
				for next := range 256 {
					x.setPair(b.prefix[0], byte(next))
				}
			} else {
				x.setPair(b.prefix[0], b.prefix[1])
			}
		}
		x.nonASCII = x.nonASCII && foldable(re)
	}
	return x, nil
}

func (x *excluder) setPair(first, second byte) {
	k := int(first)<<8 | int(second)
	x.pairs[k>>6] |= 1 << (k & 63)
}

// branchesOf splits a (rewritten, case-sensitive) exclusion into its branches, in preference order.
func branchesOf(re *syntax.Regexp) ([]*branch, error) {
	nodes := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		nodes = re.Sub
	}
	// A leading optional group: with it first (greedy), then without.
	if lead := nodes[0]; lead.Op == syntax.OpQuest && lead.Flags&syntax.NonGreedy == 0 && len(nodes) > 1 {
		with, err := branchOf(slices.Concat(unconcat(unwrap(lead.Sub[0])), nodes[1:]))
		if err != nil {
			return nil, err
		}
		without, err := branchOf(nodes[1:])
		if err != nil {
			return nil, err
		}
		return []*branch{with, without}, nil
	}
	b, err := branchOf(nodes)
	if err != nil {
		return nil, err
	}
	return []*branch{b}, nil
}

func unwrap(re *syntax.Regexp) *syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re
}

func unconcat(re *syntax.Regexp) []*syntax.Regexp {
	if re.Op == syntax.OpConcat {
		return re.Sub
	}
	return []*syntax.Regexp{re}
}

// branchOf makes a branch of a concatenation: a leading literal, steps, and optionally a final optional group.
func branchOf(nodes []*syntax.Regexp) (*branch, error) {
	b := &branch{}
	if last := nodes[len(nodes)-1]; last.Op == syntax.OpQuest && last.Flags&syntax.NonGreedy == 0 && len(nodes) > 1 {
		tail, err := stepsOf(unwrap(last.Sub[0]))
		if err != nil {
			return nil, err
		}
		if err := checkSteps(tail); err != nil {
			return nil, err
		}
		b.tail = tail
		nodes = nodes[:len(nodes)-1]
	}
	var steps []step
	for _, n := range nodes {
		s, err := stepsOf(n)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	// The prefix: the leading steps of exactly one byte.
	var prefix strings.Builder
	for len(steps) > 0 && steps[0].min == 1 && steps[0].max == 1 {
		c, ok := steps[0].set.single()
		if !ok {
			break
		}
		prefix.WriteByte(c)
		steps = steps[1:]
	}
	if prefix.Len() == 0 {
		return nil, fmt.Errorf("no leading literal: %w", errShape)
	}
	if err := checkSteps(steps); err != nil {
		return nil, err
	}
	b.prefix, b.steps = prefix.String(), steps
	return b, nil
}

// stepsOf turns a node into steps, or says it cannot.
func stepsOf(re *syntax.Regexp) ([]step, error) {
	switch re.Op {
	case syntax.OpLiteral:
		out := make([]step, 0, len(re.Rune))
		for _, r := range re.Rune {
			if r >= 128 {
				return nil, fmt.Errorf("non-ASCII literal: %w", errShape)
			}
			var s step
			s.set.add(byte(r))
			s.min, s.max = 1, 1
			out = append(out, s)
		}
		return out, nil
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return []step{{set: setOf(re), min: 1, max: 1}}, nil
	case syntax.OpCapture:
		return stepsOf(re.Sub[0])
	case syntax.OpConcat:
		var out []step
		for _, sub := range re.Sub {
			s, err := stepsOf(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if re.Flags&syntax.NonGreedy != 0 {
			return nil, fmt.Errorf("non-greedy repetition: %w", errShape)
		}
		sub, err := stepsOf(unwrap(re.Sub[0]))
		if err != nil {
			return nil, err
		}
		if len(sub) != 1 || sub[0].min != 1 || sub[0].max != 1 {
			return nil, fmt.Errorf("repetition of more than one character: %w", errShape)
		}
		s := sub[0]
		switch re.Op {
		case syntax.OpStar:
			s.min, s.max = 0, -1
		case syntax.OpPlus:
			s.min, s.max = 1, -1
		case syntax.OpQuest:
			s.min, s.max = 0, 1
		default:
			s.min, s.max = re.Min, re.Max
		}
		return []step{s}, nil
	}
	return nil, fmt.Errorf("%v: %w", re.Op, errShape)
}

// setOf is the bytes of a folded string a one-character node matches: ASCII bytes, and other when the
// node matches every rune outside ASCII that does not fold to ASCII (a class that holds only some of them
// is caught by foldable, and then no string outside ASCII takes the fast path).
func setOf(re *syntax.Regexp) byteSet {
	var b byteSet
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		for c := range 128 {
			if c != '\n' || re.Op == syntax.OpAnyChar {
				b.add(byte(c))
			}
		}
		b.add(other)
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for c := re.Rune[i]; c <= re.Rune[i+1] && c < utf8.RuneSelf; c++ {
				b.add(byte(c))
			}
		}
		if all, _ := uniform(re.Rune); all {
			b.add(other)
		}
	}
	return b
}

// checkSteps holds that greedy matching without backtracking is exact: a step whose length varies is the
// last, or is followed by a step that needs a byte it cannot take.
func checkSteps(steps []step) error {
	for i, s := range steps {
		if s.min == s.max || i == len(steps)-1 {
			continue
		}
		if next := steps[i+1]; next.min < 1 || !next.set.disjoint(s.set) {
			return fmt.Errorf("a varying step may need backtracking: %w", errShape)
		}
	}
	return nil
}

// match matches steps greedily from q; it returns the end.
func match(steps []step, s []byte, q int) (int, bool) {
	for _, st := range steps {
		n := 0
		for (st.max < 0 || n < st.max) && q < len(s) && st.set.has(s[q]) {
			q++
			n++
		}
		if n < st.min {
			return 0, false
		}
	}
	return q, true
}

// at is the end of b's match starting at p, where its prefix occurs.
func (b *branch) at(s []byte, p int) (int, bool) {
	q, ok := match(b.steps, s, p+len(b.prefix))
	if !ok {
		return 0, false
	}
	if b.tail != nil {
		if e, ok := match(b.tail, s, q); ok {
			q = e
		}
	}
	return q, true
}

// exclude appends to dst what remains of the folded s once the exclusions' matches are removed.
func (x *excluder) exclude(dst, s []byte) []byte {
	cursor := 0
	for i := 0; i < len(s); {
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		if k := int(s[i])<<8 | int(next); x.pairs[k>>6]&(1<<(k&63)) == 0 {
			i++
			continue
		}
		end := -1
		for _, b := range x.byFirst[s[i]] {
			if len(s)-i >= len(b.prefix) && string(s[i:i+len(b.prefix)]) == b.prefix {
				if e, ok := b.at(s, i); ok {
					end = e
					break
				}
			}
		}
		if end < 0 {
			i++
			continue
		}
		dst = append(dst, s[cursor:i]...)
		cursor, i = end, end
	}
	return append(dst, s[cursor:]...)
}
