package jsonbody_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/api/jsonbody"
)

func value(t *testing.T, text string) jsonbody.Value {
	t.Helper()
	var v jsonbody.Value
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return v
}

// What each reading of a member makes of each JSON value.
func TestValueReadings(t *testing.T) {
	t.Parallel()
	type got struct {
		Sent          bool
		Str           string
		StrOK         bool
		Bool, BoolOK  bool
		Int           int64
		IntOK         bool
		Number        string
		NumberOK      bool
		ID            int64
		IDOK          bool
		Strings       []string
		StringsOK     bool
		JSON, Shown   string
		Marshalled    string
		MarshalledErr error
	}
	read := func(v jsonbody.Value) got {
		var g got
		g.Sent = v.Sent()
		g.Str, g.StrOK = v.Str()
		g.Bool, g.BoolOK = v.Bool()
		g.Int, g.IntOK = v.Int()
		g.Number, g.NumberOK = v.Number()
		g.ID, g.IDOK = v.ID()
		g.Strings, g.StringsOK = v.Strings()
		g.JSON, g.Shown = v.JSON(), v.Shown()
		m, err := v.MarshalJSON()
		g.Marshalled, g.MarshalledErr = string(m), err
		return g
	}
	for _, tc := range []struct {
		json string
		want got
	}{
		{`null`, got{Marshalled: "null"}},
		{`"abc"`, got{Sent: true, Str: "abc", StrOK: true, JSON: `"abc"`, Shown: "abc", Marshalled: `"abc"`}},
		{`"é\u00e9\n"`, got{Sent: true, Str: "éé\n", StrOK: true, JSON: `"é\u00e9\n"`, Shown: "éé\n", Marshalled: `"é\u00e9\n"`}},
		{`""`, got{Sent: true, StrOK: true, JSON: `""`, Marshalled: `""`}},
		{`"12"`, got{Sent: true, Str: "12", StrOK: true, ID: 12, IDOK: true, JSON: `"12"`, Shown: "12", Marshalled: `"12"`}},
		{`"0"`, got{Sent: true, Str: "0", StrOK: true, JSON: `"0"`, Shown: "0", Marshalled: `"0"`}},
		{`"1.5"`, got{Sent: true, Str: "1.5", StrOK: true, JSON: `"1.5"`, Shown: "1.5", Marshalled: `"1.5"`}},
		{`12`, got{Sent: true, Int: 12, IntOK: true, Number: "12", NumberOK: true, ID: 12, IDOK: true, JSON: "12", Shown: "12", Marshalled: "12"}},
		{`-3`, got{Sent: true, Int: -3, IntOK: true, Number: "-3", NumberOK: true, JSON: "-3", Shown: "-3", Marshalled: "-3"}},
		{`0`, got{Sent: true, IntOK: true, Number: "0", NumberOK: true, JSON: "0", Shown: "0", Marshalled: "0"}},
		{`99999999999999999999`, got{Sent: true, Int: math.MaxInt64, IntOK: true, Number: "99999999999999999999", NumberOK: true,
			JSON: "99999999999999999999", Shown: "99999999999999999999", Marshalled: "99999999999999999999"}},
		{`-99999999999999999999`, got{Sent: true, Int: math.MinInt64, IntOK: true, Number: "-99999999999999999999", NumberOK: true,
			JSON: "-99999999999999999999", Shown: "-99999999999999999999", Marshalled: "-99999999999999999999"}},
		{`1.50`, got{Sent: true, Number: "1.50", NumberOK: true, JSON: "1.50", Shown: "1.50", Marshalled: "1.50"}},
		{`1e2`, got{Sent: true, Number: "1e2", NumberOK: true, JSON: "1e2", Shown: "1e2", Marshalled: "1e2"}},
		{`true`, got{Sent: true, Bool: true, BoolOK: true, JSON: "true", Shown: "true", Marshalled: "true"}},
		{`false`, got{Sent: true, BoolOK: true, JSON: "false", Shown: "false", Marshalled: "false"}},
		{`{"a": 1}`, got{Sent: true, JSON: `{"a": 1}`, Shown: `{"a": 1}`, Marshalled: `{"a": 1}`}},
		{`["a", "b"]`, got{Sent: true, Strings: []string{"a", "b"}, StringsOK: true, JSON: `["a", "b"]`, Shown: `["a", "b"]`, Marshalled: `["a", "b"]`}},
		{`[]`, got{Sent: true, Strings: []string{}, StringsOK: true, JSON: `[]`, Shown: `[]`, Marshalled: `[]`}},
		{`["a", 1]`, got{Sent: true, JSON: `["a", 1]`, Shown: `["a", 1]`, Marshalled: `["a", 1]`}},
	} {
		if diff := cmp.Diff(read(value(t, tc.json)), tc.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tc.json, diff)
		}
	}
	// A member that was never decoded is absent.
	if diff := cmp.Diff(read(jsonbody.Value{}), got{Marshalled: "null"}); diff != "" {
		t.Errorf("zero Value (-got +want):\n%s", diff)
	}
}

// A struct of Values, as gen/server's overlay makes the handler-checked bodies.
type member struct {
	Email jsonbody.Value `json:"email"`
	Name  jsonbody.Value `json:"name"`
}

type body struct {
	One  jsonbody.Object[member]  `json:"one"`
	Many jsonbody.Objects[member] `json:"many"`
}

func TestObjectsDecodeAnything(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		json                              string
		onePresent, oneOK                 bool
		oneEmail                          string
		manyPresent, manyOK               bool
		items                             int
		firstItemObject, secondItemObject bool
	}{
		{json: `{}`},
		{json: `{"one": null, "many": null}`},
		{json: `{"one": {"email": "a@example.com", "name": 7}, "many": [{"email": 1}, 5]}`, onePresent: true, oneOK: true,
			oneEmail: "a@example.com", manyPresent: true, manyOK: true, items: 2, firstItemObject: true},
		{json: `{"one": [1], "many": {"email": "x"}}`, onePresent: true, manyPresent: true},
		{json: `{"one": "s", "many": "s"}`, onePresent: true, manyPresent: true},
		{json: `{"many": [null, {}]}`, manyPresent: true, manyOK: true, items: 2, secondItemObject: true},
	} {
		var b body
		if err := json.Unmarshal([]byte(tc.json), &b); err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		one, present, ok := b.One.Fields()
		email, _ := one.Email.Str()
		items, manyPresent, manyOK := b.Many.Items()
		if present != tc.onePresent || ok != tc.oneOK || email != tc.oneEmail || manyPresent != tc.manyPresent || manyOK != tc.manyOK ||
			len(items) != tc.items {
			t.Errorf("%s: one %v %v %q, many %v %v %d items", tc.json, present, ok, email, manyPresent, manyOK, len(items))
		}
		for i, want := range []bool{tc.firstItemObject, tc.secondItemObject}[:len(items)] {
			if _, _, isObject := items[i].Fields(); isObject != want {
				t.Errorf("%s: item %d is an object: %v", tc.json, i, isObject)
			}
		}
	}
}

// A Reader keeps the first refusal and reads nothing after it; absent members are not refused.
func TestReaderKeepsTheFirstRefusal(t *testing.T) {
	t.Parallel()
	errA, errB, errC := errors.New("a"), errors.New("b"), errors.New("c")
	var r jsonbody.Reader
	if s, ok := r.String(jsonbody.Value{}, errA); ok || s != "" || r.Err() != nil {
		t.Fatalf("absent: %q %v %v", s, ok, r.Err())
	}
	if s, ok := r.String(value(t, `"abc"`), errA, jsonbody.NotBlank, jsonbody.MaxBytes(3)); !ok || s != "abc" || r.Err() != nil {
		t.Fatalf("valid: %q %v %v", s, ok, r.Err())
	}
	if s, ok := r.String(value(t, `"abcd"`), errB, jsonbody.MaxBytes(3)); ok || s != "" || !errors.Is(r.Err(), errB) {
		t.Fatalf("too long: %q %v %v", s, ok, r.Err())
	}
	// Every read after the first refusal is skipped, even of a valid member.
	if n, ok := r.Int(value(t, `5`), errC); ok || n != 0 || !errors.Is(r.Err(), errB) {
		t.Fatalf("after a refusal: %d %v %v", n, ok, r.Err())
	}
	if r.Check(false, errC) || !errors.Is(r.Err(), errB) {
		t.Fatalf("Check after a refusal: %v", r.Err())
	}

	for _, tc := range []struct {
		name string
		read func(r *jsonbody.Reader) bool
	}{
		{"string of a number", func(r *jsonbody.Reader) bool { _, ok := r.String(value(t, `7`), errA); return ok }},
		{"bool of a string", func(r *jsonbody.Reader) bool { _, ok := r.Bool(value(t, `"true"`), errA); return ok }},
		{"int of a fraction", func(r *jsonbody.Reader) bool { _, ok := r.Int(value(t, `1.5`), errA); return ok }},
		{"int not positive", func(r *jsonbody.Reader) bool { _, ok := r.Int(value(t, `0`), errA, jsonbody.Positive); return ok }},
		{"number of a string", func(r *jsonbody.Reader) bool { _, ok := r.Number(value(t, `"5"`), errA); return ok }},
		{"id of zero", func(r *jsonbody.Reader) bool { _, ok := r.ID(value(t, `"0"`), errA); return ok }},
		{"strings of an object", func(r *jsonbody.Reader) bool { _, ok := r.Strings(value(t, `{}`), errA); return ok }},
		{"blank", func(r *jsonbody.Reader) bool { _, ok := r.String(value(t, `" "`), errA, jsonbody.NotBlank); return ok }},
		{"empty", func(r *jsonbody.Reader) bool { _, ok := r.String(value(t, `""`), errA, jsonbody.NotEmpty); return ok }},
		{"too many characters", func(r *jsonbody.Reader) bool {
			_, ok := r.String(value(t, `"ééé"`), errA, jsonbody.Runes(1, 2))
			return ok
		}},
		{"not one of", func(r *jsonbody.Reader) bool {
			_, ok := r.String(value(t, `"c"`), errA, jsonbody.OneOf("a", "b"))
			return ok
		}},
	} {
		var r jsonbody.Reader
		if tc.read(&r) || !errors.Is(r.Err(), errA) {
			t.Errorf("%s: read, or not refused (%v)", tc.name, r.Err())
		}
	}
}

func TestPtr(t *testing.T) {
	t.Parallel()
	if p := jsonbody.Ptr(5, true); p == nil || *p != 5 {
		t.Errorf("Ptr(5, true) = %v", p)
	}
	if p := jsonbody.Ptr(5, false); p != nil {
		t.Errorf("Ptr(5, false) = %v", *p)
	}
}
