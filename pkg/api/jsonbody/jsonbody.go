// Package jsonbody reads a JSON request body field by field, so that each wrong field gets the message the
// interface documents for it. Null members were dropped by the contract middleware (null counts as absent).
package jsonbody

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// Object is a JSON object body.
type Object map[string]json.RawMessage

// Parse reads a request body given raw to the handler; an absent or empty body is an empty object.
func Parse(body *json.RawMessage) (Object, error) {
	if body == nil || len(bytes.TrimSpace(*body)) == 0 {
		return Object{}, nil
	}
	var o Object
	if err := json.Unmarshal(*body, &o); err != nil || o == nil {
		return nil, apierr.New(apierr.KindInvalid, "Request body must be a JSON object")
	}
	return o, nil
}

// Str reads a string member: present reports whether it was sent, ok whether it is a string.
func (o Object) Str(key string) (v string, present, ok bool) {
	raw, present := o[key]
	if !present {
		return "", false, false
	}
	ok = json.Unmarshal(raw, &v) == nil && len(raw) > 0 && raw[0] == '"'
	return v, true, ok
}

// OptStr is a string member, "" when absent or not a string (CheckStrings refuses the latter first).
func (o Object) OptStr(key string) string {
	v, _, ok := o.Str(key)
	if !ok {
		return ""
	}
	return v
}

// Bool reads a boolean member.
func (o Object) Bool(key string) (v bool, present, ok bool) {
	raw, present := o[key]
	if !present {
		return false, false, false
	}
	ok = json.Unmarshal(raw, &v) == nil
	return v, true, ok
}

// Int reads a member that must be a JSON integer (no fraction, no exponent, no string).
func (o Object) Int(key string) (v int64, present, ok bool) {
	raw, present := o[key]
	if !present {
		return 0, false, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return n, true, err == nil
}

// Number reads a member that must be a JSON number (not a string), as its literal text: exact, never
// rounded through a float.
func (o Object) Number(key string) (literal string, ok bool) {
	raw, present := o[key]
	if !present {
		return "", false
	}
	t := string(bytes.TrimSpace(raw))
	if t == "" || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return "", false // a string, boolean, object or array
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return "", false
	}
	return t, true
}

// SaturatedInt is Int, except that an integer beyond int64 reads as the nearest int64, so that a range
// check refuses it as too large (or too small) rather than as malformed.
func (o Object) SaturatedInt(key string) (v int64, present, ok bool) {
	if v, present, ok = o.Int(key); !present || ok {
		return v, present, ok
	}
	t := bytes.TrimSpace(o[key])
	digits := bytes.TrimPrefix(t, []byte("-"))
	if len(digits) == 0 || len(bytes.Trim(digits, "0123456789")) > 0 {
		return 0, true, false
	}
	if t[0] == '-' {
		return math.MinInt64, true, true
	}
	return math.MaxInt64, true, true
}

// Sub reads a member that must be an object.
func (o Object) Sub(key string) (Object, bool) {
	raw, present := o[key]
	if !present {
		return nil, false
	}
	var s Object
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return nil, false
	}
	return s, true
}

// ID reads a record id given as a number or a numeric string.
func (o Object) ID(key string) (v int64, present, ok bool) {
	if n, present, ok := o.Int(key); !present || ok {
		return n, present, ok && n > 0
	}
	s, _, ok := o.Str(key)
	if !ok {
		return 0, true, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, true, err == nil && n > 0
}

// AdditionalData is what the interface reads from additional_data.
type AdditionalData struct {
	Test      bool
	ProgramID *int64
}

// CheckStrings refuses a body whose optional string members, when sent, are not strings: the spec
// promises strings there, and a value of another type would otherwise be dropped without a word.
func (o Object) CheckStrings(keys ...string) error {
	for _, k := range keys {
		if _, present, ok := o.Str(k); present && !ok {
			return apierr.Invalid(k + " must be a string")
		}
	}
	return nil
}

// AdditionalData reads additional_data, refusing members of the wrong type.
func (o Object) AdditionalData() (AdditionalData, error) {
	var ad AdditionalData
	if _, present := o["additional_data"]; !present {
		return ad, nil
	}
	sub, ok := o.Sub("additional_data")
	if !ok {
		return ad, apierr.Invalid("additional_data must be an object")
	}
	t, present, ok := sub.Bool("test_mode")
	if present && !ok {
		return ad, apierr.Invalid("additional_data.test_mode must be a boolean")
	}
	ad.Test = t
	id, present, ok := sub.ID("program_id")
	if present && !ok {
		return ad, apierr.Invalid("additional_data.program_id must be a program id (a positive integer)")
	}
	if present {
		ad.ProgramID = &id
	}
	return ad, nil
}
