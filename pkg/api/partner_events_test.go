package api_test

import (
	"net/http"
	"testing"
)

// A partner's enrollment changes are partner.updated events: approved, banned (with the reason), each
// with the partner as the API shows it then (status and stats), fitting the Partner schema.
func TestEnrollmentChangesAreEvents(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	rc := newHookReceiver(t)
	f.data(f.do(http.MethodPost, f.base+"/webhook-endpoints", map[string]any{"url": rc.srv.URL, "events": []string{"partner.updated"}}),
		http.StatusCreated)
	id, _ := f.partner("Ann", "ann@example.com")
	if _, err := f.env.DB.Exec(`UPDATE partner_programs SET status = 'pending' WHERE partner_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	deliverAll(t, f.env)
	before := len(rc.deliveries())
	approved := f.data(f.do(http.MethodPost, f.base+"/partners/"+itoa(id)+"/approve", nil), http.StatusOK)
	banned := f.data(f.do(http.MethodPost, f.base+"/partners/"+itoa(id)+"/ban", map[string]any{"reason": "Cookie stuffing"}), http.StatusOK)
	deliverAll(t, f.env)
	got := rc.deliveries()[before:]
	if len(got) != 2 {
		t.Fatalf("%d partner.updated deliveries after approve and ban, want 2", len(got))
	}
	for i := range got {
		d := got[i].event
		if d.Type != "partner.updated" || d.Data["id"] != float64(id) {
			t.Errorf("delivery %d: %s %v", i, d.Type, d.Data)
		}
		if err := f.env.Doc.Components.Schemas["Partner"].Value.VisitJSON(d.Data); err != nil {
			t.Errorf("delivery %d does not fit Partner: %v", i, err)
		}
		// Data is the resource when the event is first sent: both read as banned.
		sameResource(t, "partner.updated", d.Data, banned)
	}
	if approved["status"] != "approved" || banned["status"] != "banned" || banned["status_reason"] != "Cookie stuffing" {
		t.Errorf("approved %v, banned %v (%v)", approved["status"], banned["status"], banned["status_reason"])
	}
}
