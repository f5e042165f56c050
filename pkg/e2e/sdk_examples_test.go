package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The SDK's examples (sdk/example_test.go) are its documentation, so they live in its module, which
// cannot import the server. Here they run against a real server with a freshly seeded program, every
// answer checked against the spec by the proxy, and `go test` compares what they print with their
// `// Output:` comments.
func TestSDKExamples(t *testing.T) {
	t.Parallel()
	sdkDir := filepath.Join(repoRoot(t), "sdk")
	f := newFixture(t)
	cmd := exec.Command("go", "test", "-count=1", "-v", "-run", "^Example", ".")
	cmd.Dir = sdkDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local",
		"REFTRACK_BASE_URL="+f.env.Proxy(), "REFTRACK_API_KEY="+f.prog.APIKey, "REFTRACK_AFFILIATE_URL="+f.prog.AffiliateURL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK's examples: %v\n%s", err, out)
	}
	// Every example ran: none was skipped for want of a server.
	src, err := os.ReadFile(filepath.Join(sdkDir, "example_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := len(regexp.MustCompile(`(?m)^func Example\w*\(\)`).FindAll(src, -1))
	if got := strings.Count(string(out), "--- PASS: Example"); got != want || want == 0 {
		t.Errorf("%d examples passed, want %d:\n%s", got, want, out)
	}
}
