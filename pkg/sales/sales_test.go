package sales_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A recorded sale converts the customer (dated by the sale), its leads and its click, through their
// owners' statement fragments, and is counted in the program's event counts.
func TestRecordConvertsCustomerLeadsAndClick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := clicks.NewRecorder(d.DB, quiet(), 1, 8, nil)
	defer rec.Close()
	c, err := rec.Record(ctx, clicks.Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leads.Track(ctx, d.DB, quiet(), leads.Input{ProgramID: r.ProgramID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: "cust-1", Source: leads.SourceServer}); err != nil {
		t.Fatal(err)
	}
	paid := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	in := sales.Input{ProgramID: r.ProgramID, TransactionID: "order-1", AmountCents: 5000, Currency: "USD", CustomerKey: "cust-1",
		Source: sales.SourceAPI}

	// The caller's clock decides when a sale happened: no time, no sale.
	if _, err := sales.Record(ctx, d.DB, quiet(), time.Now, in); !errors.Is(err, sales.ErrOccurredAtRequired) {
		t.Fatalf("a sale without occurred_at: %v, want ErrOccurredAtRequired", err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM sales`); err != nil || n != 0 {
		t.Fatalf("%d sales recorded, %v", n, err)
	}

	in.OccurredAt = paid
	res, err := sales.Record(ctx, d.DB, quiet(), time.Now, in)
	if err != nil || res.Commission == nil || res.Commission.AmountCents != 1000 {
		t.Fatalf("sale: %+v, %v", res, err)
	}
	var got struct {
		Status      string    `db:"status"`
		ConvertedAt time.Time `db:"converted_at"`
		SaleDate    time.Time `db:"sale_date"`
		Leads       int       `db:"leads"`
		Click       bool      `db:"click"`
		Count       int       `db:"counted"`
	}
	if err := d.Get(&got, `SELECT cu.status, cu.converted_at, s.sale_date,
		(SELECT count(*) FROM leads WHERE customer_id = cu.id AND converted) AS leads,
		(SELECT converted FROM clicks WHERE id = cu.click_ref) AS click,
		(SELECT sum(sales) FROM performance_live WHERE program_id = s.program_id) AS counted
		FROM customers cu JOIN sales s ON s.customer_id = cu.id WHERE s.id = $1`, res.SaleID); err != nil {
		t.Fatal(err)
	}
	if got.Status != "converted" || !got.ConvertedAt.Equal(paid) || !got.SaleDate.Equal(paid) || got.Leads != 1 || !got.Click || got.Count != 1 {
		t.Errorf("after the sale: %+v, want converted at %v, its lead and click converted, counted once", got, paid)
	}
}
