// Package dbfault recognises the errors that mean the database is unreachable or too slow, rather than
// that a request was wrong or the code is broken. The HTTP layer answers them 503 with Retry-After (the
// client retries and succeeds once the database is back); everything else stays a 500.
package dbfault

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/lib/pq"
)

// Unavailable reports whether err, anywhere in its chain, says the database could not be reached, went
// away, or did not answer in time.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		return unavailableState(string(pe.Code)) || pe.Fatal() || pe.Severity == "PANIC"
	}
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &oe), errors.As(err, &ne) && ne.Timeout():
		return true
	}
	// lib/pq reports a connection that broke mid-conversation with plain errors of these words.
	msg := err.Error()
	return strings.Contains(msg, "driver: bad connection") || strings.Contains(msg, "pq: unexpected EOF") ||
		strings.Contains(msg, "connection reset by peer")
}

// unavailableState reports whether a SQLSTATE means the database is unreachable or too slow: a
// statement or lock timeout, a shutdown or a refused start, a lost connection, or exhausted resources.
func unavailableState(code string) bool {
	switch code {
	case "57014", // query_canceled: statement_timeout
		"55P03", // lock_not_available: lock_timeout
		"57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now: starting up or shutting down
		"53300": // too_many_connections
		return true
	}
	return strings.HasPrefix(code, "08") // connection_exception and its subclasses
}

// Conflict reports whether err is PostgreSQL rolling a statement back for a conflict between concurrent
// transactions only (a deadlock or a serialisation failure): the same statement may succeed if run again.
func Conflict(err error) bool {
	var pe *pq.Error
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001") // deadlock_detected, serialization_failure
}
