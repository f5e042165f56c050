package apitest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// exchanges counts the exchanges (request and response) this process validated against the spec.
var exchanges atomic.Int64

// ExchangesFileEnv names a file to which each test process appends how many exchanges it validated.
const ExchangesFileEnv = "REFTRACK_EXCHANGES_FILE"

// Main runs a test binary's tests from TestMain, with the test databases recycled (dbtest.Recycle), and
// then, when REFTRACK_EXCHANGES_FILE is set, appends one line to that file: the test binary's name and
// the number of exchanges it validated. The sum over `make test` is what the validator has seen:
//
//	func TestMain(m *testing.M) { os.Exit(apitest.Main(m.Run)) }
func Main(run func() int) int {
	code := dbtest.Recycle(run)
	if path := os.Getenv(ExchangesFileEnv); path != "" {
		if err := appendCount(path); err != nil {
			fmt.Println("apitest:", err)
			code = max(code, 1)
		}
	}
	return code
}

// appendCount appends one short line; O_APPEND keeps the lines of processes running at once whole.
func appendCount(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "%s %d\n", filepath.Base(os.Args[0]), exchanges.Load()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
