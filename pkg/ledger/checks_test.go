package ledger

import (
	"errors"
	"strings"
	"testing"
)

// Each check accepts its range's ends, refuses just beyond them, and says so in the routes' words.
func TestChecks(t *testing.T) {
	t.Parallel()
	const (
		status    = "status must be one of pending, approved, in_payout, paid, rejected, reversed"
		payout    = "status must be one of processing, paid, failed"
		limit     = "limit must be between 1 and 100"
		ids       = "ids must hold 1 to 500 commission ids"
		reason    = "reason must be 1 to 500 characters"
		reference = "external_reference must be 1 to 255 characters"
		currency  = "currency must be an ISO 4217 code such as USD or GBP"
		format    = "format must be paypal"
	)
	for _, tc := range []struct {
		name string
		err  error
		want string // "" when accepted
	}{
		{"status pending", CheckStatus("pending"), ""},
		{"status rejected", CheckStatus("rejected"), ""},
		{"status unknown", CheckStatus("open"), status},
		{"status upper case", CheckStatus("PENDING"), status},
		{"status empty", CheckStatus(""), status},
		{"hold in_hold", CheckHold("in_hold"), ""},
		{"hold ended", CheckHold("ended"), ""},
		{"hold unknown", CheckHold("over"), "hold must be one of in_hold, ended"},
		{"hold empty", CheckHold(""), "hold must be one of in_hold, ended"},
		{"payout status processing", CheckPayoutStatus("processing"), ""},
		{"payout status a commission's", CheckPayoutStatus("in_payout"), payout},
		{"limit 1", CheckPageSize(1), ""},
		{"limit 100", CheckPageSize(100), ""},
		{"limit 0", CheckPageSize(0), limit},
		{"limit 101", CheckPageSize(101), limit},
		{"ids 1", CheckBulkApprove(1), ""},
		{"ids 500", CheckBulkApprove(500), ""},
		{"ids 0", CheckBulkApprove(0), ids},
		{"ids 501", CheckBulkApprove(501), ids},
		{"reason 1", CheckReason("x"), ""},
		{"reason 500 characters", CheckReason(strings.Repeat("é", 500)), ""},
		{"reason 501 characters", CheckReason(strings.Repeat("é", 501)), reason},
		{"reason empty", CheckReason(""), reason},
		{"reason blank", CheckReason(" \t\n"), reason},
		{"reference 255 characters", CheckReference(strings.Repeat("r", 255)), ""},
		{"reference 256 characters", CheckReference(strings.Repeat("r", 256)), reference},
		{"reference blank", CheckReference(" "), reference},
		{"currency USD", CheckCurrency("USD"), ""},
		{"currency VND", CheckCurrency("VND"), ""},
		{"currency lower case", CheckCurrency("usd"), currency},
		{"currency GBP", CheckCurrency("GBP"), ""},
		{"currency not ISO 4217", CheckCurrency("GBQ"), currency},
		{"format default", CheckFormat(FormatDefault), ""},
		{"format paypal", CheckFormat("paypal"), ""},
		{"format excel", CheckFormat("excel"), format},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inv *InvalidError
			switch {
			case tc.want == "" && tc.err != nil:
				t.Errorf("refused: %v", tc.err)
			case tc.want != "" && (!errors.As(tc.err, &inv) || inv.Message != tc.want):
				t.Errorf("got %v, want the InvalidError %q", tc.err, tc.want)
			}
		})
	}
}
