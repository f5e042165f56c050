// Package jsonbody reads the request bodies whose handlers check them member by member
// (x-reftrack-validation: handler), so that each wrong member gets the message the interface documents
// for it rather than a JSON decoding error.
//
// The server's generated structs of those bodies (gen/server, through its overlay) hold every member as
// a Value, which decodes any JSON without failing and remembers what came; a nested object is an
// Object of its own generated struct, an array of objects Objects. A handler reads the members with a
// Reader, one call per member in the order the interface lists its rules; the Reader keeps the first
// refusal. A JSON null counts as absent.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Value is one member of a request body as it came: absent (or null), or a JSON value, kept as its
// text.
type Value struct {
	raw []byte // nil when absent or null
}

// UnmarshalJSON keeps the member's text; it never fails.
func (v *Value) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		v.raw = nil
		return nil
	}
	v.raw = bytes.Clone(b) // the decoder reuses b
	return nil
}

// MarshalJSON writes the member as it came (null when absent).
func (v Value) MarshalJSON() ([]byte, error) {
	if v.raw == nil {
		return []byte("null"), nil
	}
	return v.raw, nil
}

// Sent reports whether the member was sent (a null was not).
func (v Value) Sent() bool { return v.raw != nil }

// Str is the member's text when it is a JSON string.
func (v Value) Str() (string, bool) {
	if len(v.raw) < 2 || v.raw[0] != '"' {
		return "", false
	}
	if inner := v.raw[1 : len(v.raw)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true // nothing to unescape (the decoder would replace invalid UTF-8)
	}
	var s string
	if json.Unmarshal(v.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Bool is the member's value when it is a JSON boolean.
func (v Value) Bool() (bool, bool) {
	switch string(v.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Int is the member's value when it is a JSON integer (no fraction, no exponent, not a string). An
// integer beyond int64 reads as the nearest int64, so that a range check refuses it as too large (or
// too small) rather than as malformed.
func (v Value) Int() (int64, bool) {
	if n, err := strconv.ParseInt(string(v.raw), 10, 64); err == nil {
		return n, true
	}
	digits := bytes.TrimPrefix(v.raw, []byte("-"))
	if len(digits) == 0 || len(bytes.Trim(digits, "0123456789")) > 0 {
		return 0, false
	}
	if v.raw[0] == '-' {
		return math.MinInt64, true
	}
	return math.MaxInt64, true
}

// Number is the member's literal text when it is a JSON number (not a string): exact, never rounded
// through a float.
func (v Value) Number() (string, bool) {
	if len(v.raw) == 0 || (v.raw[0] != '-' && (v.raw[0] < '0' || v.raw[0] > '9')) {
		return "", false // a string, boolean, object or array
	}
	return string(v.raw), true
}

// ID is a record id sent as a positive JSON integer or as a string holding one (0 when it is neither).
func (v Value) ID() (int64, bool) {
	text := string(v.raw)
	if s, ok := v.Str(); ok {
		text = s
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil && n > 0 {
		return n, true
	}
	return 0, false
}

// Strings is the member's value when it is a JSON array of strings.
func (v Value) Strings() ([]string, bool) {
	if len(v.raw) == 0 || v.raw[0] != '[' {
		return nil, false
	}
	var list []string
	if json.Unmarshal(v.raw, &list) != nil {
		return nil, false
	}
	return list, true
}

// JSON is the member's JSON text as sent ("" when absent).
func (v Value) JSON() string { return string(v.raw) }

// Shown is the member as a message quotes it: a string's text, else the JSON as sent.
func (v Value) Shown() string {
	if s, ok := v.Str(); ok {
		return s
	}
	return v.JSON()
}

// Object is a member that should be a JSON object of T, a generated struct of Values (whose own decoding
// never fails either).
type Object[T any] struct {
	Value
	fields T
	object bool
}

// UnmarshalJSON keeps the member and, when it is an object, its members in T.
func (o *Object[T]) UnmarshalJSON(b []byte) error {
	*o = Object[T]{}
	if err := o.Value.UnmarshalJSON(b); err != nil || len(o.raw) == 0 || o.raw[0] != '{' {
		return err
	}
	o.object = true
	return json.Unmarshal(o.raw, &o.fields)
}

// Fields are the object's members: present reports whether it was sent, ok whether it is an object.
func (o Object[T]) Fields() (fields T, present, ok bool) { return o.fields, o.Sent(), o.object }

// Objects is a member that should be a JSON array of objects of T.
type Objects[T any] struct {
	Value
	items []Object[T]
	array bool
}

// UnmarshalJSON keeps the member and, when it is an array, its items.
func (o *Objects[T]) UnmarshalJSON(b []byte) error {
	*o = Objects[T]{}
	if err := o.Value.UnmarshalJSON(b); err != nil || len(o.raw) == 0 || o.raw[0] != '[' {
		return err
	}
	o.array = true
	return json.Unmarshal(o.raw, &o.items)
}

// Items are the array's items: present reports whether it was sent, ok whether it is an array.
func (o Objects[T]) Items() (items []Object[T], present, ok bool) { return o.items, o.Sent(), o.array }
