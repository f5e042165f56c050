// Package pagecursor is the cursor of the lists read newest first (by a time, then an id): an opaque
// string naming the last row of a page, so that the next page starts after it and never repeats or
// skips a row, whatever is written meanwhile.
package pagecursor

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Page sizes of the lists read by cursor: a page's limit is 1 … MaxSize, DefaultSize when not given.
const (
	DefaultSize = 25
	MaxSize     = 100
)

// SizeRule is what a page size out of its range is refused with.
var SizeRule = fmt.Sprintf("limit must be between 1 and %d", MaxSize)

// CheckSize reports whether limit is a page size (1 … MaxSize).
func CheckSize(limit int) bool { return limit >= 1 && limit <= MaxSize }

// Size is a list's page size: limit, or DefaultSize for 0 (not given); ok is false out of range.
func Size(limit int) (size int, ok bool) {
	if limit == 0 {
		return DefaultSize, true
	}
	return limit, CheckSize(limit)
}

// Position is where a page ends: its last row's time and id.
type Position struct {
	At time.Time
	ID int64
}

// Encode is the cursor after p.
func Encode(p Position) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.At.UnixMicro(), 10) + "." + strconv.FormatInt(p.ID, 10)))
}

// Decode reads a cursor Encode wrote: nil for "" (the first page); ok is false for anything else.
func Decode(s string) (p *Position, ok bool) {
	if s == "" {
		return nil, true
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	at, id, found := strings.Cut(string(b), ".")
	us, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if !found || err1 != nil || err2 != nil || n <= 0 {
		return nil, false
	}
	return &Position{At: time.UnixMicro(us), ID: n}, true
}

// Trim keeps the first limit of rows read with one more than limit and, when there was one more,
// answers the cursor after the last row kept (key gives a row's position); rows is never nil.
func Trim[T any](rows []T, limit int, key func(T) Position) ([]T, string) {
	if rows == nil {
		return []T{}, ""
	}
	if len(rows) <= limit {
		return rows, ""
	}
	return rows[:limit], Encode(key(rows[limit-1]))
}
