package sql

import (
	"strings"
	"testing"
)

// fanOut is the end of every trigger's statement: ev holds the events it wrote (id, program_id, type).
const fanOut = `    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id FROM ev JOIN webhook_endpoints e ON e.program_id = ev.program_id
    WHERE e.enabled AND (e.event_types IS NULL OR ev.type = ANY (e.event_types));`

// Every trigger that writes events also writes their deliveries, with the one fan-out (fanOut): a trigger
// that wrote its own would send some events to endpoints that do not take them, or to disabled ones.
func TestTriggersFanOutAlike(t *testing.T) {
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
		if !strings.Contains(body, "WITH ev AS (") || !strings.Contains(body, fanOut) {
			t.Errorf("%s.sql writes events without the fan-out:\n%s", tr.Function, fanOut)
		}
		if !strings.Contains(body, "EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = ") {
			t.Errorf("%s.sql writes events without asking whether their program has an endpoint", tr.Function)
		}
	}
	if writers != 11 {
		t.Errorf("%d triggers write events, want the 11 of the event types' changes", writers)
	}
}
