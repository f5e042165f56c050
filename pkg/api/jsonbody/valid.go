package jsonbody

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The checks of a member's value that many bodies share, for Reader's valid functions.

// NotBlank holds for a string with something besides white space.
func NotBlank(s string) bool { return strings.TrimSpace(s) != "" }

// NotEmpty holds for a string of at least one character.
func NotEmpty(s string) bool { return s != "" }

// MaxBytes holds for a string of at most n bytes.
func MaxBytes(n int) func(string) bool { return func(s string) bool { return len(s) <= n } }

// Runes holds for a string of lo to hi characters.
func Runes(lo, hi int) func(string) bool {
	return func(s string) bool { n := utf8.RuneCountInString(s); return n >= lo && n <= hi }
}

// OneOf holds for one of values.
func OneOf(values ...string) func(string) bool {
	return func(s string) bool { return slices.Contains(values, s) }
}

// Positive holds for an integer above zero.
func Positive(n int64) bool { return n > 0 }
