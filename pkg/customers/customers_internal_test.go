package customers

import (
	"testing"

	"github.com/reftrack/reftrack/pkg/pagecursor"
)

func TestFilterCheck(t *testing.T) {
	t.Parallel()
	cursor := pagecursor.Encode(pagecursor.Position{ID: 7})
	for _, tt := range []struct {
		name      string
		f         Filter
		limit     int
		cursor    bool
		wantError string
	}{
		{name: "none", f: Filter{}, limit: DefaultPageSize},
		{name: "every status", f: Filter{Status: Converted, Limit: MaxPageSize}, limit: MaxPageSize},
		{name: "a page after", f: Filter{Status: Lead, PartnerID: 3, Limit: 1, Cursor: cursor}, limit: 1, cursor: true},
		{name: "visitor", f: Filter{Status: Visitor}, limit: DefaultPageSize},
		{name: "unknown status", f: Filter{Status: "buyer"}, wantError: "status must be one of visitor, lead, converted"},
		{name: "negative partner", f: Filter{PartnerID: -1}, wantError: "partner_id must be a positive integer"},
		{name: "page too big", f: Filter{Limit: MaxPageSize + 1}, wantError: "limit must be between 1 and 100"},
		{name: "negative page", f: Filter{Limit: -1}, wantError: "limit must be between 1 and 100"},
		{name: "broken cursor", f: Filter{Cursor: "!!"}, wantError: "cursor is not valid"},
	} {
		after, limit, err := tt.f.check()
		if tt.wantError != "" {
			if err == nil || err.Error() != tt.wantError {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantError)
			}
			continue
		}
		if err != nil || limit != tt.limit || (after != nil) != tt.cursor {
			t.Errorf("%s: %v, %d, %v; want limit %d, cursor %v", tt.name, after, limit, err, tt.limit, tt.cursor)
		}
	}
}
