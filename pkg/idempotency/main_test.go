package idempotency_test

import (
	"os"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Recycle(m.Run)) }
