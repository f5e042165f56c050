package mail_test

import (
	"os"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Each test's database is emptied and handed to the next test of this binary (dbtest.Recycle).
func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }
