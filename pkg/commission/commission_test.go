package commission

import (
	"math/big"
	"testing"
)

func TestAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, rate string
		amount    int64
		currency  string
		want      int64
	}{
		{Percent, "20", 4900, "USD", 980},
		{Percent, "30", 999, "USD", 300}, // 299.7 → 300
		{Percent, "12.5", 1, "USD", 0},   // 0.125 → 0
		{Percent, "50", 1, "USD", 1},     // 0.5 → 1 (half away from zero)
		{Percent, "15", 10, "USD", 2},    // 1.5 → 2
		{Percent, "25", 10, "USD", 3},    // 2.5 → 3 (not banker's 2)
		{RecurringPercent, "33.3333", 10000, "EUR", 3333},
		{Percent, "10", 125000, "VND", 12500},
		{Fixed, "25", 4900, "USD", 2500},
		{Fixed, "25.005", 4900, "USD", 2501}, // 2500.5 → 2501
		{Fixed, "25", 4900, "VND", 25},
		{Fixed, "25.5", 4900, "VND", 26},
		{RecurringFixed, "9.99", 100, "EUR", 999},
		{Percent, "5", 4900, "GBP", 245}, // any ISO 4217 currency
		{Fixed, "12", 100, "JPY", 12},
		{Fixed, "1.2345", 100, "BHD", 1235}, // three decimals: 1234.5 → 1235
	}
	for _, tt := range tests {
		got, err := Amount(tt.typ, tt.rate, tt.amount, tt.currency)
		if err != nil {
			t.Fatalf("Amount(%s, %s, %d, %s): %v", tt.typ, tt.rate, tt.amount, tt.currency, err)
		}
		if got != tt.want {
			t.Errorf("Amount(%s, %s, %d, %s) = %d, want %d", tt.typ, tt.rate, tt.amount, tt.currency, got, tt.want)
		}
	}
	for _, bad := range [][4]string{{"tiered", "5", "USD"}, {Percent, "0", "USD"}, {Percent, "x", "USD"}, {Percent, "5", "GBQ"}} {
		if _, err := Amount(bad[0], bad[1], 100, bad[2]); err == nil {
			t.Errorf("Amount(%v) accepted", bad)
		}
	}
}

func TestProportion(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ total, part, whole, want int64 }{
		{980, 4900, 4900, 980},
		{980, 2450, 4900, 490},
		{981, 2450, 4900, 491}, // 490.5 → 491
		{3, 1, 3, 1},
		{0, 10, 100, 0},
	} {
		got, err := Proportion(tt.total, tt.part, tt.whole)
		if err != nil || got != tt.want {
			t.Errorf("Proportion(%d, %d, %d) = %d, %v; want %d", tt.total, tt.part, tt.whole, got, err, tt.want)
		}
	}
}

func TestRoundHalfAwayFromZeroNegative(t *testing.T) {
	t.Parallel()
	if got, _ := RoundHalfAwayFromZero(big.NewRat(-5, 2)); got != -3 {
		t.Errorf("round(-2.5) = %d, want -3", got)
	}
}

// Minor units are ISO 4217's, for every code; a program's list is checked whole.
func TestCurrencies(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]int{"USD": 2, "EUR": 2, "VND": 0, "GBP": 2, "JPY": 0, "BHD": 3, "CLF": 4, "IQD": 3} {
		if got, ok := Exponent(code); !ok || got != want {
			t.Errorf("Exponent(%s) = %d, %v; want %d", code, got, ok, want)
		}
	}
	for _, bad := range []string{"usd", "XXX", "GBQ", "", "US"} {
		if _, ok := Exponent(bad); ok {
			t.Errorf("Exponent(%q) accepted", bad)
		}
	}
	if err := CheckCurrencies([]string{"USD", "GBP", "JPY"}, "GBP"); err != nil {
		t.Errorf("USD, GBP, JPY with GBP: %v", err)
	}
	thirtyOne := make([]string, 0, 31)
	for _, c := range []string{"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "NZD", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "RON", "BGN",
		"TRY", "INR", "BRL", "MXN", "ZAR", "SGD", "HKD", "KRW", "CNY", "TWD", "THB", "IDR", "MYR", "PHP", "VND"} {
		thirtyOne = append(thirtyOne, c)
	}
	for _, tc := range []struct {
		list []string
		def  string
		want string
	}{
		{nil, "USD", "currencies must list 1 to 30 ISO 4217 codes"},
		{thirtyOne, "USD", "currencies must list 1 to 30 ISO 4217 codes"},
		{[]string{"USD", "gbp"}, "USD", `currencies: "gbp" is not an ISO 4217 currency code (such as USD, EUR or GBP)`},
		{[]string{"USD", "USD"}, "USD", "currencies: USD is listed twice"},
		{[]string{"USD", "EUR"}, "GBP", "default_currency must be one of the program's currencies (USD, EUR)"},
	} {
		if err := CheckCurrencies(tc.list, tc.def); err == nil || err.Error() != tc.want {
			t.Errorf("CheckCurrencies(%v, %s) = %v, want %q", tc.list, tc.def, err, tc.want)
		}
	}
}
