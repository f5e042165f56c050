package sales_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/platform/dbfault"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// The sale's calls take exactly the inputs their functions declare.
func TestSaleCallsMatchTheirFunctions(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	for _, err := range []error{
		pgcall.Check(ctx, d.DB, sales.StateCall),
		pgcall.Check(ctx, d.DB, sales.RecordCall),
	} {
		if err != nil {
			t.Error(err)
		}
	}
}

// saleWorld is a brand's program and another's, for calling the sale's functions directly.
type saleWorld struct {
	t              *testing.T
	d              *dbtest.Database
	brand, other   seed.Result
	partnerProgram int64 // the brand's partner's relationship with its program
	rec            *clicks.Recorder
	visitors       int
}

func newSaleWorld(t *testing.T) *saleWorld {
	t.Helper()
	ctx := context.Background()
	w := &saleWorld{t: t, d: dbtest.New(t)}
	var err error
	if w.brand, err = seed.Run(ctx, w.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if w.other, err = seed.Run(ctx, w.d.DB, seed.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := w.d.Get(&w.partnerProgram, `SELECT id FROM partner_programs WHERE partner_id = $1 AND program_id = $2`,
		w.brand.PartnerID, w.brand.ProgramID); err != nil {
		t.Fatal(err)
	}
	w.rec = clicks.NewRecorder(w.d.DB, quiet(), 1, 8, nil)
	t.Cleanup(w.rec.Close)
	return w
}

// click records a new click on the program's link.
func (w *saleWorld) click(r seed.Result) clicks.Result {
	w.t.Helper()
	w.visitors++
	c, err := w.rec.Record(context.Background(), clicks.Input{AffiliateURL: r.AffiliateURL,
		IP: fmt.Sprintf("10.1.%d.%d", w.visitors/250, w.visitors%250+1), UserAgent: "ua"})
	if err != nil || !c.Created {
		w.t.Fatalf("click: %+v, %v", c, err)
	}
	return c
}

// customer makes a customer of the brand's program from click c at status lead, with a settled lead,
// keyed key (none when nil); it returns its id.
func (w *saleWorld) customer(key *string, c clicks.Result) int64 {
	w.t.Helper()
	var id int64
	if err := w.d.Get(&id, `INSERT INTO customers (program_id, customer_key, click_ref, partner_id, partner_program_id, status, signed_up_at)
		VALUES ($1, $2, $3, $4, $5, 'lead', now() - interval '1 day') RETURNING id`,
		w.brand.ProgramID, key, c.ID, w.brand.PartnerID, w.partnerProgram); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.d.Exec(`INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, status, source, settled_at)
		VALUES ($1, $2, $3, $4, $5, 'settled', 'server', now())`, w.brand.ProgramID, id, c.ID, c.ClickID, key); err != nil {
		w.t.Fatal(err)
	}
	return id
}

// version is the customer's row version, as sales_state reads it.
func (w *saleWorld) version(customer int64) string {
	w.t.Helper()
	var v string
	if err := w.d.Get(&v, `SELECT xmin::text FROM customers WHERE id = $1`, customer); err != nil {
		w.t.Fatal(err)
	}
	return v
}

// record calls sales_record and answers its rows by ord.
func (w *saleWorld) record(in ...sales.RecordInput) map[int64]sales.Written {
	w.t.Helper()
	rows, err := w.tryRecord(in...)
	if err != nil {
		w.t.Fatal(err)
	}
	return rows
}

func (w *saleWorld) tryRecord(in ...sales.RecordInput) (map[int64]sales.Written, error) {
	var rows []sales.Written
	if err := sales.RecordCall.Select(context.Background(), w.d.DB, &rows, in, sales.RecordFixed{Now: time.Now()}); err != nil {
		return nil, err
	}
	out := map[int64]sales.Written{}
	for _, r := range rows {
		out[r.Ord] = r
	}
	return out, nil
}

// sale is a paying sale of the brand's existing customer at its current version.
func (w *saleWorld) sale(customer int64, txn string, at time.Time) sales.RecordInput {
	return sales.RecordInput{Program: w.brand.ProgramID, Customer: &customer, Version: new(w.version(customer)),
		Partner: w.brand.PartnerID, PartnerProgram: w.partnerProgram, Txn: txn, Amount: 5000, Currency: "USD",
		SaleType: "payment", Source: sales.SourceAPI, SaleDate: at, CommissionCents: new(int64(1000)),
		CommissionStatus: new("pending"), AvailableOn: new(at.AddDate(0, 0, 30))}
}

// sales_state, called directly: a used transaction_id (per program), the program, the customer by
// customer_key, else (no key) the first made from the click, and the click behind click_id.
func TestStateFunction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSaleWorld(t)
	known, byClick, otherClick := w.click(w.brand), w.click(w.brand), w.click(w.other)
	keyed := w.customer(new("known"), known)
	first := w.customer(nil, byClick)
	w.customer(nil, byClick) // a second one, made later from the same click
	if _, err := w.d.Exec(`INSERT INTO customers (program_id, customer_key, status) VALUES ($1, 'elsewhere', 'lead')`, w.other.ProgramID); err != nil {
		t.Fatal(err)
	}
	paid := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	used := w.record(w.sale(keyed, "used", paid))[1]

	type want struct {
		duplicate    *int64
		programFound bool
		customer     *int64
		click        *int64 // the click behind click_id
		clickProgram *int64
	}
	cases := []struct {
		name string
		in   sales.StateInput
		want want
	}{
		{"a used transaction_id", sales.StateInput{Program: w.brand.ProgramID, Txn: "used", CustomerKey: new("known")},
			want{duplicate: &used.SaleID, programFound: true, customer: &keyed}},
		{"the same transaction_id in another program", sales.StateInput{Program: w.other.ProgramID, Txn: "used"},
			want{programFound: true}},
		{"no such program", sales.StateInput{Program: -1, Txn: "t", CustomerKey: new("known"), ClickID: &known.ClickID},
			want{click: &known.ID, clickProgram: &w.brand.ProgramID}},
		{"the customer by key", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", CustomerKey: new("known")},
			want{programFound: true, customer: &keyed}},
		{"the key before the click", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", CustomerKey: new("known"), ClickID: &byClick.ClickID},
			want{programFound: true, customer: &keyed, click: &byClick.ID, clickProgram: &w.brand.ProgramID}},
		{"an unknown key with a click: no customer, the click to make one from",
			sales.StateInput{Program: w.brand.ProgramID, Txn: "t", CustomerKey: new("new"), ClickID: &byClick.ClickID},
			want{programFound: true, click: &byClick.ID, clickProgram: &w.brand.ProgramID}},
		{"no key: the first customer made from the click", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", ClickID: &byClick.ClickID},
			want{programFound: true, customer: &first, click: &byClick.ID, clickProgram: &w.brand.ProgramID}},
		{"an empty key is a key, not none", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", CustomerKey: new(""), ClickID: &byClick.ClickID},
			want{programFound: true, click: &byClick.ID, clickProgram: &w.brand.ProgramID}},
		{"another program's key", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", CustomerKey: new("elsewhere")},
			want{programFound: true}},
		{"another program's click", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", ClickID: &otherClick.ClickID},
			want{programFound: true, click: &otherClick.ID, clickProgram: &w.other.ProgramID}},
		{"an unknown click", sales.StateInput{Program: w.brand.ProgramID, Txn: "t", ClickID: new("nosuch")},
			want{programFound: true}},
		{"neither key nor click", sales.StateInput{Program: w.brand.ProgramID, Txn: "t"},
			want{programFound: true}},
	}
	var in []sales.StateInput
	for _, c := range cases {
		in = append(in, c.in)
	}
	var rows []sales.State
	if err := sales.StateCall.Select(ctx, w.d.DB, &rows, in, pgcall.None{}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(cases) {
		t.Fatalf("%d rows for %d sales", len(rows), len(cases))
	}
	eq := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for i, c := range cases {
		r := rows[i]
		if r.Ord != int64(i+1) {
			t.Fatalf("row %d has ord %d", i, r.Ord)
		}
		if !eq(r.DuplicateID, c.want.duplicate) || r.ProgramFound != c.want.programFound || !eq(r.CustomerID, c.want.customer) ||
			!eq(r.ClickRef, c.want.click) || !eq(r.ClickProgramID, c.want.clickProgram) {
			t.Errorf("%s: duplicate %v, program found %v, customer %v, click %v of program %v; want %+v", c.name,
				valueOf(r.DuplicateID), r.ProgramFound, valueOf(r.CustomerID), valueOf(r.ClickRef), valueOf(r.ClickProgramID), c.want)
		}
	}

	// What is read of a customer: its version, click, partner, status and first sale; of a click, its
	// partner's relationship with the sale's program.
	byKey, noKey, foreign := rows[3], rows[6], rows[9]
	if byKey.CustomerVersion == nil || *byKey.CustomerVersion != w.version(keyed) || valueOf(byKey.CustomerKey) != "known" ||
		valueOf(byKey.CustomerClickRef) != known.ID || valueOf(byKey.CustomerClickID) != known.ClickID || byKey.CustomerClickTimestamp == nil ||
		valueOf(byKey.PartnerID) != w.brand.PartnerID || valueOf(byKey.PartnerProgramID) != w.partnerProgram ||
		valueOf(byKey.Status) != "converted" || byKey.FirstSale == nil || !byKey.FirstSale.Equal(paid) || valueOf(byKey.CustomerTest) {
		t.Errorf("the customer by key: %+v", byKey)
	}
	if noKey.CustomerKey != nil || valueOf(noKey.Status) != "lead" || noKey.FirstSale != nil || valueOf(noKey.ClickPartnerProgramID) != w.partnerProgram ||
		valueOf(noKey.ClickPartnerID) != w.brand.PartnerID || noKey.ClickTimestamp == nil || valueOf(noKey.ClickTest) {
		t.Errorf("the customer by click: %+v", noKey)
	}
	if foreign.ClickPartnerProgramID != nil || valueOf(foreign.ClickPartnerID) != w.other.PartnerID {
		t.Errorf("another program's click: partner %v, relationship %v; want its partner, no relationship with this program",
			valueOf(foreign.ClickPartnerID), valueOf(foreign.ClickPartnerProgramID))
	}
	if r := rows[1]; valueOf(r.CommissionType) != "percent" || valueOf(r.CommissionRate) != "20.0000" || valueOf(r.WindowDays) == 0 {
		t.Errorf("the program's terms: %v %v %v", valueOf(r.CommissionType), valueOf(r.CommissionRate), valueOf(r.WindowDays))
	}
}

// sales_record, called directly: which sales it writes (an unchanged or new customer, a free
// transaction_id) and what the rows store (NULL for what was not sent, the commission when given, the
// customer made from its click, the conversions).
func TestRecordFunction(t *testing.T) {
	t.Parallel()
	w := newSaleWorld(t)
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	xClick, staleClick, takenClick, ownerClick, yClick, zClick, boundClick := w.click(w.brand), w.click(w.brand),
		w.click(w.brand), w.click(w.brand), w.click(w.brand), w.click(w.brand), w.click(w.brand)
	existing, stale, taken := w.customer(new("existing"), xClick), w.customer(new("stale"), staleClick), w.customer(new("taken"), takenClick)
	w.record(w.sale(w.customer(new("owner"), ownerClick), "taken", at.Add(-time.Minute))) // another customer's sale

	// A paying sale of an unchanged customer, every text sent, live.
	paying := w.sale(existing, "t-paying", at)
	paying.ClickRef, paying.ClickID = &xClick.ID, &xClick.ClickID
	paying.Provider, paying.PaymentID, paying.Livemode = new("stripe"), new("pi_1"), new(true)
	paying.EventName, paying.Subscription, paying.Interval, paying.SaleType, paying.Recurring =
		new("renewal"), new("sub_1"), new("month"), "subscription", true
	// A customer changed since it was read.
	changed := w.sale(stale, "t-changed", at)
	changed.Version = new("1")
	// A transaction_id taken meanwhile.
	conflict := w.sale(taken, "taken", at)
	// A customer made from its click, bound to a key, paying nothing, in test mode.
	made := sales.RecordInput{Program: w.brand.ProgramID, CustomerKey: new("fresh"), ClickRef: &yClick.ID, ClickID: &yClick.ClickID,
		Partner: w.brand.PartnerID, PartnerProgram: w.partnerProgram, CustomerTest: true, Txn: "t-made", Amount: 700,
		Currency: "EUR", SaleType: "payment", Livemode: new(false), Source: sales.SourceWebhook, SaleDate: at, Test: true}
	// A customer made from its click without a key, nothing optional sent.
	unkeyed := made
	unkeyed.CustomerKey, unkeyed.ClickRef, unkeyed.ClickID, unkeyed.Txn, unkeyed.Livemode = nil, &zClick.ID, &zClick.ClickID, "t-unkeyed", nil
	unkeyed.CustomerTest, unkeyed.Test, unkeyed.Source = false, false, sales.SourceAPI
	// A customer to make whose key was bound meanwhile.
	bound := made
	bound.CustomerKey, bound.ClickRef, bound.ClickID, bound.Txn = new("existing"), &boundClick.ID, &boundClick.ClickID, "t-bound"

	rows := w.record(paying, changed, conflict, made, unkeyed, bound)
	if got := slices.Sorted(maps.Keys(rows)); !slices.Equal(got, []int64{1, 4, 5}) {
		t.Fatalf("written ords %v, want [1 4 5] (a changed customer, a taken transaction_id, a key bound meanwhile are not)", got)
	}
	if c := rows[1]; c.CommissionID == nil || valueOf(c.AmountCents) != 1000 || valueOf(c.ReversedAmountCents) != 0 ||
		valueOf(c.Currency) != "USD" || valueOf(c.Status) != "pending" {
		t.Errorf("the paying sale's commission: %+v", c)
	}
	for _, ord := range []int64{4, 5} {
		if c := rows[ord]; c.CommissionID != nil || c.AmountCents != nil || c.Status != nil {
			t.Errorf("ord %d paid a commission: %+v", ord, c)
		}
	}
	var commissions []struct {
		Sale           int64  `db:"sale_id"`
		Program        int64  `db:"program_id"`
		Partner        int64  `db:"partner_id"`
		PartnerProgram int64  `db:"partner_program_id"`
		Amount         int64  `db:"amount_cents"`
		Currency       string `db:"currency"`
		Test           bool   `db:"is_test"`
	}
	if err := w.d.Select(&commissions, `SELECT sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test
		FROM commissions WHERE sale_id = ANY ($1)`, pq.Array([]int64{rows[1].SaleID, rows[4].SaleID, rows[5].SaleID})); err != nil {
		t.Fatal(err)
	}
	if len(commissions) != 1 || commissions[0].Sale != rows[1].SaleID || commissions[0].Program != w.brand.ProgramID ||
		commissions[0].Partner != w.brand.PartnerID || commissions[0].PartnerProgram != w.partnerProgram ||
		commissions[0].Amount != 1000 || commissions[0].Currency != "USD" || commissions[0].Test {
		t.Errorf("commissions stored: %+v, want the paying sale's only", commissions)
	}

	// What each sale stored.
	type stored struct {
		Txn          string     `db:"processor_event_id"`
		Customer     int64      `db:"customer_id"`
		Partner      int64      `db:"partner_id"`
		ClickRef     *int64     `db:"click_ref"`
		ClickID      *string    `db:"click_id"`
		Amount       int64      `db:"amount_cents"`
		Currency     string     `db:"currency"`
		SaleType     string     `db:"sale_type"`
		Recurring    bool       `db:"is_recurring"`
		Provider     *string    `db:"provider"`
		PaymentID    *string    `db:"provider_payment_id"`
		Livemode     *bool      `db:"livemode"`
		EventName    *string    `db:"event_name"`
		Subscription *string    `db:"subscription_id"`
		Interval     *string    `db:"subscription_interval"`
		Source       string     `db:"source"`
		SaleDate     time.Time  `db:"sale_date"`
		Test         bool       `db:"is_test"`
		Key          *string    `db:"customer_key"`
		Status       string     `db:"status"`
		ConvertedAt  *time.Time `db:"converted_at"`
		CustTest     bool       `db:"customer_test"`
		CustClick    *int64     `db:"customer_click"`
		CustPartner  *int64     `db:"customer_partner"`
		CustPP       *int64     `db:"customer_partner_program"`
		ClickConv    bool       `db:"click_converted"`
	}
	var got []stored
	if err := w.d.Select(&got, `SELECT s.processor_event_id, s.customer_id, s.partner_id, s.click_ref, s.click_id, s.amount_cents,
		s.currency, s.sale_type, s.is_recurring, s.provider, s.provider_payment_id, s.livemode, s.event_name, s.subscription_id,
		s.subscription_interval, s.source, s.sale_date, s.is_test, cu.customer_key, cu.status, cu.converted_at,
		cu.is_test AS customer_test, cu.click_ref AS customer_click, cu.partner_id AS customer_partner,
		cu.partner_program_id AS customer_partner_program, (SELECT k.converted FROM clicks k WHERE k.id = s.click_ref) AS click_converted
		FROM sales s JOIN customers cu ON cu.id = s.customer_id WHERE s.id = ANY ($1) ORDER BY s.id`,
		pq.Array([]int64{rows[1].SaleID, rows[4].SaleID, rows[5].SaleID})); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d sales stored, want 3", len(got))
	}
	p, m, u := got[0], got[1], got[2]
	if p.Txn != "t-paying" || p.Customer != existing || p.Partner != w.brand.PartnerID || valueOf(p.ClickRef) != xClick.ID ||
		valueOf(p.ClickID) != xClick.ClickID || p.Amount != 5000 || p.Currency != "USD" || p.SaleType != "subscription" || !p.Recurring ||
		valueOf(p.Provider) != "stripe" || valueOf(p.PaymentID) != "pi_1" || p.Livemode == nil || !*p.Livemode ||
		valueOf(p.EventName) != "renewal" || valueOf(p.Subscription) != "sub_1" || valueOf(p.Interval) != "month" ||
		p.Source != "api" || !p.SaleDate.Equal(at) || p.Test || p.Status != "converted" || p.ConvertedAt == nil ||
		!p.ConvertedAt.Equal(at) || !p.ClickConv {
		t.Errorf("the paying sale stored %+v", p)
	}
	if m.Txn != "t-made" || valueOf(m.Key) != "fresh" || m.Status != "converted" || m.ConvertedAt == nil || !m.ConvertedAt.Equal(at) ||
		!m.CustTest || valueOf(m.CustClick) != yClick.ID || valueOf(m.CustPartner) != w.brand.PartnerID ||
		valueOf(m.CustPP) != w.partnerProgram || valueOf(m.ClickRef) != yClick.ID || m.Livemode == nil || *m.Livemode ||
		m.Provider != nil || m.Source != "webhook" || !m.Test || m.Currency != "EUR" || !m.ClickConv {
		t.Errorf("the sale of a customer made from its click stored %+v", m)
	}
	if u.Txn != "t-unkeyed" || u.Key != nil || u.Customer == m.Customer || valueOf(u.CustClick) != zClick.ID || u.Livemode != nil ||
		u.Provider != nil || u.PaymentID != nil || u.EventName != nil || u.Subscription != nil || u.Interval != nil ||
		u.CustTest || u.Test || u.Status != "converted" {
		t.Errorf("the sale without key or optional values stored %+v", u)
	}

	// The existing customer's lead converted; the changed and the conflicting customers untouched.
	var leadConverted bool
	if err := w.d.Get(&leadConverted, `SELECT converted FROM leads WHERE customer_id = $1`, existing); err != nil || !leadConverted {
		t.Errorf("the buyer's lead converted = %v, %v", leadConverted, err)
	}
	for _, c := range []struct {
		id   int64
		name string
	}{{stale, "changed"}, {taken, "conflicting"}} {
		var st struct {
			Status string `db:"status"`
			Lead   bool   `db:"converted"`
			Sales  int    `db:"sales"`
		}
		if err := w.d.Get(&st, `SELECT cu.status, l.converted, (SELECT count(*) FROM sales s WHERE s.customer_id = cu.id) AS sales
			FROM customers cu JOIN leads l ON l.customer_id = cu.id WHERE cu.id = $1`, c.id); err != nil {
			t.Fatal(err)
		}
		if st.Status != "lead" || st.Lead || st.Sales != 0 {
			t.Errorf("the %s customer: %+v, want still a lead, without sales", c.name, st)
		}
	}
	var boundMade int
	if err := w.d.Get(&boundMade, `SELECT count(*) FROM customers WHERE click_ref = $1`, boundClick.ID); err != nil || boundMade != 0 {
		t.Errorf("customers made from the click whose key was bound: %d, %v", boundMade, err)
	}
}

// A failure while writing a commission names the table commissions in sales_record's error, with its
// own code, message and constraint, whatever raised it; a failure elsewhere does not. Nothing is stored.
func TestRecordFunctionNamesCommissionFailures(t *testing.T) {
	t.Parallel()
	w := newSaleWorld(t)
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	customer := w.customer(new("c"), w.click(w.brand))
	exec := func(q string) {
		t.Helper()
		if _, err := w.d.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`)
	exec(`CREATE TRIGGER fail_write BEFORE INSERT ON commissions FOR EACH ROW EXECUTE FUNCTION fail_write()`)
	exec(`CREATE TRIGGER fail_write BEFORE INSERT ON sales FOR EACH ROW EXECUTE FUNCTION fail_write()`)
	free := w.sale(customer, "free", at)
	free.CommissionCents = nil
	for _, tc := range []struct {
		name string
		fail string // the trigger's body
		in   sales.RecordInput
		// want: the error's code, table and constraint; no error when code is "".
		code, table, constraint string
	}{
		{"a trigger on commissions raises", `IF TG_TABLE_NAME = 'commissions' THEN RAISE EXCEPTION 'commission store down'; END IF`,
			w.sale(customer, "t1", at), "P0001", "commissions", ""},
		{"a check constraint of commissions", `IF TG_TABLE_NAME = 'commissions' THEN NEW.amount_cents := -1; END IF`,
			w.sale(customer, "t2", at), "23514", "commissions", "commissions_amount_cents_check"},
		{"a trigger on sales raises", `IF TG_TABLE_NAME = 'sales' THEN RAISE EXCEPTION 'sales store down'; END IF`,
			w.sale(customer, "t3", at), "P0001", "", ""},
		{"a check constraint of sales", `IF TG_TABLE_NAME = 'sales' THEN NEW.amount_cents := -1; END IF`,
			w.sale(customer, "t4", at), "23514", "sales", "sales_amount_cents_check"},
		// Last: it is written, and changes the customer.
		{"the commission store down, for a sale that pays nothing",
			`IF TG_TABLE_NAME = 'commissions' THEN RAISE EXCEPTION 'commission store down'; END IF`, free, "", "", ""},
	} {
		exec(`CREATE OR REPLACE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` + tc.fail + `; RETURN NEW; END $$`)
		_, err := w.tryRecord(tc.in)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var pe *pq.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %v, want a database error", tc.name, err)
		}
		if string(pe.Code) != tc.code || pe.Table != tc.table || pe.Constraint != tc.constraint {
			t.Errorf("%s: code %s, table %q, constraint %q (%v); want %s, %q, %q", tc.name, pe.Code, pe.Table, pe.Constraint, err,
				tc.code, tc.table, tc.constraint)
		}
		var n int
		if err := w.d.Get(&n, `SELECT count(*) FROM sales WHERE processor_event_id = $1`, tc.in.Txn); err != nil || n != 0 {
			t.Errorf("%s: %d sales stored, %v", tc.name, n, err)
		}
	}
}

// sales.Record answers a CommissionError when the commission could not be stored, from the first
// failure (nothing is run again); a failure of the sale itself, or an unavailable database met while
// writing the commission, is answered as what it is. Nothing is stored.
func TestRecordAnswersCommissionFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newSaleWorld(t)
	w.customer(new("c"), w.click(w.brand))
	for _, q := range []string{
		`CREATE SEQUENCE write_attempts`,
		`CREATE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`,
		`CREATE TRIGGER fail_write BEFORE INSERT ON commissions FOR EACH ROW EXECUTE FUNCTION fail_write()`,
		`CREATE TRIGGER fail_write BEFORE INSERT ON sales FOR EACH ROW EXECUTE FUNCTION fail_write()`,
	} {
		if _, err := w.d.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i, tc := range []struct {
		name        string
		fail        string
		commission  bool
		unavailable bool
	}{
		{"the commission store fails", `IF TG_TABLE_NAME = 'commissions' THEN RAISE EXCEPTION 'commission store down'; END IF`, true, false},
		{"a commission breaks a constraint", `IF TG_TABLE_NAME = 'commissions' THEN NEW.partner_program_id := -1; END IF`, true, false},
		{"the sale store fails", `IF TG_TABLE_NAME = 'sales' THEN RAISE EXCEPTION 'sales store down'; END IF`, false, false},
		{"a lock timeout while writing the commission",
			`IF TG_TABLE_NAME = 'commissions' THEN RAISE EXCEPTION 'lock timeout' USING ERRCODE = 'lock_not_available'; END IF`, false, true},
	} {
		if _, err := w.d.Exec(`CREATE OR REPLACE FUNCTION fail_write() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN PERFORM nextval('write_attempts'); ` + tc.fail + `; RETURN NEW; END $$`); err != nil {
			t.Fatal(err)
		}
		before := w.attempts()
		txn := fmt.Sprint("order-", i)
		_, err := sales.Record(ctx, w.d.DB, quiet(), time.Now, sales.Input{ProgramID: w.brand.ProgramID, TransactionID: txn, AmountCents: 5000,
			Currency: "USD", CustomerKey: "c", OccurredAt: time.Now(), Source: sales.SourceAPI})
		var ce *sales.CommissionError
		if err == nil || errors.As(err, &ce) != tc.commission || dbfault.Unavailable(err) != tc.unavailable {
			t.Errorf("%s: %v (%T); want a CommissionError: %v, unavailable: %v", tc.name, err, err, tc.commission, tc.unavailable)
		}
		// One write: the sale's row and, when it got that far, its commission's; nothing run again.
		if n := w.attempts() - before; n > 2 {
			t.Errorf("%s: %d rows attempted, want the one write's", tc.name, n)
		}
		var n int
		if err := w.d.Get(&n, `SELECT count(*) FROM sales WHERE processor_event_id = $1`, txn); err != nil || n != 0 {
			t.Errorf("%s: %d sales stored, %v", tc.name, n, err)
		}
	}
}

// attempts is how many rows the failing triggers saw.
func (w *saleWorld) attempts() int64 {
	w.t.Helper()
	var n int64
	if err := w.d.Get(&n, `SELECT last_value - CASE WHEN is_called THEN 0 ELSE 1 END FROM write_attempts`); err != nil {
		w.t.Fatal(err)
	}
	return n
}

// valueOf is *p, or the zero value when p is nil.
func valueOf[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
