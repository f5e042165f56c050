// Package commission computes a sale's commission in integer minor units with exact decimal arithmetic:
// never floats for money.
package commission

import (
	"fmt"
	"math/big"
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

// exponents are the minor-unit exponents of the accepted currencies.
var exponents = map[string]int{"USD": 2, "EUR": 2, "VND": 0}

// Currencies lists the accepted currencies.
var Currencies = []string{"USD", "EUR", "VND"}

// Exponent is the number of decimals of currency's major unit (2 for USD and EUR, 0 for VND); false when
// the currency is not accepted.
func Exponent(currency string) (int, bool) { e, ok := exponents[currency]; return e, ok }

// SupportedCurrency reports whether c is accepted.
func SupportedCurrency(c string) bool { _, ok := exponents[c]; return ok }

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
	exp, ok := exponents[currency]
	if !ok {
		return 0, fmt.Errorf("currency %q is not supported", currency)
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
