// Package webui holds what the dashboard's and the partner portal's scripts share (shared.js: elements,
// the API, notices, money) and joins a page's script from its parts at start, with no build step
// (Miniflux's internal/ui/static joins its scripts the same way).
package webui

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed shared.js
var shared []byte

// Script is a page's script: head, the shared helpers and the spec's labels (LABELS), then the page's
// parts in order, then tail. head opens one function scope and tail closes it, so that the helpers and
// the parts share it as one file would, and nothing of the page's reaches the window.
func Script(head string, parts [][]byte, tail string) ([]byte, error) {
	labels, err := labelsScript()
	if err != nil {
		return nil, err
	}
	n := len(head) + len(shared) + len(labels) + len(tail)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, shared...)
	b = append(b, labels...)
	for _, p := range parts {
		b = append(b, p...)
	}
	return append(b, tail...), nil
}

// Asset is one static file as served.
type Asset struct {
	Body []byte
	// ETag is a strong validator of the content (quoted, as the header carries it).
	ETag string
}

// Assets are a page's static files by name and their combined version, which the page puts in their
// URLs so that a new build is fetched at once.
type Assets struct {
	Files   map[string]Asset
	Version string
}

// Build makes the assets of the files named, in that order (the version depends on it).
func Build(names []string, bodies map[string][]byte) Assets {
	a := Assets{Files: map[string]Asset{}}
	all := sha256.New()
	for _, name := range names {
		b := bodies[name]
		sum := sha256.Sum256(b)
		all.Write(sum[:])
		a.Files[name] = Asset{Body: b, ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	a.Version = hex.EncodeToString(all.Sum(nil)[:6])
	return a
}
