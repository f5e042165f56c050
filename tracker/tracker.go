// Package tracker holds the browser tracker script (svc-tracker.js) that reftrackd serves under /js/.
package tracker

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

//go:embed svc-tracker.js
var source []byte

// Script is the tracker as served: the file, its gzip encoding and its ETag.
type Script struct {
	Body []byte
	Gzip []byte
	// ETag is a strong validator of the file's content (quoted, as the header carries it).
	ETag string
}

// Load prepares the script once, at start-up.
func Load() (Script, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Script{}, err
	}
	if _, err := zw.Write(source); err != nil {
		return Script{}, err
	}
	if err := zw.Close(); err != nil {
		return Script{}, err
	}
	sum := sha256.Sum256(source)
	return Script{Body: source, Gzip: buf.Bytes(), ETag: `"` + hex.EncodeToString(sum[:8]) + `"`}, nil
}
