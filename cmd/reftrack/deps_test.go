package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI is a client: it reuses the domain's leaf packages for their checks and messages (pkg/programs,
// pkg/ledger, pkg/idempotency), never the server (echo, the generated server, the handlers).
func TestCLIImportsNoServer(t *testing.T) {
	t.Parallel()
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, server := range []string{"github.com/labstack/echo", "github.com/reftrack/reftrack/gen/server",
			"github.com/reftrack/reftrack/pkg/api", "github.com/getkin/kin-openapi", "github.com/reftrack/reftrack/cmd/reftrackd"} {
			if dep == server || strings.HasPrefix(dep, server+"/") {
				t.Errorf("cmd/reftrack depends on %s", dep)
			}
		}
	}
}
