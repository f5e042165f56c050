package main

import (
	"time"

	"github.com/reftrack/reftrack/pkg/ledger"
)

// money is an amount in minor units as a person reads it: major units with the currency's exponent and
// the currency (1250 USD is "12.50 USD", 125000 VND "125000 VND"), never through a float.
func money(cents int64, currency string) string {
	return ledger.FormatAmount(cents, currency) + " " + currency
}

// day is an instant's date in UTC, or "-" for none.
func day(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.DateOnly)
}

// orDash is s, or "-" for none.
func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}
