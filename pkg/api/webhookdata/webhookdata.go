// Package webhookdata shapes a webhook event's data as the management API answers for the event's
// resource, with the very wire functions of those answers (pkg/api/internal/wire): a lead.created's data
// and GET /api/v1/leads/{leadId} are one function's output, and so on for every type, so the two cannot
// drift apart. The server hands Data to pkg/webhooks (its Store, for samples, and its Worker), which reads
// the resources from their owners and calls it.
package webhookdata

import (
	"encoding/json"
	"fmt"
	"time"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/webhooks"
)

// commissionUpdated is CommissionUpdatedData: the commission, and the status before the change.
type commissionUpdated struct {
	gen.Commission
	PreviousStatus gen.CommissionStatus `json:"previous_status"`
}

// saleRefunded is SaleRefundedData: the sale, and the refund that made the event.
type saleRefunded struct {
	gen.Sale
	Refund *refund `json:"refund"`
}

// refund is the spec's SaleRefund. No operation answers it alone, so the generator, which keeps only
// the schemas operations use, makes no type of it; pkg/api's webhook tests hold this one to the schema.
type refund struct {
	ID                      int64     `json:"id"`
	Reason                  string    `json:"reason"`
	RefundReason            *string   `json:"refund_reason"`
	AmountCents             int64     `json:"amount_cents"`
	CommissionReversedCents int64     `json:"commission_reversed_cents"`
	CreatedAt               time.Time `json:"created_at"`
}

// Data is a webhooks.Shape: r's resource as the API answers it, with what only the event knew
// (commission.updated's previous_status, sale.refunded's refund).
func Data(r webhooks.Resource) ([]byte, error) {
	switch {
	case r.Lead != nil:
		return json.Marshal(wire.Lead(*r.Lead))
	case r.Sale != nil:
		s := wire.Sale(*r.Sale)
		if r.Type != webhooks.SaleRefunded {
			return json.Marshal(s)
		}
		out := saleRefunded{Sale: s}
		if f := r.Refund; f != nil {
			out.Refund = &refund{ID: f.ID, Reason: f.Reason, RefundReason: f.RefundReason, AmountCents: f.AmountCents,
				CommissionReversedCents: f.CommissionReversedCents, CreatedAt: f.CreatedAt}
		}
		return json.Marshal(out)
	case r.Commission != nil:
		c := wire.Commission(*r.Commission)
		if r.Type != webhooks.CommissionUpdated {
			return json.Marshal(c)
		}
		return json.Marshal(commissionUpdated{Commission: c, PreviousStatus: gen.CommissionStatus(r.PreviousStatus)})
	case r.Payout != nil:
		return json.Marshal(wire.Payout(*r.Payout))
	case r.Partner != nil:
		return json.Marshal(wire.Partner(*r.Partner))
	case r.Link != nil:
		return json.Marshal(wire.Link(*r.Link))
	}
	return nil, fmt.Errorf("webhook event %s: no resource to shape", r.Type)
}
