// Package commission computes a sale's commission in integer minor units with exact decimal arithmetic:
// never floats for money.
package commission

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/bojanz/currency"
)

// Commission types.
const (
	Percent          = "percent"
	Fixed            = "fixed"
	RecurringPercent = "recurring_percent"
	RecurringFixed   = "recurring_fixed"
)

// Types lists the valid commission types, in the interface's order.
var Types = []string{Percent, Fixed, RecurringPercent, RecurringFixed}

// Valid reports whether t is a commission type.
func Valid(t string) bool {
	for _, v := range Types {
		if v == t {
			return true
		}
	}
	return false
}

// Recurring reports whether t pays on every sale (else on the customer's first sale only).
func Recurring(t string) bool { return t == RecurringPercent || t == RecurringFixed }

// DefaultCurrencies are a program's currencies until it lists its own: the interface's three (its
// default currency, USD, is the schema's column default).
var DefaultCurrencies = []string{"USD", "EUR", "VND"}

// MaxCurrencies is how many currencies a program may list.
const MaxCurrencies = 30

// Exponent is the number of decimals of an ISO 4217 currency's major unit, its minor unit (2 for USD and
// EUR, 0 for VND and JPY, 3 for BHD), from the ISO list as github.com/bojanz/currency keeps it; false for
// a code that is not an ISO 4217 currency.
func Exponent(code string) (int, bool) {
	if !currency.IsValid(code) {
		return 0, false
	}
	d, ok := currency.GetDigits(code)
	return int(d), ok
}

// Exponents are every ISO 4217 currency's minor unit, by code.
func Exponents() map[string]int {
	out := map[string]int{}
	for _, code := range currency.GetCurrencyCodes() {
		if e, ok := Exponent(code); ok {
			out[code] = e
		}
	}
	return out
}

// ISOCurrency reports whether code is an ISO 4217 currency (upper case, as stored).
func ISOCurrency(code string) bool { _, ok := Exponent(code); return ok }

// CheckCurrencies refuses a program's currencies and default currency out of their rules, with the
// message the settings route answers.
func CheckCurrencies(list []string, def string) error {
	if len(list) == 0 || len(list) > MaxCurrencies {
		return fmt.Errorf("currencies must list 1 to %d ISO 4217 codes", MaxCurrencies)
	}
	seen := map[string]bool{}
	for _, c := range list {
		if !ISOCurrency(c) {
			return fmt.Errorf("currencies: %q is not an ISO 4217 currency code (such as USD, EUR or GBP)", c)
		}
		if seen[c] {
			return fmt.Errorf("currencies: %s is listed twice", c)
		}
		seen[c] = true
	}
	if !seen[def] {
		return fmt.Errorf("default_currency must be one of the program's currencies (%s)", strings.Join(list, ", "))
	}
	return nil
}

// Amount is the commission in minor units of currency for a sale of amountCents:
//   - percent types: round_half_away_from_zero(amountCents × rate / 100);
//   - fixed types: rate is in major units of the currency (25 USD → 2500).
//
// rate is decimal text (as stored).
func Amount(commissionType, rate string, amountCents int64, currency string) (int64, error) {
	r, ok := new(big.Rat).SetString(rate)
	if !ok || r.Sign() <= 0 {
		return 0, fmt.Errorf("commission rate %q is not a positive number", rate)
	}
	exp, ok := Exponent(currency)
	if !ok {
		return 0, fmt.Errorf("currency %q is not an ISO 4217 currency", currency)
	}
	var v *big.Rat
	switch commissionType {
	case Percent, RecurringPercent:
		v = new(big.Rat).Mul(new(big.Rat).SetInt64(amountCents), r)
		v.Quo(v, big.NewRat(100, 1))
	case Fixed, RecurringFixed:
		scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(exp)), nil)
		v = new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
	default:
		return 0, fmt.Errorf("commission type %q is not known", commissionType)
	}
	return RoundHalfAwayFromZero(v)
}

// Proportion is round_half_away_from_zero(total × part / whole), for reversing a commission in
// proportion to a partial refund.
func Proportion(total, part, whole int64) (int64, error) {
	if whole == 0 {
		return 0, fmt.Errorf("proportion of zero")
	}
	v := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(total), big.NewInt(part)), big.NewInt(whole))
	return RoundHalfAwayFromZero(v)
}

// RoundHalfAwayFromZero rounds v to an integer, halves away from zero.
func RoundHalfAwayFromZero(v *big.Rat) (int64, error) {
	abs := new(big.Rat).Abs(v)
	abs.Add(abs, big.NewRat(1, 2))
	q := new(big.Int).Quo(abs.Num(), abs.Denom()) // floor, as both are positive
	if v.Sign() < 0 {
		q.Neg(q)
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("amount %s overflows", v.FloatString(2))
	}
	return q.Int64(), nil
}
