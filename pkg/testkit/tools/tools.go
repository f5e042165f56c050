// Package tools decides what a test does when a tool it needs (a browser, PostgreSQL's binaries, Mailpit,
// the pinned npm packages) is not installed here.
package tools

import (
	"context"
	"os"
	"os/exec"
	"strings"
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

// Run runs a tool (npm, tsc, node, a generator) in dir with env added to the test's environment, and
// returns its standard output; it fails the test when the tool fails, with both of its outputs.
func Run(ctx context.Context, t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}
