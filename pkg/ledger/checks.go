package ledger

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/pagecursor"
)

// The range checks of the ledger's inputs, each an *InvalidError in the words the routes answer. The
// functions below use them, and so does the CLI (cmd/reftrack), to refuse a value before sending it.

// CheckStatus refuses a commission status that is not one of Statuses.
func CheckStatus(status string) error {
	if !slices.Contains(Statuses, status) {
		return invalid("status must be one of %s", strings.Join(Statuses, ", "))
	}
	return nil
}

// The hold filter's values: a commission still in its hold, or whose hold has ended.
const (
	HoldRunning = "in_hold"
	HoldEnded   = "ended"
)

// CheckHold refuses a hold filter that is not in_hold or ended.
func CheckHold(hold string) error {
	if hold != HoldRunning && hold != HoldEnded {
		return invalid("hold must be one of %s, %s", HoldRunning, HoldEnded)
	}
	return nil
}

// CheckPayoutStatus refuses a payout status that is not one of PayoutStatuses.
func CheckPayoutStatus(status string) error {
	if !slices.Contains(PayoutStatuses, status) {
		return invalid("status must be one of %s", strings.Join(PayoutStatuses, ", "))
	}
	return nil
}

// CheckPageSize refuses a page size (limit) outside 1 … MaxPageSize.
func CheckPageSize(limit int) error {
	if !pagecursor.CheckSize(limit) {
		return invalid("%s", pagecursor.SizeRule)
	}
	return nil
}

// CheckBulkApprove refuses a bulk approval of n commissions outside 1 … MaxBulkApprove.
func CheckBulkApprove(n int) error {
	if n < 1 || n > MaxBulkApprove {
		return invalid("ids must hold 1 to %d commission ids", MaxBulkApprove)
	}
	return nil
}

// CheckReason refuses a rejection's or a failure's reason that is blank or longer than MaxReason
// characters.
func CheckReason(reason string) error {
	if strings.TrimSpace(reason) == "" || utf8.RuneCountInString(reason) > MaxReason {
		return invalid("reason must be 1 to %d characters", MaxReason)
	}
	return nil
}

// CheckReference refuses a payout's external reference that is blank or longer than MaxReference
// characters.
func CheckReference(reference string) error {
	if strings.TrimSpace(reference) == "" || utf8.RuneCountInString(reference) > MaxReference {
		return invalid("external_reference must be 1 to %d characters", MaxReference)
	}
	return nil
}

// CheckCurrency refuses a payout run's currency that is not an ISO 4217 code: any is paid out, whether
// or not the program still lists it (money recorded in a currency it took off its list is owed in it).
func CheckCurrency(currency string) error {
	if !commission.ISOCurrency(currency) {
		return invalid("currency must be an ISO 4217 code such as USD or GBP")
	}
	return nil
}

// CheckFormat refuses an export format other than FormatDefault and FormatPayPal.
func CheckFormat(format string) error {
	if format != FormatDefault && format != FormatPayPal {
		return invalid("format must be paypal")
	}
	return nil
}
