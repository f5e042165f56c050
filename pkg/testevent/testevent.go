// Package testevent holds what a single test event (`reftrack test <type>`, POST /api/v1/cli/test-event)
// may be, so that the server (pkg/api/cli, recording it through pkg/synthetic) and the CLI (refusing before
// it sends) apply one rule in the same words. It imports nothing of the server.
package testevent

import "fmt"

// Types are the single test events that can be recorded.
var Types = []string{"click", "lead", "sale"}

// TypeError refuses an event type that is none of Types; Shown is the value as the request carried it.
type TypeError struct{ Shown string }

func (e *TypeError) Error() string {
	return fmt.Sprintf("Invalid event_type: %s. Valid: click, lead, sale", e.Shown)
}

// Check refuses an event type that is none of Types (shown as sent).
func Check(eventType, shown string) error {
	for _, t := range Types {
		if eventType == t {
			return nil
		}
	}
	return &TypeError{Shown: shown}
}
