package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// GET /api/v1/leads/{leadId} and /api/v1/sales/{saleId}: a lead and a sale as recorded, to the roles that
// may list tracking events (owner, admin, analyst); billing is refused, another workspace's member too, and
// an id that names nothing is 404. Every answer is checked against the spec by apitest.
func TestGetLeadAndSale(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	clickID := customerWithLead(t, f.env, f.r, "cust-get-1")
	res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "get-1", "amount_cents": 4900, "currency": "EUR",
		"customer_key": "cust-get-1"})
	if res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	saleID := res.JSON(t)["sale_id"]
	var leadID int64
	if err := f.env.DB.Get(&leadID, `SELECT id FROM leads WHERE customer_key = 'cust-get-1'`); err != nil {
		t.Fatal(err)
	}
	leadPath, salePath := fmt.Sprintf("/api/v1/leads/%d", leadID), fmt.Sprintf("/api/v1/sales/%v", saleID)

	// 200: as recorded.
	l := f.data(f.do(http.MethodGet, leadPath, nil), http.StatusOK)
	want := map[string]any{"id": float64(leadID), "event_type": "lead", "program_id": float64(f.r.ProgramID), "timestamp": l["timestamp"],
		"click_id": clickID, "session_id": nil, "page_url": nil, "customer_key": "cust-get-1", "converted": true, "is_test": false,
		"created_at": l["created_at"]}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("lead (-want +got):\n%s", diff)
	}
	s := f.data(f.do(http.MethodGet, salePath, nil), http.StatusOK)
	want = map[string]any{"id": saleID, "event_type": "conversion", "program_id": float64(f.r.ProgramID), "partner_id": float64(f.r.PartnerID),
		"timestamp": s["timestamp"], "click_id": clickID, "transaction_id": "get-1", "processor_event_id": "get-1", "amount_cents": float64(4900),
		"currency": "EUR", "refunded_amount_cents": float64(0), "sale_type": "payment", "payment_status": "paid", "is_recurring": false,
		"is_test": false, "created_at": s["created_at"]}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("sale (-want +got):\n%s", diff)
	}
	for _, role := range []string{"admin", "analyst"} {
		token := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, role))
		for _, path := range []string{leadPath, salePath} {
			if res := f.env.Do(http.MethodGet, path, nil, token...); res.Status != http.StatusOK {
				t.Errorf("%s: GET %s: %d %s", role, path, res.Status, res.Body)
			}
		}
	}

	// 403: a role without tracking:list; a member of another workspace.
	billing := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, "billing"))
	other := f.another()
	for _, path := range []string{leadPath, salePath} {
		platformError(t, f.env.Do(http.MethodGet, path, nil, billing...), http.StatusForbidden, "ForbiddenError",
			"Your role (billing) does not allow this (tracking:list)")
		platformError(t, other.do(http.MethodGet, path, nil), http.StatusForbidden, "ForbiddenError",
			"You are not a member of this program's workspace")
	}

	// 404: no such lead or sale.
	platformError(t, f.do(http.MethodGet, "/api/v1/leads/999999", nil), http.StatusNotFound, "NotFoundError", "Lead not found")
	platformError(t, f.do(http.MethodGet, "/api/v1/sales/999999", nil), http.StatusNotFound, "NotFoundError", "Sale not found")
}
