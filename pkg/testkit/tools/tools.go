// Package tools decides what a test does when a tool it needs (a browser, PostgreSQL's binaries, Mailpit,
// the pinned npm packages) is not installed here.
package tools

import (
	"os"
	"testing"
)

// Missing ends the test for want of a tool: it fails under make test, which installs every tool
// (REFTRACK_REQUIRE_TOOLS is set), and is skipped otherwise. why says what is missing and how to get it.
func Missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("REFTRACK_REQUIRE_TOOLS") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}
