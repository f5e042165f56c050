package api

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// message is the 400 message of err ("" for nil).
func message(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var e *apierr.Error
	if !errors.As(err, &e) || e.Kind != apierr.KindInvalid {
		t.Fatalf("%v is not a 400", err)
	}
	return e.Message
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct{ body, want string }{
		{`{"a":"b","c":[1,{"d":"e"}]}`, ""},
		{deep(32), ""},
		{deep(33), "Request body is nested too deeply"},
		{`{"a":` + deep(32) + `}`, "Request body is nested too deeply"},
		{`{"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}`, ""}, // brackets in a string do not nest
		{`{"name":"a\u0000b"}`, "name must not contain NUL characters"},
		{`{"a":{"b":[1,"x","\u0000"]}}`, "a.b[2] must not contain NUL characters"},
		{`{"k\u0000":1}`, `k\u0000 must not contain NUL characters`},
		{`"\u0000"`, "Request body must not contain NUL characters"},
		{`{"a":"\\u0000"}`, ""}, // an escaped backslash, then the text u0000
		{`{"a":"\\\u0000"}`, "a must not contain NUL characters"},
		{`{"first":"\u0000","second":"\u0000"}`, "first must not contain NUL characters"}, // document order
		{`{"a":"\u00001"}`, "a must not contain NUL characters"},
		{`{"a":"\u0001"}`, ""},
	}
	for _, tt := range tests {
		if got := message(t, checkJSON([]byte(tt.body))); got != tt.want {
			t.Errorf("checkJSON(%s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestCheckQuery(t *testing.T) {
	t.Parallel()
	declared := []string{"state", "dateFrom"}
	tests := []struct{ query, want string }{
		{"state=abc&dateFrom=2026-01-01", ""},
		{"state=a%00b", "state must not contain NUL characters"},
		{"st%61te=%ff", "state must be valid UTF-8"},
		{"state=%zz", `Invalid query parameter state: invalid %-escape "%zz"`},
		{"state=%", `Invalid query parameter state: invalid %-escape "%"`},
		{"other=%00&%zz=1&x%00=%ff", ""}, // undeclared parameters are nobody's business
		{"state=a;b", ""},
		{strings.Repeat("x=1&", 1000) + "state=1", "Invalid query string: more than 1000 parameters"},
		{strings.Repeat("x=1&", 999) + "state=1", ""}, // 1000 parameters
	}
	for _, tt := range tests {
		if got := message(t, checkQuery(tt.query, declared)); got != tt.want {
			t.Errorf("checkQuery(%.40s) = %q, want %q", tt.query, got, tt.want)
		}
	}
	if err := checkQuery("state=%00", nil); err != nil {
		t.Errorf("an operation without query parameters refused its query: %v", err)
	}
}

func TestParseForm(t *testing.T) {
	t.Parallel()
	form, err := parseForm("state=a+b&email=ada%40example.com&&name=&name=x")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(url.Values{"state": {"a b"}, "email": {"ada@example.com"}, "name": {"", "x"}}, form); diff != "" {
		t.Errorf("form (-want +got):\n%s", diff)
	}
	tests := []struct{ body, want string }{
		{"state=%00", "state must not contain NUL characters"},
		{"email=%ff", "email must be valid UTF-8"},
		{"st%00ate=1", `st\u0000ate must not contain NUL characters`},
		{"%ff=1", "\uFFFD must be valid UTF-8"},
		{"state=%zz", `Invalid form field state: invalid %-escape "%zz"`},
		{"%zz=1", `Invalid form body: invalid %-escape "%zz"`},
		{"a=1;b=2", "Invalid form body: ';' is not a field separator"},
		{strings.Repeat("&", 1000), "Invalid form body: more than 1000 fields"},
	}
	for _, tt := range tests {
		_, err := parseForm(tt.body)
		if got := message(t, err); got != tt.want {
			t.Errorf("parseForm(%.40s) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
