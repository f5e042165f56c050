package programs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/reftrack/reftrack/pkg/programs"
)

// Each refusal of a setting has the words docs/rules.md#bad-input-abuse-and-faults gives it; the server and
// the CLI both answer them.
func TestMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{&programs.CommissionTypeError{Type: "bounty"}, "Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed"},
		{programs.ErrRateNotPositive, "commission_rate must be a positive number"},
		{programs.ErrPercentRateTooHigh, "commission_rate must be at most 100 for percent commissions"},
		{programs.ErrFixedRateTooHigh, "commission_rate must be at most 1000000 for fixed commissions"},
		{programs.ErrRateDecimals, "commission_rate must have at most 4 decimal places"},
		{programs.CheckWindow("cookie_window_days", 0), "cookie_window_days must be between 1 and 3650"},
		{programs.CheckWindow("attribution_window_days", 3651), "attribution_window_days must be between 1 and 3650"},
		{programs.ErrDomain, "domain must be a host name such as shop.example.com"},
		{programs.ErrOrigin, "allowed_origins entries must be origins such as https://shop.example.com"},
		{programs.ErrDurationMonths, "duration_months must be a whole number of months from 0 (lifetime) to 1200"},
		{fmt.Errorf("create program: %w", programs.ErrDomain), "domain must be a host name such as shop.example.com"},
		{programs.CheckHoldDays(-1), "hold_days must be between 0 and 365"},
		{programs.CheckHoldDays(366), "hold_days must be between 0 and 365"},
		{programs.CheckApproval("sometimes"), "commission_approval must be auto or manual"},
		{programs.CheckPayoutMinimum(-1), "payout_minimum_cents must be between 0 and 1000000000"},
		{programs.CheckPayoutMinimum(1_000_000_001), "payout_minimum_cents must be between 0 and 1000000000"},
	}
	for _, tc := range tests {
		if got, ok := programs.Message(tc.err); !ok || got != tc.want {
			t.Errorf("Message(%v) = %q, %v; want %q", tc.err, got, ok, tc.want)
		}
	}
	for _, err := range []error{programs.ErrNotFound, errors.New("connection refused"), nil} {
		if got, ok := programs.Message(err); ok {
			t.Errorf("Message(%v) = %q: not a setting's refusal", err, got)
		}
	}
}

// Check refuses, without a database, what Insert refuses.
func TestCheck(t *testing.T) {
	t.Parallel()
	months := func(n int64) *int64 { return &n }
	valid := programs.New{Name: "Acme", Domain: "https://Shop.Example.com/", CommissionType: "recurring_percent", CommissionRate: "12.5", DurationMonths: months(12)}
	if err := valid.Check(); err != nil {
		t.Fatalf("Check(%+v) = %v", valid, err)
	}
	for _, tc := range []struct {
		change func(*programs.New)
		want   error
	}{
		{func(n *programs.New) { n.Domain = "shop.example.com/path" }, programs.ErrDomain},
		{func(n *programs.New) { n.CommissionRate = "0" }, programs.ErrRateNotPositive},
		{func(n *programs.New) { n.CommissionRate = "100.5" }, programs.ErrPercentRateTooHigh},
		{func(n *programs.New) { n.DurationMonths = months(-1) }, programs.ErrDurationMonths},
		{func(n *programs.New) { n.DurationMonths = months(1201) }, programs.ErrDurationMonths},
		{func(n *programs.New) { n.AllowedOrigins = []string{"shop.example.com"} }, programs.ErrOrigin},
	} {
		n := valid
		tc.change(&n)
		if err := n.Check(); !errors.Is(err, tc.want) {
			t.Errorf("Check(%+v) = %v, want %v", n, err, tc.want)
		}
	}
	var typeErr *programs.CommissionTypeError
	if err := (programs.New{Domain: "x.example", CommissionType: "bounty", CommissionRate: "5"}).Check(); !errors.As(err, &typeErr) {
		t.Errorf("unknown type: %v", err)
	}
	var windowErr *programs.WindowError
	days := int64(0)
	if err := (programs.New{Domain: "x.example", CommissionType: "fixed", CommissionRate: "5", CookieWindowDays: &days}).Check(); !errors.As(err, &windowErr) || windowErr.Field != "cookie_window_days" {
		t.Errorf("cookie window 0: %v", err)
	}
}
