package sales_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The refund's calls take exactly the inputs their functions declare.
func TestRefundCallsMatchTheirFunctions(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	for _, err := range []error{
		pgcall.Check(ctx, d.DB, sales.RefundStateCall),
		pgcall.Check(ctx, d.DB, sales.RefundWriteCall),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

// refundFixture is a program whose customer bought twice: the first sale paid a commission (percent
// pays the first sale only), the second none.
type refundFixture struct {
	t                *testing.T
	ctx              context.Context
	d                *dbtest.Database
	brand, other     seed.Result
	paid, unpaid     sales.Result
	paidTxn, freeTxn string
}

func newRefundFixture(t *testing.T) *refundFixture {
	t.Helper()
	f := &refundFixture{t: t, ctx: context.Background(), d: dbtest.New(t), paidTxn: "order-1", freeTxn: "order-2"}
	var err error
	if f.brand, err = seed.Run(f.ctx, f.d.DB, seed.Options{CommissionType: "percent", CommissionRate: "20"}); err != nil {
		t.Fatal(err)
	}
	if f.other, err = seed.Run(f.ctx, f.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	rec := clicks.NewRecorder(f.d.DB, quiet(), 1, 8, nil)
	defer rec.Close()
	c, err := rec.Record(f.ctx, clicks.Input{AffiliateURL: f.brand.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leads.Track(f.ctx, f.d.DB, quiet(), leads.Input{ProgramID: f.brand.ProgramID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: "buyer", Source: leads.SourceServer}); err != nil {
		t.Fatal(err)
	}
	sale := func(txn string) sales.Result {
		r, err := sales.Record(f.ctx, f.d.DB, quiet(), time.Now, sales.Input{ProgramID: f.brand.ProgramID, TransactionID: txn, AmountCents: 5000,
			Currency: "USD", CustomerKey: "buyer", OccurredAt: time.Now(), Source: sales.SourceAPI})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	f.paid, f.unpaid = sale(f.paidTxn), sale(f.freeTxn)
	if f.paid.Commission == nil || f.paid.Commission.AmountCents != 1000 || f.unpaid.Commission != nil {
		t.Fatalf("sales: %+v paying %+v, %+v paying %+v; want 1000 on the first, none on the second",
			f.paid, f.paid.Commission, f.unpaid, f.unpaid.Commission)
	}
	return f
}

func (f *refundFixture) state(in ...sales.RefundStateInput) []sales.RefundState {
	f.t.Helper()
	var out []sales.RefundState
	if err := sales.RefundStateCall.Select(f.ctx, f.d.DB, &out, in, sales.RefundNow{Now: time.Now()}); err != nil {
		f.t.Fatal(err)
	}
	if len(out) != len(in) {
		f.t.Fatalf("%d rows for %d refunds", len(out), len(in))
	}
	for i, r := range out {
		if r.Ord != int64(i+1) {
			f.t.Fatalf("row %d has ord %d", i, r.Ord)
		}
	}
	return out
}

func (f *refundFixture) write(in ...sales.RefundWriteInput) []sales.RefundWritten {
	f.t.Helper()
	var out []sales.RefundWritten
	if err := sales.RefundWriteCall.Select(f.ctx, f.d.DB, &out, in, sales.RefundNow{Now: time.Now()}); err != nil {
		f.t.Fatal(err)
	}
	if len(out) != len(in) {
		f.t.Fatalf("%d rows for %d refunds", len(out), len(in))
	}
	for i, r := range out {
		if r.Ord != int64(i+1) {
			f.t.Fatalf("row %d has ord %d", i, r.Ord)
		}
	}
	return out
}

// saleVersion is the sale's row version as refunds_state reads it.
func (f *refundFixture) commissionVersion(id int64) string {
	f.t.Helper()
	var v string
	if err := f.d.Get(&v, `SELECT xmin::text FROM commissions WHERE id = $1`, id); err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *refundFixture) saleVersion(sale int64) string {
	f.t.Helper()
	var v string
	if err := f.d.Get(&v, `SELECT xmin::text FROM sales WHERE id = $1`, sale); err != nil {
		f.t.Fatal(err)
	}
	return v
}

// refundRow is a stored refund.
type refundRow struct {
	Sale              int64   `db:"sale_id"`
	Program           int64   `db:"program_id"`
	Reason            string  `db:"reason"`
	RefundReason      *string `db:"refund_reason"`
	AmountCents       int64   `db:"amount_cents"`
	ReversedCents     int64   `db:"commission_reversed_cents"`
	ProcessorRefundID *string `db:"processor_refund_id"`
	Source            string  `db:"source"`
}

func (f *refundFixture) refunds() []refundRow {
	f.t.Helper()
	var out []refundRow
	if err := f.d.Select(&out, `SELECT sale_id, program_id, reason, refund_reason, amount_cents, commission_reversed_cents,
		processor_refund_id, source FROM refunds ORDER BY id`); err != nil {
		f.t.Fatal(err)
	}
	return out
}

// saleRow is what a refund changes of a sale and its commission.
type saleRow struct {
	Refunded         int64   `db:"refunded_amount_cents"`
	PaymentStatus    string  `db:"payment_status"`
	CommissionRev    *int64  `db:"reversed_amount_cents"`
	CommissionStatus *string `db:"status"`
}

func (f *refundFixture) sale(id int64) saleRow {
	f.t.Helper()
	var s saleRow
	if err := f.d.Get(&s, `SELECT s.refunded_amount_cents, s.payment_status, c.reversed_amount_cents, c.status
		FROM sales s LEFT JOIN commissions c ON c.sale_id = s.id WHERE s.id = $1`, id); err != nil {
		f.t.Fatal(err)
	}
	return s
}

func refundPtr[T any](v T) *T { return &v }

// refunds_state, called directly: the program's sale by transaction_id with its row version and
// commission (none: NULL), whether a processor refund id is recorded in the program (none given: not
// seen), and the reason of the sale's latest refund.
func TestRefundsStateFunction(t *testing.T) {
	t.Parallel()
	f := newRefundFixture(t)
	paid, unpaid := f.paid.SaleID, f.unpaid.SaleID
	c := f.paid.Commission
	// Two refunds of the paid sale, the processor's re_1 first, then a chargeback.
	if _, err := f.d.Exec(`INSERT INTO refunds (sale_id, program_id, reason, amount_cents, processor_refund_id, source)
		VALUES ($1, $2, 'refund', 100, 're_1', 'webhook'), ($1, $2, 'chargeback', 100, NULL, 'api')`, paid, f.brand.ProgramID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Exec(`UPDATE sales SET refunded_amount_cents = 200 WHERE id = $1`, paid); err != nil {
		t.Fatal(err)
	}
	type want struct {
		Sale         *int64
		Amount       *int64
		Refunded     *int64
		Commission   *int64
		CommAmount   *int64
		CommReversed *int64
		CommCurrency *string
		CommStatus   *string
		Seen         bool
		LatestReason *string
	}
	paidState := want{Sale: &paid, Amount: refundPtr(int64(5000)), Refunded: refundPtr(int64(200)), Commission: &c.ID,
		CommAmount: refundPtr(int64(1000)), CommReversed: refundPtr(int64(0)), CommCurrency: refundPtr("USD"),
		CommStatus: refundPtr("pending"), LatestReason: refundPtr("chargeback")}
	seenState := paidState
	seenState.Seen = true
	cases := []struct {
		name string
		in   sales.RefundStateInput
		want want
	}{
		{"a sale with a commission and refunds; no processor refund id", sales.RefundStateInput{ProgramID: f.brand.ProgramID,
			TransactionID: f.paidTxn}, paidState},
		{"its processor refund id seen", sales.RefundStateInput{ProgramID: f.brand.ProgramID, TransactionID: f.paidTxn,
			ProcessorRefundID: refundPtr("re_1")}, seenState},
		{"another processor refund id", sales.RefundStateInput{ProgramID: f.brand.ProgramID, TransactionID: f.paidTxn,
			ProcessorRefundID: refundPtr("re_2")}, paidState},
		{"a sale without a commission or refunds", sales.RefundStateInput{ProgramID: f.brand.ProgramID, TransactionID: f.freeTxn,
			ProcessorRefundID: refundPtr("re_2")}, want{Sale: &unpaid, Amount: refundPtr(int64(5000)), Refunded: refundPtr(int64(0))}},
		{"the refund id seen in the program, for another of its sales", sales.RefundStateInput{ProgramID: f.brand.ProgramID,
			TransactionID: f.freeTxn, ProcessorRefundID: refundPtr("re_1")},
			want{Sale: &unpaid, Amount: refundPtr(int64(5000)), Refunded: refundPtr(int64(0)), Seen: true}},
		{"an unknown transaction", sales.RefundStateInput{ProgramID: f.brand.ProgramID, TransactionID: "nosuch"}, want{}},
		{"another program: neither the sale nor the refund id", sales.RefundStateInput{ProgramID: f.other.ProgramID,
			TransactionID: f.paidTxn, ProcessorRefundID: refundPtr("re_1")}, want{}},
	}
	in := make([]sales.RefundStateInput, len(cases))
	for i, c := range cases {
		in[i] = c.in
	}
	rows := f.state(in...)
	for i, c := range cases {
		r := rows[i]
		got := want{Sale: r.SaleID, Amount: r.AmountCents, Refunded: r.RefundedCents, Commission: r.CommissionID,
			CommAmount: r.CommissionCents, CommReversed: r.CommissionReversed, CommCurrency: r.CommissionCurrency,
			CommStatus: r.CommissionStatus, Seen: r.RefundSeen, LatestReason: r.LatestReason}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		if r.SaleID != nil && (r.SaleVersion == nil || *r.SaleVersion != f.saleVersion(*r.SaleID)) {
			t.Errorf("%s: sale version %v, want its row's xmin", c.name, r.SaleVersion)
		}
	}
}

// sales_refund, called directly: a refund is written only at the sale's row version; with a
// commission it sets the commission's reversed total and status and answers the commission, without one
// (NULL) it touches no commission and answers none; it stores the refund (NULL for a reason or processor
// refund id not given) and the sale's refunded total and payment status.
func TestSalesRefundFunction(t *testing.T) {
	t.Parallel()
	f := newRefundFixture(t)
	paid, unpaid, program := f.paid.SaleID, f.unpaid.SaleID, f.brand.ProgramID
	c := f.paid.Commission
	paidVersion, unpaidVersion := f.saleVersion(paid), f.saleVersion(unpaid)

	// One call: part of the paid sale (commission in proportion), all of the unpaid one (a chargeback).
	w := f.write(
		sales.RefundWriteInput{SaleID: paid, Version: paidVersion, ProgramID: program, Reason: sales.ReasonRefund,
			AmountCents: 1250, ReversedNowCents: 250, CommissionID: &c.ID, CommissionVersion: refundPtr(f.commissionVersion(c.ID)),
			ReversedCents: refundPtr(int64(250)), CommissionStatus: refundPtr("pending"), ClawbackCents: refundPtr(int64(0)),
			TotalCents: 1250, PaymentStatus: "partially_refunded",
			ProcessorRefundID: refundPtr("re_1"), Source: sales.SourceWebhook},
		sales.RefundWriteInput{SaleID: unpaid, Version: unpaidVersion, ProgramID: program, Reason: sales.ReasonChargeback,
			RefundReason: refundPtr("fraudulent"), AmountCents: 5000, TotalCents: 5000, PaymentStatus: "charged_back",
			Source: sales.SourceAPI},
	)
	if diff := cmp.Diff([]sales.RefundWritten{
		{Ord: 1, Written: true, CommissionID: &c.ID, AmountCents: refundPtr(int64(1000)), ReversedAmountCents: refundPtr(int64(250)),
			Currency: refundPtr("USD"), Status: refundPtr("pending"), ClawbackCents: refundPtr(int64(0))},
		{Ord: 2, Written: true},
	}, w); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	wantRefunds := []refundRow{
		{Sale: paid, Program: program, Reason: sales.ReasonRefund, AmountCents: 1250, ReversedCents: 250,
			ProcessorRefundID: refundPtr("re_1"), Source: sales.SourceWebhook},
		{Sale: unpaid, Program: program, Reason: sales.ReasonChargeback, RefundReason: refundPtr("fraudulent"), AmountCents: 5000,
			Source: sales.SourceAPI},
	}
	if diff := cmp.Diff(wantRefunds, f.refunds()); diff != "" {
		t.Errorf("refunds stored (-want +got):\n%s", diff)
	}
	wantPaid := saleRow{Refunded: 1250, PaymentStatus: "partially_refunded", CommissionRev: refundPtr(int64(250)),
		CommissionStatus: refundPtr("pending")}
	wantUnpaid := saleRow{Refunded: 5000, PaymentStatus: "charged_back"}
	for id, want := range map[int64]saleRow{paid: wantPaid, unpaid: wantUnpaid} {
		if diff := cmp.Diff(want, f.sale(id)); diff != "" {
			t.Errorf("sale %d after its refund (-want +got):\n%s", id, diff)
		}
	}

	// The paid sale's version the first refund rested on is stale now: the rest of it writes nothing.
	if f.saleVersion(paid) == paidVersion {
		t.Fatal("the refund did not change the sale's row version")
	}
	stale := sales.RefundWriteInput{SaleID: paid, Version: paidVersion, ProgramID: program, Reason: sales.ReasonRefund,
		AmountCents: 3750, ReversedNowCents: 750, CommissionID: &c.ID, CommissionVersion: refundPtr(f.commissionVersion(c.ID)),
		ReversedCents: refundPtr(int64(1000)), CommissionStatus: refundPtr("reversed"), ClawbackCents: refundPtr(int64(0)),
		TotalCents: 5000, PaymentStatus: "refunded", Source: sales.SourceAPI}
	if diff := cmp.Diff([]sales.RefundWritten{{Ord: 1}}, f.write(stale)); diff != "" {
		t.Errorf("a refund at a stale version (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantRefunds, f.refunds()); diff != "" {
		t.Errorf("refunds after a stale write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPaid, f.sale(paid)); diff != "" {
		t.Errorf("sale after a stale write (-want +got):\n%s", diff)
	}

	// At the current version it is written: the commission reversed in full.
	current := stale
	current.Version = f.saleVersion(paid)
	if w := f.write(current); !w[0].Written || w[0].Status == nil || *w[0].Status != "reversed" || *w[0].ReversedAmountCents != 1000 {
		t.Errorf("the rest at the current version: %+v, want written, the commission reversed", w[0])
	}
	if diff := cmp.Diff(saleRow{Refunded: 5000, PaymentStatus: "refunded", CommissionRev: refundPtr(int64(1000)),
		CommissionStatus: refundPtr("reversed")}, f.sale(paid)); diff != "" {
		t.Errorf("sale refunded in full (-want +got):\n%s", diff)
	}
	if n := len(f.refunds()); n != 3 {
		t.Errorf("%d refunds stored, want 3", n)
	}
}

// A refund's "already seen" check looks its processor refund id up in the index, under the generic plan
// the function keeps: planned on an empty table, an EXISTS in the select list became a hashed subplan
// that read every refund's key on each call.
func TestRefundSeenCheckUsesTheIndex(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	plans := dbtest.NestedPlans(t, d, `SELECT * FROM refunds_state(p_program => $1, p_txn => $2, p_processor_refund_id => $3,
		p_now => now())`, pq.Array([]int64{1}), pq.Array([]string{"txn_1"}), pq.Array([]string{"re_1"}))
	seen := regexp.MustCompile(`Index (Only )?Scan using \S+ on refunds r\b[^\n]*\n\s+Index Cond: \(\(program_id = i\.program_id\) AND \(processor_refund_id = i\.refund_id\)\)`)
	for _, p := range plans {
		if strings.Contains(p, "FROM refunds r WHERE r.program_id") {
			if !seen.MatchString(p) || strings.Contains(p, "hashed") {
				t.Errorf("the seen check does not look the refund id up in the index:\n%s", p)
			}
			return
		}
	}
	t.Fatalf("no plan of refunds_state's statement among %d plans", len(plans))
}

// sales_refund writes each refund of one call on its own merits: a refund whose commission changed since
// it was decided writes nothing (not even its sale), while the other refund of the same call is written.
func TestSalesRefundFunctionWritesEachOnItsOwn(t *testing.T) {
	t.Parallel()
	f := newRefundFixture(t)
	paid, unpaid, program := f.paid.SaleID, f.unpaid.SaleID, f.brand.ProgramID
	c := f.paid.Commission
	before := f.sale(paid)
	w := f.write(
		sales.RefundWriteInput{SaleID: paid, Version: f.saleVersion(paid), ProgramID: program, Reason: sales.ReasonRefund,
			AmountCents: 1250, ReversedNowCents: 250, CommissionID: &c.ID, CommissionVersion: refundPtr("1"),
			ReversedCents: refundPtr(int64(250)), CommissionStatus: refundPtr("pending"), ClawbackCents: refundPtr(int64(0)),
			TotalCents: 1250, PaymentStatus: "partially_refunded", Source: sales.SourceAPI},
		sales.RefundWriteInput{SaleID: unpaid, Version: f.saleVersion(unpaid), ProgramID: program, Reason: sales.ReasonRefund,
			AmountCents: 2000, TotalCents: 2000, PaymentStatus: "partially_refunded", Source: sales.SourceAPI},
	)
	if diff := cmp.Diff([]sales.RefundWritten{{Ord: 1}, {Ord: 2, Written: true}}, w); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]refundRow{{Sale: unpaid, Program: program, Reason: sales.ReasonRefund, AmountCents: 2000, Source: sales.SourceAPI}},
		f.refunds()); diff != "" {
		t.Errorf("refunds stored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, f.sale(paid)); diff != "" {
		t.Errorf("the sale whose commission changed (-before +after):\n%s", diff)
	}
	if got := f.sale(unpaid); got.Refunded != 2000 || got.PaymentStatus != "partially_refunded" {
		t.Errorf("the other sale: %+v", got)
	}
}
