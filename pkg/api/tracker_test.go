package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/tracker"
)

// The tracker is served under both names with an ETag, cache headers, gzip when accepted, and 304 for a
// current copy.
func TestTrackerScript(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	want, err := tracker.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/js/svc.js", "/js/svc-tracker.js"} {
		t.Run(path, func(t *testing.T) {
			plain := env.Do(http.MethodGet, path, nil, "Accept-Encoding", "identity")
			if plain.Status != http.StatusOK || !bytes.Equal(plain.Body, want.Body) {
				t.Fatalf("status %d, %d bytes, want the %d-byte script", plain.Status, len(plain.Body), len(want.Body))
			}
			h := plain.Header
			if h.Get("Content-Type") != "application/javascript" || h.Get("ETag") != want.ETag ||
				h.Get("Cache-Control") != "public, max-age=3600" || h.Get("Vary") != "Accept-Encoding" ||
				h.Get("Content-Encoding") != "" || h.Get("X-Request-ID") == "" {
				t.Errorf("headers = %v", h)
			}

			zipped := env.Do(http.MethodGet, path, nil, "Accept-Encoding", "br;q=1.0, gzip;q=0.8")
			if zipped.Status != http.StatusOK || zipped.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("gzip: status %d, headers %v", zipped.Status, zipped.Header)
			}
			zr, err := gzip.NewReader(bytes.NewReader(zipped.Body))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, want.Body) {
				t.Errorf("gzip body does not decode to the script (%v)", err)
			}
			if refused := env.Do(http.MethodGet, path, nil, "Accept-Encoding", "gzip;q=0"); refused.Header.Get("Content-Encoding") != "" {
				t.Errorf("gzip;q=0 got %v", refused.Header)
			}

			for _, inm := range []string{want.ETag, "W/" + want.ETag, `"old", ` + want.ETag, "*"} {
				res := env.Do(http.MethodGet, path, nil, "If-None-Match", inm)
				if res.Status != http.StatusNotModified || len(res.Body) != 0 || res.Header.Get("ETag") != want.ETag ||
					res.Header.Get("Cache-Control") == "" {
					t.Errorf("If-None-Match %s: %d %v", inm, res.Status, res.Header)
				}
			}
			if stale := env.Do(http.MethodGet, path, nil, "If-None-Match", `"old"`, "Accept-Encoding", "identity"); stale.Status != http.StatusOK || !bytes.Equal(stale.Body, want.Body) {
				t.Errorf("a stale ETag got %d", stale.Status)
			}
		})
	}
}

// The tracker stays small: its gzipped size is reported in docs/integration.md.
func TestTrackerScriptSize(t *testing.T) {
	t.Parallel()
	s, err := tracker.Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tracker: %d bytes, %d gzipped", len(s.Body), len(s.Gzip))
	if len(s.Gzip) > 5<<10 {
		t.Errorf("the tracker is %d bytes gzipped; keep it under 5 KiB", len(s.Gzip))
	}
}
