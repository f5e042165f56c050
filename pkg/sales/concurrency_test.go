package sales_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// customers makes n customers of the program (a click and a server-mode lead each), keyed c0 … c<n-1>.
func customers(t *testing.T, db *sqlx.DB, r seed.Result, n int) {
	t.Helper()
	ctx := context.Background()
	rec := clicks.NewRecorder(db, quiet(), 1, 8, nil)
	defer rec.Close()
	for i := range n {
		c, err := rec.Record(ctx, clicks.Input{AffiliateURL: r.AffiliateURL, IP: fmt.Sprintf("10.0.0.%d", i+1), UserAgent: "ua"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leads.Track(ctx, db, quiet(), leads.Input{ProgramID: r.ProgramID, ServerMode: true, ClickID: c.ClickID,
			CustomerKey: fmt.Sprintf("c%d", i), Source: leads.SourceServer}); err != nil {
			t.Fatal(err)
		}
	}
}

// Sales racing each other, through the batching Recorder and the one-at-a-time Record at once (the sale
// route and the payment webhook), keep every guarantee: each acknowledged sale is stored with exactly the
// commission it answered; no sale is stored that was not acknowledged; a first-sale-only commission is
// paid once per customer whatever the order; one transaction_id sent by many at once is recorded once,
// the others told which sale has it; and the event counts match the rows, before and after the roll-up.
func TestConcurrentSalesKeepEveryGuarantee(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	r, err := seed.Run(ctx, d.DB, seed.Options{CommissionType: "percent", CommissionRate: "20"})
	if err != nil {
		t.Fatal(err)
	}
	const nCustomers, perCustomer, nDup = 5, 24, 16
	customers(t, d.DB, r, nCustomers)
	rec := sales.NewRecorder(d.DB, quiet(), time.Now, sales.MaxBatch, nil)
	defer rec.Close()
	at := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

	type outcome struct {
		in  sales.Input
		res sales.Result
		err error
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	send := func(i int, in sales.Input) {
		defer wg.Done()
		<-start
		var (
			res sales.Result
			err error
		)
		if i%2 == 0 {
			res, err = rec.Record(ctx, in)
		} else {
			res, err = sales.Record(ctx, d.DB, quiet(), time.Now, in)
		}
		mu.Lock()
		outcomes = append(outcomes, outcome{in, res, err})
		mu.Unlock()
	}
	for c := range nCustomers {
		for k := range perCustomer {
			wg.Add(1)
			go send(k, sales.Input{ProgramID: r.ProgramID, TransactionID: fmt.Sprintf("t-%d-%d", c, k), AmountCents: 1000,
				Currency: "USD", CustomerKey: fmt.Sprintf("c%d", c), OccurredAt: at, Source: sales.SourceAPI})
		}
	}
	for k := range nDup {
		wg.Add(1)
		go send(k, sales.Input{ProgramID: r.ProgramID, TransactionID: "same", AmountCents: 1000, Currency: "USD",
			CustomerKey: fmt.Sprintf("c%d", k%nCustomers), OccurredAt: at, Source: sales.SourceAPI})
	}
	close(start)
	wg.Wait()

	type stored struct {
		ID         int64  `db:"id"`
		Txn        string `db:"processor_event_id"`
		Customer   string `db:"customer_key"`
		Commission *int64 `db:"commission_id"`
		Amount     *int64 `db:"amount_cents"`
	}
	var rows []stored
	if err := d.Select(&rows, `SELECT s.id, s.processor_event_id, cu.customer_key, c.id AS commission_id, c.amount_cents
		FROM sales s JOIN customers cu ON cu.id = s.customer_id LEFT JOIN commissions c ON c.sale_id = s.id`); err != nil {
		t.Fatal(err)
	}
	byID := map[int64]stored{}
	paid := map[string]int{}
	for _, s := range rows {
		byID[s.ID] = s
		if s.Commission != nil {
			paid[s.Customer]++
		}
	}

	acked, dupWinners := 0, 0
	var dupSale int64
	for _, o := range outcomes {
		var dup *sales.DuplicateError
		switch {
		case o.err == nil:
			acked++
			s, ok := byID[o.res.SaleID]
			switch {
			case !ok || s.Txn != o.in.TransactionID:
				t.Errorf("%s acknowledged as sale %d, which is not stored with it", o.in.TransactionID, o.res.SaleID)
			case (o.res.Commission == nil) != (s.Commission == nil):
				t.Errorf("%s answered commission %+v, stored %v", o.in.TransactionID, o.res.Commission, s.Commission)
			case o.res.Commission != nil && (*s.Commission != o.res.Commission.ID || *s.Amount != o.res.Commission.AmountCents || *s.Amount != 200):
				t.Errorf("%s answered commission %+v, stored %d of %d", o.in.TransactionID, o.res.Commission, *s.Commission, *s.Amount)
			}
			if o.in.TransactionID == "same" {
				dupWinners++
				dupSale = o.res.SaleID
			}
		case errors.As(o.err, &dup) && o.in.TransactionID == "same":
		default:
			t.Errorf("%s: %v", o.in.TransactionID, o.err)
		}
	}
	if acked != len(rows) {
		t.Errorf("%d sales acknowledged, %d stored", acked, len(rows))
	}
	if want := nCustomers*perCustomer + 1; acked != want {
		t.Errorf("%d sales acknowledged, want %d", acked, want)
	}
	if dupWinners != 1 {
		t.Errorf("transaction_id sent %d times at once recorded %d times, want once", nDup, dupWinners)
	}
	for _, o := range outcomes {
		var dup *sales.DuplicateError
		if errors.As(o.err, &dup) && dup.SaleID != dupSale {
			t.Errorf("a repeat was told sale %d, the transaction is sale %d", dup.SaleID, dupSale)
		}
	}
	for c := range nCustomers {
		if key := fmt.Sprintf("c%d", c); paid[key] != 1 {
			t.Errorf("customer %s was paid %d first-sale commissions, want exactly 1", key, paid[key])
		}
	}
	var unconverted int
	if err := d.Get(&unconverted, `SELECT count(*) FROM customers WHERE status <> 'converted' OR converted_at IS NULL`); err != nil || unconverted != 0 {
		t.Errorf("%d customers not converted, %v", unconverted, err)
	}

	// The counts the dashboard and the events list read.
	counted := func(table string) int {
		var n int
		if err := d.Get(&n, `SELECT COALESCE(sum(sales), 0) FROM `+table+` WHERE program_id = $1`, r.ProgramID); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := counted("performance_hourly_live"); n != len(rows) {
		t.Errorf("%d conversions counted before the roll-up, %d stored", n, len(rows))
	}
	if _, err := events.RollUp(ctx, d.DB); err != nil {
		t.Fatal(err)
	}
	if n, live := counted("performance_hourly"), counted("performance_hourly_live"); n != len(rows) || live != len(rows) {
		t.Errorf("after the roll-up %d conversions in the table and %d live, %d stored", n, live, len(rows))
	}
}
