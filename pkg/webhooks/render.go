package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/ledger"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
)

// Resource is what an event tells of: the resource as its owner reads it when a worker first picks the
// event up, with what only the event's moment knew. One of the resource fields is set, by the event's
// type (Lead for lead.created, Sale for sale.*, …); none when the resource is gone.
type Resource struct {
	Type   string // the event's type
	ID     int64  // the resource's id (a partner event's: its enrollment's, the partner in one program)
	IsTest bool   // the event's: a test-mode change, or a sample

	Lead *leads.Lead
	Sale *sales.Sale
	// Refund is the refund a sale.refunded event tells of.
	Refund *sales.RefundRecord
	// Commission's Status is the one the event moved it to (ledger.CommissionsAt).
	Commission *ledger.Commission
	// PreviousStatus is, on commission.updated, the status the commission had before.
	PreviousStatus string
	// Payout's Status is the one the event moved it to.
	Payout  *ledger.Payout
	Partner *programs.Partner
	Link    *programs.Link
}

// Shape makes an event's data from its resource: the management API's answer for the resource, built by
// the API's own wire mapping (pkg/api/webhookdata.Data), so that a webhook's data and the API's answer
// are one function's output and cannot drift apart. The server wires it in; nil is a programming error.
type Shape func(Resource) ([]byte, error)

// unrendered is an event a worker picked up, as its row says (webhooks_pick_up).
type unrendered struct {
	ID             int64     `db:"id"`
	Type           string    `db:"type"`
	ResourceID     int64     `db:"resource_id"`
	Status         *string   `db:"status"`          // commission.*, payout.*: the status it moved to
	PreviousStatus *string   `db:"previous_status"` // commission.updated
	RefundID       *int64    `db:"refund_id"`       // sale.refunded
	OccurredAt     time.Time `db:"occurred_at"`
	IsTest         bool      `db:"is_test"`
}

// byID indexes list by the key of each element.
func byID[T any](list []T, key func(T) int64) map[int64]*T {
	out := make(map[int64]*T, len(list))
	for i := range list {
		out[key(list[i])] = &list[i]
	}
	return out
}

// resources reads the resources of events from their owners, at now: one query per kind of resource the
// events name, whatever their number (a worker renders hundreds at once). The result follows events.
func resources(ctx context.Context, q sqlx.QueryerContext, now time.Time, events []unrendered) ([]Resource, error) {
	var leadIDs, saleIDs, refundIDs, payoutIDs, enrollmentIDs, linkIDs []int64
	var moments []ledger.Moment
	momentOf := map[int]int{} // event index → its moment's
	for i, ev := range events {
		switch ev.Type {
		case LeadCreated:
			leadIDs = append(leadIDs, ev.ResourceID)
		case SaleCreated, SaleRefunded:
			saleIDs = append(saleIDs, ev.ResourceID)
			if ev.RefundID != nil {
				refundIDs = append(refundIDs, *ev.RefundID)
			}
		case CommissionCreated, CommissionUpdated:
			momentOf[i] = len(moments)
			moments = append(moments, ledger.Moment{ID: ev.ResourceID, Status: deref(ev.Status), At: ev.OccurredAt})
		case PayoutCreated, PayoutPaid, PayoutFailed:
			payoutIDs = append(payoutIDs, ev.ResourceID)
		case PartnerCreated, PartnerUpdated:
			enrollmentIDs = append(enrollmentIDs, ev.ResourceID)
		case LinkUpdated:
			linkIDs = append(linkIDs, ev.ResourceID)
		}
	}
	var (
		leadsOf       map[int64]*leads.Lead
		salesOf       map[int64]*sales.Sale
		refundsOf     map[int64]*sales.RefundRecord
		commissionsAt []*ledger.Commission
		payoutsOf     map[int64]*ledger.Payout
		partnersOf    map[int64]*programs.Partner
		linksOf       map[int64]*programs.Link
	)
	if len(leadIDs) > 0 {
		list, err := leads.Read(ctx, q, leadIDs)
		if err != nil {
			return nil, fmt.Errorf("read leads: %w", err)
		}
		leadsOf = byID(list, func(l leads.Lead) int64 { return l.ID })
	}
	if len(saleIDs) > 0 {
		list, err := sales.Read(ctx, q, saleIDs)
		if err != nil {
			return nil, fmt.Errorf("read sales: %w", err)
		}
		salesOf = byID(list, func(s sales.Sale) int64 { return s.ID })
	}
	if len(refundIDs) > 0 {
		list, err := sales.ReadRefunds(ctx, q, refundIDs)
		if err != nil {
			return nil, fmt.Errorf("read refunds: %w", err)
		}
		refundsOf = byID(list, func(r sales.RefundRecord) int64 { return r.ID })
	}
	if len(moments) > 0 {
		var err error
		if commissionsAt, err = ledger.CommissionsAt(ctx, q, now, moments); err != nil {
			return nil, fmt.Errorf("read commissions: %w", err)
		}
	}
	if len(payoutIDs) > 0 {
		list, err := ledger.ReadPayouts(ctx, q, payoutIDs)
		if err != nil {
			return nil, fmt.Errorf("read payouts: %w", err)
		}
		payoutsOf = byID(list, func(p ledger.Payout) int64 { return p.ID })
	}
	if len(enrollmentIDs) > 0 {
		list, err := programs.PartnersByEnrollment(ctx, q, enrollmentIDs)
		if err != nil {
			return nil, fmt.Errorf("read partners: %w", err)
		}
		partnersOf = byID(list, func(p programs.Partner) int64 { return p.PartnerProgramID })
	}
	if len(linkIDs) > 0 {
		list, err := programs.ReadLinks(ctx, q, linkIDs)
		if err != nil {
			return nil, fmt.Errorf("read links: %w", err)
		}
		linksOf = byID(list, func(l programs.Link) int64 { return l.ID })
	}

	out := make([]Resource, len(events))
	for i, ev := range events {
		r := Resource{Type: ev.Type, ID: ev.ResourceID, IsTest: ev.IsTest}
		switch ev.Type {
		case LeadCreated:
			r.Lead = leadsOf[ev.ResourceID]
		case SaleCreated, SaleRefunded:
			r.Sale = salesOf[ev.ResourceID]
			if ev.RefundID != nil {
				r.Refund = refundsOf[*ev.RefundID]
			}
		case CommissionCreated, CommissionUpdated:
			r.Commission = commissionsAt[momentOf[i]]
			r.PreviousStatus = deref(ev.PreviousStatus)
		case PayoutCreated, PayoutPaid, PayoutFailed:
			if p := payoutsOf[ev.ResourceID]; p != nil {
				shown := *p // several events may tell of one payout, each with its own status
				shown.Status = deref(ev.Status)
				r.Payout = &shown
			}
		case PartnerCreated, PartnerUpdated:
			r.Partner = partnersOf[ev.ResourceID]
		case LinkUpdated:
			r.Link = linksOf[ev.ResourceID]
		}
		out[i] = r
	}
	return out, nil
}

// gone reports whether the event's resource was not found (deleted since).
func (r Resource) gone() bool {
	return r.Lead == nil && r.Sale == nil && r.Commission == nil && r.Payout == nil && r.Partner == nil && r.Link == nil
}

// render makes the data of events: each resource shaped as the API answers it; a resource gone since the
// event is shown by its id alone, as there is nothing else left to show.
func render(ctx context.Context, q sqlx.QueryerContext, shape Shape, now time.Time, events []unrendered) ([]string, error) {
	if shape == nil {
		return nil, errors.New("webhooks: no Shape to render events' data with (the server wires webhookdata.Data)")
	}
	rs, err := resources(ctx, q, now, events)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rs))
	for i, r := range rs {
		var b []byte
		if r.gone() {
			b, err = json.Marshal(struct {
				ID     int64 `json:"id"`
				IsTest bool  `json:"is_test"`
			}{r.ID, r.IsTest})
		} else {
			b, err = shape(r)
		}
		if err != nil {
			return nil, fmt.Errorf("render event %d (%s): %w", events[i].ID, events[i].Type, err)
		}
		out[i] = string(b)
	}
	return out, nil
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
