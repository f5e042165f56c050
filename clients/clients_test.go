// Package clients_test generates clients from the spec the server serves with the generators integrators
// use (ogen for Go; openapi-typescript + openapi-fetch, @hey-api/openapi-ts, orval and
// swagger-typescript-api for TypeScript, all pinned: ogen/go.mod, package-lock.json), compiles them strictly (go build, tsc --strict) and drives each
// through six calls against a real server: a click, a server-mode lead, a sale, the duplicate sale read
// through its typed error, a refund, readiness. `make clients` runs it (REFTRACK_CLIENTS=1); elsewhere
// it skips.
package clients_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// bin is where `npm ci` in clients/ installs the pinned generators.
const bin = "node_modules/.bin"

func TestGeneratedClients(t *testing.T) {
	if os.Getenv("REFTRACK_CLIENTS") == "" {
		t.Skip("the generator check runs in `make clients` (REFTRACK_CLIENTS=1)")
	}
	for _, tool := range []string{"openapi-typescript", "openapi-ts", "orval", "swagger-typescript-api", "tsc"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			tools.Missing(t, fmt.Sprintf("the pinned npm packages are not installed (%v): `make clients` installs them (cd clients && npm ci)", err))
		}
	}
	env := apitest.New(t)
	prog := env.Seed(seed.Options{})
	url := env.Proxy() // every answer a client gets is checked against the spec as well

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	// The spec as served, not the file in the repository.
	spec := filepath.Join(t.TempDir(), "openapi.json")
	res, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", res.StatusCode, err)
	}
	if err := os.WriteFile(spec, body, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(spec)
	if err != nil {
		t.Fatal(err)
	}

	// Generate each client, then compile them all: ogen's with go build, the TypeScript ones with tsc
	// --strict (tsconfig.json).
	for _, dir := range []string{"gen", ".build", "ogen/api"} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	tools.Run(ctx, t, ".", nil, filepath.Join(bin, "openapi-typescript"), abs, "--output", "gen/openapi-fetch/schema.ts")
	tools.Run(ctx, t, ".", nil, filepath.Join(bin, "openapi-ts"), "--input", abs, "--output", "gen/heyapi")
	tools.Run(ctx, t, ".", nil, filepath.Join(bin, "orval"), "--input", abs, "--output", "gen/orval/api.ts", "--client", "fetch")
	tools.Run(ctx, t, ".", nil, filepath.Join(bin, "swagger-typescript-api"), "generate", "--path", abs, "--output", "gen/swagger-typescript-api",
		"--name", "api.ts", "--silent")
	checkTypes(t, "gen")
	tools.Run(ctx, t, ".", nil, filepath.Join(bin, "tsc"), "--project", "tsconfig.json")
	tools.Run(ctx, t, "ogen", nil, "go", "run", "github.com/ogen-go/ogen/cmd/ogen", "--config", "ogen.yml", "--target", "api",
		"--package", "api", "--clean", abs)
	ogenBin := filepath.Join(t.TempDir(), "ogen-chain")
	tools.Run(ctx, t, "ogen", nil, "go", "build", "-o", ogenBin, ".")

	vars := []string{"REFTRACK_BASE_URL=" + url, "REFTRACK_API_KEY=" + prog.APIKey, "AFFILIATE_URL=" + prog.AffiliateURL}
	clients := []struct {
		name string
		cmd  []string
	}{
		{"ogen", []string{ogenBin}},
		{"openapi-fetch", []string{"node", ".build/openapi-fetch.mjs", "openapi_fetch"}},
		{"hey-api", []string{"node", ".build/heyapi.mjs", "heyapi"}},
		{"orval", []string{"node", ".build/orval.mjs", "orval"}},
		{"swagger-typescript-api", []string{"node", ".build/swagger-typescript-api.mjs", "sta"}},
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			out := tools.Run(ctx, t, ".", vars, c.cmd[0], c.cmd[1:]...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var seen struct {
				ClickID            string `json:"click_id"`
				CustomerKey        string `json:"customer_key"`
				LeadID             int64  `json:"lead_id"`
				SaleID             int64  `json:"sale_id"`
				TransactionID      string `json:"transaction_id"`
				ReadinessProgramID int64  `json:"readiness_program_id"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &seen); err != nil {
				t.Fatalf("the client's last line is not its summary: %v\n%s", err, out)
			}
			// What the client saw is what the database holds.
			if n := env.Count(`SELECT count(*) FROM leads l JOIN clicks c ON c.id = l.click_ref
				WHERE l.id = $1 AND c.click_id = $2 AND l.customer_key = $3`, seen.LeadID, seen.ClickID, seen.CustomerKey); n != 1 {
				t.Errorf("lead %d for click %s not stored", seen.LeadID, seen.ClickID)
			}
			if n := env.Count(`SELECT count(*) FROM sales s JOIN commissions c ON c.sale_id = s.id
				WHERE s.id = $1 AND s.processor_event_id = $2 AND s.refunded_amount_cents = 4900 AND c.status = 'reversed'`,
				seen.SaleID, seen.TransactionID); n != 1 {
				t.Errorf("refunded sale %d (%s) not stored", seen.SaleID, seen.TransactionID)
			}
			if n := env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = $1`, seen.TransactionID); n != 1 {
				t.Errorf("%d sales for %s, want 1 (the duplicate must not count)", n, seen.TransactionID)
			}
			if seen.ReadinessProgramID != prog.ProgramID {
				t.Errorf("readiness of program %d, want %d", seen.ReadinessProgramID, prog.ProgramID)
			}
		})
	}
}

// checkTypes removes the `// @ts-nocheck` line a generator may write at the top of its output (every file
// under dir), so that tsc --strict checks the generated code as well as the calls into it:
// swagger-typescript-api's once declared a boolean enum, which TypeScript refuses, and nothing noticed.
func checkTypes(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".ts") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var kept []string
		for _, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) != "// @ts-nocheck" {
				kept = append(kept, line)
			}
		}
		return os.WriteFile(path, []byte(strings.Join(kept, "\n")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
