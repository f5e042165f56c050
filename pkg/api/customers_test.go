package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// customersPage is one page of the customers list as the route answers it.
type customersPage struct {
	Data []struct {
		ID          int64   `json:"id"`
		Key         *string `json:"customer_key"`
		PartnerID   *int64  `json:"partner_id"`
		PartnerName *string `json:"partner_name"`
		Status      string  `json:"status"`
		FirstClick  *string `json:"first_click_at"`
		LeadAt      *string `json:"lead_at"`
		FirstSaleAt *string `json:"first_sale_at"`
		Money       []struct {
			Currency        string `json:"currency"`
			RevenueCents    int64  `json:"revenue_cents"`
			CommissionCents int64  `json:"commission_cents"`
		} `json:"money"`
	}
	Meta struct {
		NextCursor *string `json:"next_cursor"`
	}
}

func (f *ledgerFixture) customers(query string) customersPage {
	f.t.Helper()
	res := f.do(http.MethodGet, f.base+"/customers"+query, nil)
	if res.Status != http.StatusOK {
		f.t.Fatalf("customers%s: %d %s", query, res.Status, res.Body)
	}
	var p customersPage
	res.Decode(f.t, &p)
	return p
}

// earned is what a commission earns now as the ledger's own route shows it: its payable amount less its
// clawbacks.
func (f *ledgerFixture) earned(id any) int64 {
	f.t.Helper()
	c := f.data(f.do(http.MethodGet, commission(id), nil), http.StatusOK)
	return int64(c["payable_cents"].(float64) - c["clawback_cents"].(float64))
}

// Each customer with the partner they came through, how far they went, and their money per currency as
// the ledger's routes show it; newest first, a page at a time, by partner and by status.
func TestCustomersList(t *testing.T) {
	t.Parallel()
	// Recurring, so that each of a customer's sales pays a commission.
	f := newLedger(t, map[string]any{"commission_approval": "manual", "hold_days": 10, "commission_type": "recurring_percent"})
	other, otherURL := f.partner("Grace", "grace@example.com")

	// A lead who never bought, then a customer who bought twice in two currencies (one sale partly
	// refunded), then another partner's customer whose commission was rejected.
	customerWithLead(t, f.env, f.r, "only-lead")
	customerWithLead(t, f.env, f.r, "buyer")
	usd := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "b-1", "amount_cents": 4900, "currency": "USD", "customer_key": "buyer"}).JSON(t)
	eur := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "b-2", "amount_cents": 2000, "currency": "EUR", "customer_key": "buyer"}).JSON(t)
	if res := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "b-1", "refund_amount_cents": 900}); res.Status != http.StatusOK {
		t.Fatalf("refund: %d %s", res.Status, res.Body)
	}
	rejected := f.sale("g-1", 3000, "USD", otherURL)["id"]
	f.data(f.do(http.MethodPost, commission(rejected)+"/reject", map[string]any{"reason": "self-referral"}), http.StatusOK)

	all := f.customers("")
	var keys []string
	for _, c := range all.Data {
		keys = append(keys, *c.Key)
	}
	if want := []string{"cust-g-1", "buyer", "only-lead"}; !cmp.Equal(keys, want) || all.Meta.NextCursor != nil {
		t.Fatalf("customers = %v (next %v), want %v on one page", keys, all.Meta.NextCursor, want)
	}
	grace, buyer, lead := all.Data[0], all.Data[1], all.Data[2]
	if lead.Status != "lead" || lead.LeadAt == nil || lead.FirstClick == nil || lead.FirstSaleAt != nil || len(lead.Money) != 0 ||
		lead.PartnerID == nil || *lead.PartnerID != f.r.PartnerID {
		t.Errorf("the lead = %+v", lead)
	}
	if buyer.Status != "converted" || buyer.FirstSaleAt == nil || buyer.FirstClick == nil {
		t.Errorf("the buyer = %+v", buyer)
	}
	type money struct {
		Currency                      string
		RevenueCents, CommissionCents int64
	}
	moneyOf := func(i int) []money {
		var out []money
		for _, m := range all.Data[i].Money {
			out = append(out, money{m.Currency, m.RevenueCents, m.CommissionCents})
		}
		return out
	}
	wantBuyer := []money{{"EUR", 2000, f.earned(eur["commission_id"])}, {"USD", 4000, f.earned(usd["commission_id"])}}
	if got := moneyOf(1); !cmp.Equal(got, wantBuyer) {
		t.Errorf("the buyer's money = %v, want %v", got, wantBuyer)
	}
	if got, want := moneyOf(0), []money{{"USD", 3000, 0}}; !cmp.Equal(got, want) {
		t.Errorf("the rejected commission's customer = %v, want %v", got, want)
	}
	if grace.PartnerID == nil || *grace.PartnerID != other || grace.PartnerName == nil || *grace.PartnerName != "Grace" {
		t.Errorf("the other partner's customer = %+v", grace)
	}

	// Filters and pages.
	if p := f.customers(fmt.Sprintf("?partner_id=%d", other)); len(p.Data) != 1 || *p.Data[0].Key != "cust-g-1" {
		t.Errorf("partner %d's customers = %+v", other, p.Data)
	}
	if p := f.customers("?status=lead"); len(p.Data) != 1 || *p.Data[0].Key != "only-lead" {
		t.Errorf("leads = %+v", p.Data)
	}
	if p := f.customers("?status=visitor"); len(p.Data) != 0 {
		t.Errorf("visitors = %+v", p.Data)
	}
	var paged []string
	for cursor := ""; ; {
		p := f.customers("?limit=1" + cursor)
		for _, c := range p.Data {
			paged = append(paged, *c.Key)
		}
		if p.Meta.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.Meta.NextCursor
	}
	if !cmp.Equal(paged, keys) {
		t.Errorf("one at a time = %v, want %v", paged, keys)
	}
}

// A bad filter or cursor is refused with what to fix; another workspace's member and an unknown program
// get the documented answers.
func TestCustomersRefusals(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	platformError(t, f.do(http.MethodGet, f.base+"/customers?cursor=bm9wZQ", nil), http.StatusBadRequest, "BadRequestError",
		"cursor is not valid")
	platformError(t, f.do(http.MethodGet, f.base+"/customers?status=buyer", nil), http.StatusBadRequest, "BadRequestError",
		`Invalid query parameter status: value is not one of the allowed values ["visitor","lead","converted"]`)
	platformError(t, f.do(http.MethodGet, f.base+"/customers?limit=101", nil), http.StatusBadRequest, "BadRequestError",
		"Invalid query parameter limit: number must be at most 100")
	g := f.another()
	platformError(t, f.env.Do(http.MethodGet, f.base+"/customers", nil, g.owner...), http.StatusForbidden, "ForbiddenError",
		"You are not a member of this program's workspace")
	platformError(t, f.do(http.MethodGet, "/api/v1/programs/999999999/customers", nil), http.StatusNotFound, "NotFoundError",
		"Program not found")
	if res := f.env.Do(http.MethodGet, f.base+"/customers", nil); res.Status != http.StatusUnauthorized {
		t.Errorf("no token: %d %s", res.Status, res.Body)
	}
	// Any member reads them, whatever the role; the program's API key is not an account's.
	for _, role := range []string{"owner", "admin", "analyst", "billing"} {
		if res := f.env.Do(http.MethodGet, f.base+"/customers", nil, apitest.Bearer(member(t, f.env, f.r.AdvertiserID, role))...); res.Status != http.StatusOK {
			t.Errorf("%s: %d %s", role, res.Status, res.Body)
		}
	}
	platformError(t, f.env.Do(http.MethodGet, f.base+"/customers", nil, apitest.Bearer(f.r.APIKey)...), http.StatusUnauthorized, "UnauthorizedError",
		"This route needs an account login token, not a program API key — run reftrack login and send its token")
}
