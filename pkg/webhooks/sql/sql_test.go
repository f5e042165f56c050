package sql

import (
	"strings"
	"testing"
)

// Every trigger of an event type's change writes that change's events and nothing else, and only for
// programs with an endpoint: the deliveries are the worker's (webhooks_claim), and a trigger that wrote
// its own would send some events twice, or to endpoints that do not take them.
func TestTriggersWriteEventsOnly(t *testing.T) {
	writers := 0
	for _, tr := range Triggers {
		b, err := Files.ReadFile(tr.Function + ".sql")
		if err != nil {
			t.Fatalf("trigger %s: %v", tr.Name, err)
		}
		body := string(b)
		if !strings.Contains(body, "INSERT INTO webhook_events") {
			continue
		}
		writers++
		if strings.Contains(body, "webhook_deliveries") {
			t.Errorf("%s.sql writes deliveries: the worker fans events out (webhooks_claim)", tr.Function)
		}
		if strings.Count(body, "INSERT INTO") != 1 {
			t.Errorf("%s.sql: want one statement, the events' insert", tr.Function)
		}
		if !strings.Contains(body, "EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = ") {
			t.Errorf("%s.sql writes events without asking whether their program has an endpoint", tr.Function)
		}
	}
	// One per event type's change, and partner.updated twice: a partner's name or email, and their
	// enrollment in a program.
	if writers != 12 {
		t.Errorf("%d triggers write events, want the 12 of the event types' changes", writers)
	}
}
