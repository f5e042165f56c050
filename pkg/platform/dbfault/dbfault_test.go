package dbfault

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"
)

func TestUnavailable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"bad connection, wrapped", fmt.Errorf("record sale: %w", driver.ErrBadConn), true},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"statement timeout", &pq.Error{Code: "57014"}, true},
		{"lock timeout", &pq.Error{Code: "55P03"}, true},
		{"admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"cannot connect now", &pq.Error{Code: "57P03"}, true},
		{"connection failure", &pq.Error{Code: "08006"}, true},
		{"not accepting connections (FATAL)", &pq.Error{Code: "55000", Severity: "FATAL"}, true},
		{"unique violation", &pq.Error{Code: "23505", Severity: "ERROR"}, false},
		{"syntax error", &pq.Error{Code: "42601", Severity: "ERROR"}, false},
		{"a plain error", errors.New("commission rule missing"), false},
		{"canceled by the client", context.Canceled, false},
	}
	for _, tt := range tests {
		if got := Unavailable(tt.err); got != tt.want {
			t.Errorf("%s: Unavailable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
