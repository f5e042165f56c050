package api

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// object is a JSON request body read field by field, so that each wrong field gets the message the
// interface documents for it. Null members were dropped by the contract middleware (null = absent).
type object map[string]json.RawMessage

// parseBody reads a request body given raw to the handler; an absent or empty body is an empty object.
func parseBody(body *json.RawMessage) (object, error) {
	if body == nil || len(bytes.TrimSpace(*body)) == 0 {
		return object{}, nil
	}
	var o object
	if err := json.Unmarshal(*body, &o); err != nil || o == nil {
		return nil, apierr.BadRequest("Request body must be a JSON object")
	}
	return o, nil
}

// str reads a string member: present reports whether it was sent, ok whether it is a string.
func (o object) str(key string) (v string, present, ok bool) {
	raw, present := o[key]
	if !present {
		return "", false, false
	}
	ok = json.Unmarshal(raw, &v) == nil && len(raw) > 0 && raw[0] == '"'
	return v, true, ok
}

// optStr is a string member, "" when absent or not a string.
func (o object) optStr(key string) string {
	v, _, ok := o.str(key)
	if !ok {
		return ""
	}
	return v
}

// boolean reads a boolean member.
func (o object) boolean(key string) (v bool, present, ok bool) {
	raw, present := o[key]
	if !present {
		return false, false, false
	}
	ok = json.Unmarshal(raw, &v) == nil
	return v, true, ok
}

// integer reads a member that must be a JSON integer (no fraction, no exponent, no string).
func (o object) integer(key string) (v int64, present, ok bool) {
	raw, present := o[key]
	if !present {
		return 0, false, false
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
	return n, true, err == nil
}

// sub reads a member that must be an object.
func (o object) sub(key string) (object, bool) {
	raw, present := o[key]
	if !present {
		return nil, false
	}
	var s object
	if json.Unmarshal(raw, &s) != nil || s == nil {
		return nil, false
	}
	return s, true
}

// id reads a record id given as a number or a numeric string.
func (o object) id(key string) (v int64, present, ok bool) {
	if n, present, ok := o.integer(key); !present || ok {
		return n, present, ok && n > 0
	}
	s, _, ok := o.str(key)
	if !ok {
		return 0, true, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, true, err == nil && n > 0
}

// additionalData is what the interface reads from additional_data.
type additionalData struct {
	test      bool
	programID *int64
}

func (o object) additionalData() additionalData {
	var ad additionalData
	sub, ok := o.sub("additional_data")
	if !ok {
		return ad
	}
	if t, _, ok := sub.boolean("test_mode"); ok {
		ad.test = t
	}
	if id, _, ok := sub.id("program_id"); ok {
		ad.programID = &id
	}
	return ad
}

var errProgramMismatch = apierr.Forbidden("program_id does not match the API key")

// checkTestProgram is the test-mode rule: with both a key and additional_data.program_id, they must name
// the same program.
func checkTestProgram(ad additionalData, keyProgram int64, hasKey bool) error {
	if ad.test && hasKey && ad.programID != nil && *ad.programID != keyProgram {
		return errProgramMismatch
	}
	return nil
}
