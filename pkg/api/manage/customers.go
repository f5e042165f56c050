package manage

import (
	"context"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/wire"
	"github.com/reftrack/reftrack/pkg/customers"
)

// ListCustomers lists a program's customers, newest first, a page at a time.
func (h *Management) ListCustomers(ctx context.Context, req gen.ListCustomersRequestObject) (gen.ListCustomersResponseObject, error) {
	accountID, err := h.signedIn(ctx)
	if err != nil {
		return nil, err
	}
	p := req.Params
	f := customers.Filter{PartnerID: wire.Deref(p.PartnerId), Cursor: wire.Deref(p.Cursor), Limit: wire.Deref(p.Limit)}
	if p.Status != nil {
		f.Status = string(*p.Status)
	}
	page, err := customers.List(ctx, h.DB, accountID, req.ProgramId, f)
	if err != nil {
		return nil, err
	}
	data := make([]gen.Customer, len(page.Customers))
	for i, c := range page.Customers {
		money := make([]gen.CustomerMoney, len(c.Money))
		for j, m := range c.Money {
			money[j] = gen.CustomerMoney{Currency: m.Currency, RevenueCents: m.RevenueCents,
				CommissionCents: m.CommissionCents}
		}
		data[i] = gen.Customer{Id: c.ID, CustomerKey: c.Key, PartnerId: c.PartnerID, PartnerName: c.PartnerName,
			Status: gen.CustomerStatus(c.Status), FirstClickAt: c.FirstClick, LeadAt: c.LeadAt, FirstSaleAt: c.FirstSaleAt,
			Money: money, IsTest: c.IsTest, CreatedAt: c.CreatedAt}
	}
	return gen.ListCustomers200JSONResponse{Body: gen.CustomerListEnvelope{Data: data, Meta: wire.ListMeta(page.NextCursor)}}, nil
}
