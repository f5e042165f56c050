package sdk_test

import (
	"archive/zip"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// A brand's program in a module of its own gets the SDK with `go get` and reports a lead, a sale and a
// refund with the quick start of sdk/README.md, against the real server.
//
// The module is published to a file-system module proxy exactly as a release would be (the same zip the
// Go proxy serves), so `go get github.com/reftrack/reftrack/sdk` runs as it does for an integrator.
func TestQuickStartFromAnotherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	program := quickStart(t, filepath.Join(root, "sdk", "README.md"))
	if n := strings.Count(strings.TrimSpace(program), "\n") + 1; n >= 20 {
		t.Errorf("the quick start is %d lines, want under 20", n)
	}

	proxy := t.TempDir()
	publish(t, root, proxy, "v0.1.0")
	brand := t.TempDir()
	if err := os.WriteFile(filepath.Join(brand, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	// Our module comes from the file proxy; its dependencies from the module cache or the usual proxy.
	upstream, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatal(err)
	}
	goEnv := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+strings.TrimSpace(string(upstream)),
		"GONOSUMDB=github.com/reftrack/reftrack", // not in the public checksum database
		"GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	goCmd(t, brand, goEnv, "mod", "init", "example.com/brand")
	goCmd(t, brand, goEnv, "get", "github.com/reftrack/reftrack/sdk")
	bin := filepath.Join(brand, "brand")
	goCmd(t, brand, goEnv, "build", "-o", bin, ".")

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

// publish writes the module at root, as version, into a file-system module proxy at dir.
func publish(t *testing.T, root, dir, version string) {
	t.Helper()
	const path = "github.com/reftrack/reftrack"
	at := filepath.Join(dir, filepath.FromSlash(path), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []modzip.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".data", "node_modules", "bin":
				return filepath.SkipDir // not part of a release: VCS data, local state, installs, builds
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, moduleFile{rel: filepath.ToSlash(rel), abs: p})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.Create(zf, module.Version{Path: path, Version: version}, files); err != nil {
		t.Fatal(err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, content := range map[string][]byte{"list": []byte(version + "\n"), version + ".mod": gomod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(at, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The zip must open as a module zip; a broken one would fail later with a less helpful message.
	if _, err := zip.OpenReader(filepath.Join(at, version+".zip")); err != nil {
		t.Fatal(err)
	}
}

// moduleFile is one file of the module zip.
type moduleFile struct{ rel, abs string }

func (f moduleFile) Path() string                 { return f.rel }
func (f moduleFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f moduleFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }

func goCmd(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
