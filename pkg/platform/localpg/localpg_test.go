package localpg

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/lib/pq"
)

func freePort(t *testing.T) int {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A real cluster from the installed binaries: created, started, queried, stopped, and started again
// from its existing data.
func TestStartStop(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a PostgreSQL server")
	}
	if _, err := FindBinaries(); errors.Is(err, ErrNoBinaries) {
		t.Skip("no PostgreSQL binaries on this machine")
	}
	root := t.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} { // the server may run as another OS user
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "postgres")
	port := freePort(t)
	ctx := context.Background()
	for round := 1; round <= 2; round++ {
		c, err := Start(ctx, dir, port, t.Logf)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !c.Started() || !Answers(port) {
			t.Fatalf("round %d: not running", round)
		}
		db, err := sql.Open("postgres", c.URL("postgres"))
		if err != nil {
			t.Fatal(err)
		}
		var one int
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("round %d: query: %v", round, err)
		}
		db.Close()
		// A second Start while it runs reuses it and will not stop it.
		again, err := Start(ctx, dir, port, t.Logf)
		if err != nil || again.Started() {
			t.Errorf("round %d: second Start = %v, started %v", round, err, again.Started())
		}
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if Answers(port) {
			t.Fatalf("round %d: still answering after Stop", round)
		}
	}
}

// Settings become -c options in name order; anything the shell under pg_ctl would split or unquote is
// refused.
func TestCommandLine(t *testing.T) {
	t.Parallel()
	got, err := commandLine(map[string]string{"fsync": "off", "full_page_writes": "off", "max_connections": "50"})
	if want := " -c fsync=off -c full_page_writes=off -c max_connections=50"; err != nil || got != want {
		t.Errorf("commandLine = %q, %v; want %q", got, err, want)
	}
	if got, err := commandLine(nil); err != nil || got != "" {
		t.Errorf("no settings: %q, %v", got, err)
	}
	for _, bad := range []map[string]string{{"search_path": "a, b"}, {"application_name": "'x'"}, {"": "on"}, {"x": `a\b`}} {
		if _, err := commandLine(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
