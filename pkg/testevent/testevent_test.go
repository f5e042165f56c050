package testevent

import "testing"

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, ok := range Types {
		if err := Check(ok, ok); err != nil {
			t.Errorf("Check(%q) = %v", ok, err)
		}
	}
	for _, tc := range []struct{ in, shown, want string }{
		{"refund", "refund", "Invalid event_type: refund. Valid: click, lead, sale"},
		{"", "42", "Invalid event_type: 42. Valid: click, lead, sale"},
		{"Click", "Click", "Invalid event_type: Click. Valid: click, lead, sale"},
	} {
		if err := Check(tc.in, tc.shown); err == nil || err.Error() != tc.want {
			t.Errorf("Check(%q, %q) = %v, want %q", tc.in, tc.shown, err, tc.want)
		}
	}
}
