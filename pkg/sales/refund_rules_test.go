package sales

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/counting"
)

// decideRefund, the refund's rules without the database: skips, the too-large refusal, and the
// commission reversed in proportion (all of it once fully refunded).
func TestDecideRefund(t *testing.T) {
	t.Parallel()
	// Sale 5 of 4900 (1225 refunded so far) paying a commission of 980 (245 reversed so far), sold at
	// 10:41 UTC by partner 31: what a refund takes back is counted on the sale's hour, partner and currency.
	soldAt := time.Date(2026, 11, 20, 10, 41, 7, 0, time.UTC)
	key := counting.Key{ProgramID: 7, Hour: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), PartnerID: 31, Currency: "USD"}
	sale := func(refunded int64, commission bool) refundState {
		st := refundState{SaleID: ptr(int64(5)), SaleVersion: ptr("77"), AmountCents: ptr(int64(4900)), RefundedCents: &refunded,
			SaleDate: ptr(soldAt), PartnerID: ptr(int64(31)), Currency: ptr("USD"), SaleTest: ptr(false)}
		if commission {
			st.CommissionID, st.CommissionCents, st.CommissionReversed = ptr(int64(9)), ptr(int64(980)), ptr(refunded/5)
			st.CommissionCurrency, st.CommissionStatus = ptr("USD"), ptr("pending")
			st.CommissionVersion, st.CommissionClawback = ptr("c1"), ptr(int64(0))
		}
		return st
	}
	refunded := func(st refundState, reason string) refundState {
		st.LatestReason = &reason
		return st
	}
	withCommission := func(reversed int64, status string) *Commission {
		return &Commission{ID: 9, AmountCents: 980, ReversedAmountCents: reversed, Currency: "USD", Status: status}
	}
	in := RefundInput{ProgramID: 7, TransactionID: "t", Reason: ReasonRefund}
	part := in
	part.AmountCents = ptr(int64(1225))
	tooMuch := in
	tooMuch.AmountCents = ptr(int64(3676))
	chargeback := in
	chargeback.Reason = ReasonChargeback
	seen := in
	seen.ProcessorRefundID = "re_1"
	total := in
	total.RefundedTotalCents = ptr(int64(2450))
	stale := in
	stale.RefundedTotalCents = ptr(int64(1000))

	for _, tc := range []struct {
		name string
		in   RefundInput
		st   refundState
		want refundPlan
		err  error
	}{
		{name: "no such sale", in: in, st: refundState{}, err: ErrSaleNotFound},
		{name: "the rest, commission reversed in full", in: in, st: sale(1225, true), want: refundPlan{version: "77", amount: 3675,
			total: 4900, paymentStatus: "refunded", commissionVersion: "c1",
			effect: commission.RefundEffect{ReversedCents: 980, ReversedNowCents: 735, Status: "reversed"},
			key:    key, counts: counting.Measures{RevenueCents: -3675, CommissionCents: -735},
			res: RefundResult{Status: RefundReversed, SaleID: 5, TransactionID: "t", Reason: ReasonRefund, RefundedAmountCents: 4900, Commission: withCommission(245, "pending")}}},
		{name: "part, commission in proportion", in: part, st: sale(1225, true), want: refundPlan{version: "77", amount: 1225,
			total: 2450, paymentStatus: "partially_refunded", commissionVersion: "c1",
			effect: commission.RefundEffect{ReversedCents: 490, ReversedNowCents: 245, Status: "pending"},
			key:    key, counts: counting.Measures{RevenueCents: -1225, CommissionCents: -245},
			res: RefundResult{Status: RefundPartial, SaleID: 5, TransactionID: "t", Reason: ReasonRefund, RefundedAmountCents: 2450, Commission: withCommission(245, "pending")}}},
		{name: "more than is left", in: tooMuch, st: sale(1225, true), err: &RefundTooLargeError{Remaining: 3675}},
		{name: "chargeback of the rest, no commission", in: chargeback, st: sale(0, false), want: refundPlan{version: "77", amount: 4900,
			total: 4900, paymentStatus: "charged_back", key: key, counts: counting.Measures{RevenueCents: -4900},
			res: RefundResult{Status: RefundNoCommission, SaleID: 5, TransactionID: "t", Reason: ReasonChargeback, RefundedAmountCents: 4900}}},
		{name: "fully refunded: skipped with the stored reason", in: in, st: refunded(sale(4900, false), ReasonChargeback), want: refundPlan{skip: true, version: "77",
			res: RefundResult{Status: RefundSkipped, SaleID: 5, TransactionID: "t", Reason: ReasonChargeback, RefundedAmountCents: 4900}}},
		{name: "processor refund already recorded: skipped", in: seen, st: func() refundState { st := refunded(sale(1225, false), ReasonRefund); st.RefundSeen = true; return st }(),
			want: refundPlan{skip: true, version: "77", res: RefundResult{Status: RefundSkipped, SaleID: 5, TransactionID: "t", Reason: ReasonRefund, RefundedAmountCents: 1225}}},
		{name: "cumulative total: what it adds", in: total, st: sale(1225, false), want: refundPlan{version: "77", amount: 1225, total: 2450,
			paymentStatus: "partially_refunded", key: key, counts: counting.Measures{RevenueCents: -1225},
			res: RefundResult{Status: RefundNoCommission, SaleID: 5, TransactionID: "t", Reason: ReasonRefund, RefundedAmountCents: 2450}}},
		{name: "cumulative total that adds nothing: skipped", in: stale, st: refunded(sale(1225, false), ReasonRefund), want: refundPlan{skip: true, version: "77",
			res: RefundResult{Status: RefundSkipped, SaleID: 5, TransactionID: "t", Reason: ReasonRefund, RefundedAmountCents: 1225}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decideRefund(tc.in, tc.st)
			if tc.err != nil {
				if err == nil || (!errors.Is(err, tc.err) && err.Error() != tc.err.Error()) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(refundPlan{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
