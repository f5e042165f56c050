package ports_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/reftrack/reftrack/pkg/testkit/ports"
)

// Refusing refuses connections, and nothing else can listen on it while the test runs.
func TestRefusingRefusesAndStaysTaken(t *testing.T) {
	t.Parallel()
	addr := ports.Refusing(t)
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("connected to %s", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("listened on %s while it was held", addr)
	}
}
