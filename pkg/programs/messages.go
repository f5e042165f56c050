package programs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/reftrack/reftrack/pkg/commission"
)

// Message is what a client is told when a setting is refused (the error's text is for logs). The
// server's error table answers it with a 400, and the CLI prints it when it refuses a value before
// sending: one wording, so the two cannot drift apart. ok is false for any other error.
func Message(err error) (msg string, ok bool) {
	var typeErr *CommissionTypeError
	var windowErr *WindowError
	switch {
	case errors.As(err, &typeErr):
		return "Invalid commission_type: " + typeErr.Type + ". Valid: " + strings.Join(commission.Types, ", "), true
	case errors.As(err, &windowErr):
		return fmt.Sprintf("%s must be between %d and %d", windowErr.Field, MinWindowDays, MaxWindowDays), true
	case errors.Is(err, ErrRateNotPositive):
		return "commission_rate must be a positive number", true
	case errors.Is(err, ErrPercentRateTooHigh):
		return fmt.Sprintf("commission_rate must be at most %d for percent commissions", MaxPercentRate), true
	case errors.Is(err, ErrFixedRateTooHigh):
		return fmt.Sprintf("commission_rate must be at most %d for fixed commissions", MaxFixedRate), true
	case errors.Is(err, ErrRateDecimals):
		return fmt.Sprintf("commission_rate must have at most %d decimal places", RateDecimals), true
	case errors.Is(err, ErrDomain):
		return "domain must be a host name such as shop.example.com", true
	case errors.Is(err, ErrOrigin):
		return "allowed_origins entries must be origins such as https://shop.example.com", true
	case errors.Is(err, ErrDurationMonths):
		return fmt.Sprintf("duration_months must be a whole number of months from 0 (lifetime) to %d", MaxDurationMonths), true
	case errors.Is(err, ErrHoldDays):
		return fmt.Sprintf("hold_days must be between %d and %d", MinHoldDays, MaxHoldDays), true
	case errors.Is(err, ErrApproval):
		return fmt.Sprintf("commission_approval must be %s or %s", ApprovalAuto, ApprovalManual), true
	case errors.Is(err, ErrPayoutMinimum):
		return fmt.Sprintf("payout_minimum_cents must be between 0 and %d", MaxPayoutMinimum), true
	case errors.Is(err, ErrEnrollment):
		return fmt.Sprintf("enrollment must be %s or %s", EnrollmentInviteOnly, EnrollmentOpen), true
	case errors.Is(err, ErrPartnerApproval):
		return fmt.Sprintf("partner_approval must be %s or %s", ApprovalManual, ApprovalAuto), true
	case errors.Is(err, ErrPartnerLinkCodes):
		return "partner_link_codes must be true or false", true
	}
	return "", false
}
