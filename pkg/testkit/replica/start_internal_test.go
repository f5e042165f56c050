package replica

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/platform/localpg"
	"github.com/reftrack/reftrack/pkg/testkit/ports"
	"github.com/reftrack/reftrack/pkg/testkit/tools"
)

// A cluster whose port was taken before it started starts on the next free port: a port where another
// server answers is never used, and one another process holds (the server cannot bind it) is given up.
func TestStartMovesOffTakenPorts(t *testing.T) {
	t.Parallel()
	if _, err := localpg.FindBinaries(); err != nil {
		tools.Missing(t, "the PostgreSQL binaries: "+err.Error())
	}
	answering, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer answering.Close()
	_, held, err := net.SplitHostPort(ports.Refusing(t))
	if err != nil {
		t.Fatal(err)
	}
	heldPort, err := strconv.Atoi(held)
	if err != nil {
		t.Fatal(err)
	}
	offered := []int{answering.Addr().(*net.TCPAddr).Port, heldPort}
	free := func() (int, error) {
		if len(offered) > 0 {
			p := offered[0]
			offered = offered[1:]
			return p, nil
		}
		return localpg.FreePort()
	}
	root := t.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} { // entered by the "postgres" OS user when run as root
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := startOn(ctx, t, filepath.Join(root, "primary"), free)
	if len(offered) != 0 || c.Port == heldPort || c.Port == answering.Addr().(*net.TCPAddr).Port || !c.Started() {
		t.Fatalf("started on %d (started %v), %d taken ports left unoffered", c.Port, c.Started(), len(offered))
	}
	if !portTaken(filepath.Join(root, "primary")) {
		t.Error("the log does not say the held port was in use")
	}
}
