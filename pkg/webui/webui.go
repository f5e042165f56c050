// Package webui holds what the dashboard's and the partner portal's scripts share (shared.js: elements,
// the API, notices, money) and joins a page's script from its parts at start, with no build step
// (Miniflux's internal/ui/static joins its scripts the same way).
package webui

import (
	_ "embed"
)

//go:embed shared.js
var shared []byte

// Script is a page's script: head, the shared helpers, then the page's parts in order, then tail. head
// opens one function scope and tail closes it, so that the helpers and the parts share it as one file
// would, and nothing of the page's reaches the window.
func Script(head string, parts [][]byte, tail string) []byte {
	n := len(head) + len(shared) + len(tail)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, shared...)
	for _, p := range parts {
		b = append(b, p...)
	}
	return append(b, tail...)
}
