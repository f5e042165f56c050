package programs

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"strconv"
	"strings"

	"github.com/reftrack/reftrack/pkg/commission"
)

// The ranges of a program's settings (docs/rules.md#bad-input-abuse-and-faults). Every path that
// creates or changes a program (cli/init, PATCH /programs/{id}, seeding) is checked here, before anything
// is written.
const (
	MaxPercentRate    = 100       // percent types: more than 0, at most 100
	MaxFixedRate      = 1_000_000 // fixed types, in major currency units
	RateDecimals      = 4         // the column is numeric(14,4): more would be rounded away
	MinWindowDays     = 1         // cookie_window_days and attribution_window_days
	MaxWindowDays     = 3650
	MaxDurationMonths = 1200 // duration_months; 0 (or absent) is lifetime
	MinHoldDays       = 0    // hold_days: days a commission is held after its sale before it is payable
	MaxHoldDays       = 365
	DefaultHoldDays   = 30            // the column's default
	MaxPayoutMinimum  = 1_000_000_000 // payout_minimum_cents, in each currency's minor units; at least 0
	maxDomainLength   = 253           // a DNS name
	maxLabelLength    = 63
)

// Refusals of a setting out of its range. The HTTP error table words them.
var (
	ErrRateNotPositive    = errors.New("commission rate is not a positive number")
	ErrPercentRateTooHigh = fmt.Errorf("commission rate above %d for a percent commission", MaxPercentRate)
	ErrFixedRateTooHigh   = fmt.Errorf("commission rate above %d for a fixed commission", MaxFixedRate)
	ErrRateDecimals       = fmt.Errorf("commission rate with more than %d decimal places", RateDecimals)
	ErrDomain             = errors.New("domain is not a host name")
	ErrOrigin             = errors.New("allowed origin is not an origin (scheme://host[:port])")
	ErrDurationMonths     = fmt.Errorf("duration_months outside 0 to %d", MaxDurationMonths)
	ErrHoldDays           = fmt.Errorf("hold_days outside %d to %d", MinHoldDays, MaxHoldDays)
	ErrApproval           = fmt.Errorf("commission_approval neither %s nor %s", ApprovalAuto, ApprovalManual)
	ErrPayoutMinimum      = fmt.Errorf("payout_minimum_cents outside 0 to %d", MaxPayoutMinimum)
	ErrEnrollment         = fmt.Errorf("enrollment neither %s nor %s", EnrollmentInviteOnly, EnrollmentOpen)
	ErrPartnerApproval    = fmt.Errorf("partner_approval neither %s nor %s", ApprovalManual, ApprovalAuto)
	ErrPartnerLinkCodes   = errors.New("partner_link_codes not a boolean")
)

// How a program takes partners (enrollment): by invitation only, or also by application on its public
// page. Applications are approved by a member (partner_approval manual) or at once (auto).
const (
	EnrollmentInviteOnly = "invite_only"
	EnrollmentOpen       = "open"
)

// Commission approval modes (commission_approval), pkg/commission's: with auto, a commission is approved
// once its hold has passed; with manual, a member approves it.
const (
	ApprovalAuto   = commission.ApprovalAuto
	ApprovalManual = commission.ApprovalManual
)

// CommissionTypeError refuses a commission type that is none of commission.Types; Type is the value as
// sent.
type CommissionTypeError struct{ Type string }

func (e *CommissionTypeError) Error() string {
	return fmt.Sprintf("unknown commission type %q", e.Type)
}

// WindowError refuses a window (Field: cookie_window_days or attribution_window_days) outside
// MinWindowDays … MaxWindowDays.
type WindowError struct{ Field string }

func (e *WindowError) Error() string {
	return fmt.Sprintf("%s outside %d to %d", e.Field, MinWindowDays, MaxWindowDays)
}

// CheckWindow refuses days outside MinWindowDays … MaxWindowDays, naming field.
func CheckWindow(field string, days int64) error {
	if days < MinWindowDays || days > MaxWindowDays {
		return &WindowError{Field: field}
	}
	return nil
}

// Rate reads a commission rate for a commission type from decimal text as it was sent (a JSON number's
// literal such as "12.5", "1e2" or "0.0000001"), exactly: no float ever rounds it. It returns the rate as
// the decimal text stored (four decimals).
func Rate(commissionType, text string) (string, error) {
	if !commission.Valid(commissionType) {
		return "", &CommissionTypeError{Type: commissionType}
	}
	digits, exp, neg, ok := parseDecimal(text)
	if !ok || neg || digits == "" {
		return "", ErrRateNotPositive
	}
	limit := int64(MaxFixedRate)
	if percentType(commissionType) {
		limit = MaxPercentRate
	}
	// The value is digits × 10^exp, with intLen digits before the point: compare its integer part with the
	// limit without building a number as long as the literal.
	switch intLen := len(digits) + exp; {
	case intLen > 7: // 10^7 or more: above every limit
		return "", tooHigh(commissionType)
	case intLen > 0:
		whole := digits
		if exp < 0 {
			whole = digits[:intLen]
		} else {
			whole += strings.Repeat("0", exp)
		}
		n, _ := strconv.ParseInt(whole, 10, 64)
		if n > limit || (n == limit && exp < 0) { // exp < 0: a fraction follows (digits has no trailing zeros)
			return "", tooHigh(commissionType)
		}
	}
	if exp < -RateDecimals {
		return "", ErrRateDecimals
	}
	// At most 11 significant digits by now: the exact value is small to build.
	r, _ := new(big.Rat).SetString(digits + "e" + strconv.Itoa(exp))
	return r.FloatString(RateDecimals), nil
}

func percentType(t string) bool { return t == commission.Percent || t == commission.RecurringPercent }

func tooHigh(commissionType string) error {
	if percentType(commissionType) {
		return ErrPercentRateTooHigh
	}
	return ErrFixedRateTooHigh
}

// parseDecimal reads a decimal literal (JSON number grammar: -?int(.frac)?([eE][+-]?exp)?) as
// digits × 10^exp, digits without leading or trailing zeros ("" for zero). It never builds the number, so
// an exponent such as 1e999999999 costs nothing.
func parseDecimal(s string) (digits string, exp int, neg, ok bool) {
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	mantissa, expText, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mantissa, ".")
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(mantissa, ".") && frac == "") {
		return "", 0, false, false
	}
	if hasExp {
		sign := 1
		switch {
		case strings.HasPrefix(expText, "-"):
			sign, expText = -1, expText[1:]
		case strings.HasPrefix(expText, "+"):
			expText = expText[1:]
		}
		if expText == "" || !allDigits(expText) {
			return "", 0, false, false
		}
		// The body is at most 64 KiB, so exponents beyond ±10^9 act like ±10^9.
		expText = strings.TrimLeft(expText, "0")
		if len(expText) > 9 {
			expText = "1000000000"
		}
		n, _ := strconv.Atoi("0" + expText)
		exp = sign * n
	}
	digits = strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	if trimmed == "" {
		exp = 0
	}
	return trimmed, exp, neg, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Domain reads the program's site as people paste it: a leading http:// or https:// and a trailing /
// are removed; what is left must be a host name (letters, digits and hyphens in dot-separated labels: no
// path, query, port or spaces). It returns the host name in lower case.
func Domain(s string) (string, error) {
	host, found := strings.CutPrefix(s, "https://")
	if !found {
		host = strings.TrimPrefix(s, "http://")
	}
	host = strings.TrimSuffix(host, "/")
	if !hostName(host) {
		return "", ErrDomain
	}
	return strings.ToLower(host), nil
}

// hostName reports whether s is a DNS host name: 1 to 253 characters of dot-separated labels, each 1 to 63
// letters, digits and hyphens, neither starting nor ending with a hyphen.
func hostName(s string) bool {
	if s == "" || len(s) > maxDomainLength {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > maxLabelLength || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// NormaliseOrigin checks a browser origin, scheme://host[:port] (http or https; a host name, or an IPv6
// address in brackets; a trailing / allowed), and returns it in lower case without the trailing slash, as
// browsers send it in the Origin header.
func NormaliseOrigin(o string) (string, error) {
	rest, found := strings.CutPrefix(o, "https://")
	scheme := "https"
	if !found {
		if rest, found = strings.CutPrefix(o, "http://"); !found {
			return "", ErrOrigin
		}
		scheme = "http"
	}
	rest = strings.TrimSuffix(rest, "/")
	host, port, hasPort := rest, "", false
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", ErrOrigin
		}
		host = rest[1:end]
		if after := rest[end+1:]; after != "" {
			if port, hasPort = strings.CutPrefix(after, ":"); !hasPort {
				return "", ErrOrigin
			}
		}
		if ip := net.ParseIP(host); ip == nil || !strings.Contains(host, ":") {
			return "", ErrOrigin
		}
	} else {
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			host, port, hasPort = rest[:i], rest[i+1:], true
		}
		if !hostName(host) {
			return "", ErrOrigin
		}
	}
	if hasPort {
		if n, err := strconv.Atoi(port); err != nil || !allDigits(port) || port[0] == '0' || n > 65535 {
			return "", ErrOrigin
		}
	}
	return scheme + "://" + strings.ToLower(rest), nil
}

// NormaliseOrigins checks and normalises every origin of a list.
func NormaliseOrigins(list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, o := range list {
		n, err := NormaliseOrigin(o)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// DurationMonths reads duration_months: 0 is lifetime (nil, stored as NULL), 1 … MaxDurationMonths a
// number of months.
func DurationMonths(months int64) (*int, error) {
	switch {
	case months == 0:
		return nil, nil
	case months < 0 || months > MaxDurationMonths:
		return nil, ErrDurationMonths
	}
	m := int(months)
	return &m, nil
}

// CheckHoldDays refuses hold_days outside MinHoldDays … MaxHoldDays.
func CheckHoldDays(days int64) error {
	if days < MinHoldDays || days > MaxHoldDays {
		return ErrHoldDays
	}
	return nil
}

// CheckApproval refuses a commission_approval other than ApprovalAuto and ApprovalManual.
func CheckApproval(mode string) error {
	if mode != ApprovalAuto && mode != ApprovalManual {
		return ErrApproval
	}
	return nil
}

// CheckEnrollment refuses an enrollment other than EnrollmentInviteOnly and EnrollmentOpen.
func CheckEnrollment(mode string) error {
	if mode != EnrollmentInviteOnly && mode != EnrollmentOpen {
		return ErrEnrollment
	}
	return nil
}

// CheckPartnerApproval refuses a partner_approval other than ApprovalManual and ApprovalAuto.
func CheckPartnerApproval(mode string) error {
	if mode != ApprovalAuto && mode != ApprovalManual {
		return ErrPartnerApproval
	}
	return nil
}

// CheckPayoutMinimum refuses payout_minimum_cents outside 0 … MaxPayoutMinimum.
func CheckPayoutMinimum(cents int64) error {
	if cents < 0 || cents > MaxPayoutMinimum {
		return ErrPayoutMinimum
	}
	return nil
}
