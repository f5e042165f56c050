package db

import (
	"errors"

	"github.com/lib/pq"
)

// Postgres error codes the application acts on.
const (
	codeUniqueViolation = "23505"
	codeUndefinedTable  = "42P01"
)

// IsUniqueViolation reports whether err is a unique-constraint violation, and of which constraint (or
// unique index).
func IsUniqueViolation(err error) (constraint string, ok bool) {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == codeUniqueViolation {
		return pqErr.Constraint, true
	}
	return "", false
}

func isUndefinedTable(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == codeUndefinedTable
}
