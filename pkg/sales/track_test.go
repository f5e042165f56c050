package sales_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Track: a test sale without a transaction id gets a generated one, drawn again while the one drawn is
// taken (at most four draws); an id the caller sent is never replaced.
func TestTrackGeneratesTestTransactionIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	r, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	crec := clicks.NewRecorder(d.DB, quiet(), 1, 8, nil)
	defer crec.Close()
	c, err := crec.Record(ctx, clicks.Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leads.Track(ctx, d.DB, quiet(), leads.Input{ProgramID: r.ProgramID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: "cust-1", Source: leads.SourceServer}); err != nil {
		t.Fatal(err)
	}
	rec := sales.NewRecorder(d.DB, quiet(), time.Now, 8, nil)
	defer rec.Close()

	t0 := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	// clock answers t0, t0+1ns, … one step per call, and counts the calls.
	clock := func() (func() time.Time, *atomic.Int64) {
		var calls atomic.Int64
		return func() time.Time { return t0.Add(time.Duration(calls.Add(1) - 1)) }, &calls
	}
	in := sales.Input{ProgramID: r.ProgramID, AmountCents: 5000, Currency: "USD", CustomerKey: "cust-1", Test: true,
		OccurredAt: time.Now(), Source: sales.SourceAPI}

	// Taken: the ids of t0 and t0+1ns.
	for i := range 2 {
		taken := in
		taken.TransactionID = sales.TestTransactionID(t0.Add(time.Duration(i)))
		if _, err := rec.Record(ctx, taken); err != nil {
			t.Fatal(err)
		}
	}
	now, calls := clock()
	got, err := rec.Track(ctx, in, now)
	if want := sales.TestTransactionID(t0.Add(2)); err != nil || got.TransactionID != want || got.SaleID == 0 || calls.Load() != 3 {
		t.Fatalf("Track past two taken ids: %+v, %v after %d draws; want %s on the third draw", got, err, calls.Load(), want)
	}

	// A clock that stands still draws the same taken id four times, then answers the duplicate.
	var dup *sales.DuplicateError
	var draws int
	_, err = rec.Track(ctx, in, func() time.Time { draws++; return t0 })
	if !errors.As(err, &dup) || draws != 4 {
		t.Errorf("Track with every draw taken: %v after %d draws, want a DuplicateError after 4", err, draws)
	}

	// An id the caller sent is recorded as sent, and its duplicate answered at once.
	sent := in
	sent.TransactionID = "order-1"
	if got, err := rec.Track(ctx, sent, func() time.Time { t.Error("a sent id drew a generated one"); return t0 }); err != nil ||
		got.TransactionID != "order-1" {
		t.Fatalf("Track with a sent id: %+v, %v", got, err)
	}
	if _, err := rec.Track(ctx, sent, func() time.Time { t.Error("a sent id drew a generated one"); return t0 }); !errors.As(err, &dup) {
		t.Errorf("Track with a sent id again: %v, want a DuplicateError", err)
	}
}
