package clients_test

import (
	"os"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Each test's database is emptied and handed to the next test of this binary (dbtest.Recycle), and the
// exchanges validated are counted (apitest.Main).
func TestMain(m *testing.M) { os.Exit(apitest.Main(m.Run)) }
