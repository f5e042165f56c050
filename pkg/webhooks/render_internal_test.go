package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// countingQueryer counts the queries run through it.
type countingQueryer struct {
	q sqlx.QueryerContext
	n int
}

func (c *countingQueryer) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.n++
	return c.q.QueryContext(ctx, query, args...)
}

func (c *countingQueryer) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	c.n++
	return c.q.QueryxContext(ctx, query, args...)
}

func (c *countingQueryer) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	c.n++
	return c.q.QueryRowxContext(ctx, query, args...)
}

// A worker renders a batch with one query per kind of resource its events name, whatever their number
// (leads, sales, refunds, commissions, payouts, partners, links: seven at most), never one per event. A
// resource that is not there is shown by its id alone; the others are found and shaped.
func TestRenderReadsEachKindOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	brand, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var enrollment int64
	if err := d.Get(&enrollment, `SELECT id FROM partner_programs WHERE partner_id = $1 AND program_id = $2`,
		brand.PartnerID, brand.ProgramID); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pending, processing := "pending", "processing"
	var events []unrendered
	add := func(typ string, resourceID int64) {
		ev := unrendered{ID: int64(len(events) + 1), Type: typ, ResourceID: resourceID, OccurredAt: now}
		switch typ {
		case CommissionCreated, CommissionUpdated:
			ev.Status, ev.PreviousStatus = &pending, &pending
		case PayoutCreated, PayoutPaid, PayoutFailed:
			ev.Status = &processing
		case SaleRefunded:
			refund := 800000 + resourceID
			ev.RefundID = &refund
		}
		events = append(events, ev)
	}
	for i := range int64(20) {
		for _, typ := range EventTypes {
			add(typ, 900000+i) // no such resource
		}
	}
	add(PartnerUpdated, enrollment)
	add(LinkUpdated, brand.LinkID)

	q := &countingQueryer{q: d.DB}
	shape := func(r Resource) ([]byte, error) { return json.Marshal(map[string]any{"type": r.Type, "id": r.ID}) }
	data, err := render(ctx, q, shape, now, events)
	if err != nil {
		t.Fatal(err)
	}
	if q.n != 7 {
		t.Errorf("%d events of every type rendered with %d queries, want 7 (one per kind of resource)", len(events), q.n)
	}
	for i, ev := range events {
		var got map[string]any
		if err := json.Unmarshal([]byte(data[i]), &got); err != nil {
			t.Fatal(err)
		}
		_, shaped := got["type"]
		if exists := ev.ResourceID == enrollment && ev.Type == PartnerUpdated || ev.ResourceID == brand.LinkID && ev.Type == LinkUpdated; exists != shaped {
			t.Errorf("event %d (%s of %d): data %s", ev.ID, ev.Type, ev.ResourceID, data[i])
		}
		if got["id"] != float64(ev.ResourceID) {
			t.Errorf("event %d (%s): data %s names another resource", ev.ID, ev.Type, data[i])
		}
	}

	// A batch of one kind: one query.
	q.n = 0
	if _, err := render(ctx, q, shape, now, events[len(events)-2:len(events)-1]); err != nil {
		t.Fatal(err)
	}
	if q.n != 1 {
		t.Errorf("a partner event rendered with %d queries, want 1", q.n)
	}
}
