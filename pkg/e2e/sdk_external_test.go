package e2e_test

import (
	"bytes"
	"encoding/json"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// sdkModule is the Go SDK's module path.
const sdkModule = "github.com/reftrack/reftrack/sdk"

// A brand's program in a module of its own gets the SDK with `go get` and reports a lead, a sale and a
// refund with the quick start of sdk/README.md, against the real server. The SDK brings none of the
// server's modules into the brand's go.mod and go.sum, and asks for no newer Go than its own go line.
//
// The SDK's module is published to a file-system module proxy exactly as a release would be (the same
// zip the Go proxy serves), so `go get github.com/reftrack/reftrack/sdk` runs as it does for an
// integrator.
func TestQuickStartFromAnotherModule(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	sdkDir := filepath.Join(root, "sdk")
	program := quickStart(t, filepath.Join(sdkDir, "README.md"))
	if n := strings.Count(strings.TrimSpace(program), "\n") + 1; n >= 20 {
		t.Errorf("the quick start is %d lines, want under 20", n)
	}
	sdkMod := readModFile(t, filepath.Join(sdkDir, "go.mod"))
	serverModules := serverOnlyModules(readModFile(t, filepath.Join(root, "go.mod")), sumModules(t, filepath.Join(sdkDir, "go.sum")))

	proxy := t.TempDir()
	publish(t, sdkDir, module.Version{Path: sdkModule, Version: "v0.1.0"}, proxy)
	brand := t.TempDir()
	if err := os.WriteFile(filepath.Join(brand, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	// A brand on an older Go: its go line rises only as far as the SDK's.
	if err := os.WriteFile(filepath.Join(brand, "go.mod"), []byte("module example.com/brand\n\ngo 1.21.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goEnv := brandGoEnv(t, proxy)
	tools.Run(t.Context(), t, brand, goEnv, "go", "get", sdkModule)
	tools.Run(t.Context(), t, brand, goEnv, "go", "mod", "tidy")

	brandMod := readModFile(t, filepath.Join(brand, "go.mod"))
	brandSum := sumModules(t, filepath.Join(brand, "go.sum"))
	t.Logf("brand module after go get and go mod tidy: go %s, %d requirements, %d go.sum lines; %d server modules checked",
		brandMod.Go.Version, len(brandMod.Require), sumLines(brandSum), len(serverModules))
	for _, m := range serverModules {
		_, inSum := brandSum[m]
		if inSum || slices.ContainsFunc(brandMod.Require, func(r *modfile.Require) bool { return r.Mod.Path == m }) {
			t.Errorf("the brand's go.mod or go.sum mentions %s, a module of the server's", m)
		}
	}
	if brandSum[sdkModule] == 0 {
		t.Errorf("the brand's go.sum does not mention %s", sdkModule)
	}
	if v := brandMod.Go.Version; version.Compare("go"+v, "go"+sdkMod.Go.Version) > 0 {
		t.Errorf("the brand's go line is %s, newer than the SDK's %s", v, sdkMod.Go.Version)
	}

	bin := filepath.Join(brand, "brand")
	// -trimpath: the module cache is a new directory each run, and without it the build cache keys
	// on that path, so every dependency compiled afresh (about 20 s of CPU per run).
	tools.Run(t.Context(), t, brand, goEnv, "go", "build", "-trimpath", "-o", bin, ".")
	f := newFixture(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "REFTRACK_BASE_URL="+f.env.Proxy(), "REFTRACK_API_KEY="+f.prog.APIKey,
		"CLICK_ID="+f.click("quickstart"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("quick start: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "lead: 200 OK | sale: 200 OK | refund: 200 OK"; got != want {
		t.Errorf("quick start printed %q, want %q", got, want)
	}
	if n := f.count(`SELECT count(*) FROM sales s JOIN customers c ON c.id = s.customer_id
		WHERE c.customer_key = 'user_42' AND s.processor_event_id = 'in_1001' AND s.refunded_amount_cents = 4900`); n != 1 {
		t.Errorf("%d refunded sales for user_42, want 1", n)
	}

	// Run again: the invoice was recorded, so the sale answers 409 and nothing doubles.
	cmd = exec.Command(bin)
	cmd.Env = append(os.Environ(), "REFTRACK_BASE_URL="+f.env.Proxy(), "REFTRACK_API_KEY="+f.prog.APIKey)
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "sale: reftrack: 409 duplicate_transaction") {
		t.Errorf("second run printed %s", out)
	}
	if n := f.count(`SELECT count(*) FROM sales`); n != 1 {
		t.Errorf("%d sales after two runs, want 1", n)
	}
}

// serverOnlyModules lists the server's module and the modules it requires that the SDK's own go.sum
// does not hold (the SDK's go.sum also holds what its dependencies' tests use, such as
// gopkg.in/yaml.v3 for oapi-codegen/runtime's: those are the SDK's, not only the server's).
func serverOnlyModules(server *modfile.File, sdkSum map[string]int) []string {
	mods := []string{server.Module.Mod.Path}
	for _, r := range server.Require {
		if _, ok := sdkSum[r.Mod.Path]; !ok && r.Mod.Path != sdkModule {
			mods = append(mods, r.Mod.Path)
		}
	}
	return mods
}

// sumModules counts the lines of a go.sum file by module path.
func sumModules(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]int{}
	for line := range strings.Lines(string(b)) {
		if mod, _, ok := strings.Cut(line, " "); ok {
			mods[mod]++
		}
	}
	return mods
}

func sumLines(mods map[string]int) int {
	n := 0
	for _, c := range mods {
		n += c
	}
	return n
}

// brandGoEnv is what the go command's environment in the brand's module adds to the test's: the SDK
// comes from the file proxy at proxy; its dependencies from this machine's module cache (read as a proxy) or the usual proxy.
// The brand's module cache is its own, so the SDK is never a copy cached by an earlier run.
func brandGoEnv(t *testing.T, proxy string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	upstream, modcache, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(modcache, "cache", "download")) + "," + upstream,
		"GOMODCACHE=" + t.TempDir(),
		"GONOSUMDB=github.com/reftrack/reftrack", // not in the public checksum database
		"GOFLAGS=-mod=mod -modcacherw", "GOWORK=off", "GOTOOLCHAIN=local"}
}

// quickStart returns the Go program between the quick-start markers of the README.
func quickStart(t *testing.T, readme string) string {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- quickstart[^>]*-->\\s*```go\n(.*?)```\\s*<!-- /quickstart -->").FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s has no quick-start block", readme)
	}
	return string(m[1])
}

// publish writes the module in dir, as mod, into a file-system module proxy at proxy.
func publish(t *testing.T, dir string, mod module.Version, proxy string) {
	t.Helper()
	at := filepath.Join(proxy, filepath.FromSlash(mod.Path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	// The files a release tags: those git tracks or would (not what it ignores, such as
	// sdk/typescript's node_modules, which a zip of the whole directory took in: 45 MB).
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	var files []modzip.File
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil { // not a tracked file since deleted
			files = append(files, dirFile{dir: dir, path: filepath.ToSlash(name)})
		}
	}
	var zip bytes.Buffer
	if err := modzip.Create(&zip, mod, files); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": mod.Version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, content := range map[string][]byte{
		"list": []byte(mod.Version + "\n"), mod.Version + ".mod": gomod, mod.Version + ".info": info, mod.Version + ".zip": zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dirFile is a file of a module's directory, as modzip.Create takes it.
type dirFile struct{ dir, path string }

func (f dirFile) Path() string                 { return f.path }
func (f dirFile) Lstat() (os.FileInfo, error)  { return os.Lstat(filepath.Join(f.dir, f.path)) }
func (f dirFile) Open() (io.ReadCloser, error) { return os.Open(filepath.Join(f.dir, f.path)) }

func readModFile(t *testing.T, path string) *modfile.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
