package pagecursor_test

import (
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/pagecursor"
)

func TestDecodeReadsWhatEncodeWrote(t *testing.T) {
	p := pagecursor.Position{At: time.Date(2026, 3, 5, 9, 0, 0, 123456000, time.UTC), ID: 42}
	got, ok := pagecursor.Decode(pagecursor.Encode(p))
	if !ok || got == nil || !got.At.Equal(p.At) || got.ID != p.ID {
		t.Fatalf("Decode(Encode(%v)) = %v, %v", p, got, ok)
	}
	if got, ok := pagecursor.Decode(""); got != nil || !ok {
		t.Fatalf(`Decode("") = %v, %v; want the first page`, got, ok)
	}
}

func TestDecodeRefusesWhatEncodeNeverWrites(t *testing.T) {
	for _, s := range []string{"!", "bm90aGluZw", "MTIz", "MTIzLjA", "MTIzLi01", "YS4x", "MS5i", "=="} {
		if got, ok := pagecursor.Decode(s); ok || got != nil {
			t.Errorf("Decode(%q) = %v, %v; want refused", s, got, ok)
		}
	}
}

func TestTrimAnswersACursorOnlyWhenThereIsMore(t *testing.T) {
	key := func(n int) pagecursor.Position { return pagecursor.Position{At: time.Unix(int64(n), 0), ID: int64(n)} }
	rows, next := pagecursor.Trim([]int{5, 4, 3}, 2, key)
	if len(rows) != 2 || rows[1] != 4 || next != pagecursor.Encode(key(4)) {
		t.Fatalf("Trim of 3 rows by 2 = %v, %q", rows, next)
	}
	if rows, next := pagecursor.Trim([]int{5, 4}, 2, key); len(rows) != 2 || next != "" {
		t.Fatalf("Trim of 2 rows by 2 = %v, %q; want no cursor", rows, next)
	}
	if rows, next := pagecursor.Trim[int](nil, 2, key); rows == nil || len(rows) != 0 || next != "" {
		t.Fatalf("Trim of no rows = %#v, %q", rows, next)
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for limit, want := range map[int]struct {
		size int
		ok   bool
	}{0: {pagecursor.DefaultSize, true}, 1: {1, true}, 100: {100, true}, 101: {101, false}, -1: {-1, false}} {
		if size, ok := pagecursor.Size(limit); size != want.size || ok != want.ok {
			t.Errorf("Size(%d) = %d, %v; want %d, %v", limit, size, ok, want.size, want.ok)
		}
	}
	if pagecursor.CheckSize(0) || pagecursor.SizeRule != "limit must be between 1 and 100" {
		t.Errorf("CheckSize(0) accepted, or the rule reads %q", pagecursor.SizeRule)
	}
}
