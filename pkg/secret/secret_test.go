package secret

import (
	"bytes"
	"crypto/sha256"
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	t.Parallel()
	shape := map[string]*regexp.Regexp{
		ProgramKeyPrefix:   regexp.MustCompile(`^rt_[0-9A-Za-z]{40}$`),
		AccountTokenPrefix: regexp.MustCompile(`^rtu_[0-9A-Za-z]{40}$`),
	}
	for prefix, re := range shape {
		seen := map[string]bool{}
		for range 200 {
			s, err := New(prefix)
			if err != nil {
				t.Fatal(err)
			}
			if !re.MatchString(s.Plain) {
				t.Fatalf("%q does not match %s", s.Plain, re)
			}
			if seen[s.Plain] {
				t.Fatalf("duplicate secret %q", s.Plain)
			}
			seen[s.Plain] = true
			want := sha256.Sum256([]byte(s.Plain))
			if !bytes.Equal(s.Hash, want[:]) || !bytes.Equal(Hash(s.Plain), want[:]) {
				t.Errorf("hash of %q is not its SHA-256", s.Plain)
			}
			if s.Last4 != s.Plain[len(s.Plain)-4:] {
				t.Errorf("Last4 = %q for %q", s.Last4, s.Plain)
			}
		}
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	if got := Mask(ProgramKeyPrefix, "Ab12"); got != "rt_…Ab12" {
		t.Errorf("Mask = %q", got)
	}
}

// Every character of the alphabet occurs, and none dominates (a biased mapping would show).
func TestRandomStringDistribution(t *testing.T) {
	t.Parallel()
	s, err := RandomString(62 * 2000)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[rune]int{}
	for _, r := range s {
		counts[r]++
	}
	if len(counts) != 62 {
		t.Fatalf("%d distinct characters, want 62", len(counts))
	}
	for r, n := range counts {
		if n < 1500 || n > 2500 { // expected 2000 each; these bounds are ~11 standard deviations out
			t.Errorf("%q occurs %d times, want about 2000", r, n)
		}
	}
}
