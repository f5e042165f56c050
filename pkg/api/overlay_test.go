package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/api/route"
)

// The bodies of operations that check their request themselves (x-reftrack-validation: handler) decode
// from any JSON object without failing, so that a wrong member gets the message the interface documents
// rather than a JSON decoding error: gen/server's overlay gives every member of their generated structs
// a jsonbody type, and additionalProperties, whose generated decoder matches member names exactly. The
// body of an operation that verifies a signature over the exact bytes (x-reftrack-body raw) is raw JSON.
//
// typedBodies are handler-checked bodies that decode into plain generated types all the same.
var typedBodies = map[string]string{
	"DevIdTokenRequest": "two optional strings; the development issuer checks the email itself",
}

func TestHandlerCheckedBodiesDecodeAnyObject(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Spec() // shared, read only: a parse of its own costs ~0.4 s of CPU under the race detector
	if err != nil {
		t.Fatal(err)
	}
	table, err := route.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	strict := reflect.TypeFor[gen.StrictServerInterface]()
	checked := 0
	for _, p := range table.All() {
		if !p.HandlerValidates || p.Operation.RequestBody == nil {
			continue
		}
		mt := p.Operation.RequestBody.Value.Content.Get("application/json")
		if mt == nil || mt.Schema == nil || typedBodies[strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/")] != "" {
			continue
		}
		op := []rune(p.OperationID)
		op[0] = unicode.ToUpper(op[0])
		m, ok := strict.MethodByName(string(op))
		if !ok {
			t.Fatalf("%s: no method of the strict server", p.OperationID)
		}
		field, ok := m.Type.In(1).FieldByName("Body") // (ctx, request object)
		if !ok {
			t.Fatalf("%s: its request object has no Body", p.OperationID)
		}
		body := field.Type.Elem()
		checked++
		if p.Body.Raw {
			if body != reflect.TypeFor[json.RawMessage]() {
				t.Errorf("%s verifies the exact bytes, but its body decodes into %s", p.OperationID, body)
			}
			continue
		}
		checkLenient(t, p.OperationID, body)
	}
	if checked < 11 {
		t.Errorf("checked %d bodies: has the spec's x-reftrack-validation changed?", checked)
	}
}

// checkLenient holds a generated body struct to decoding any JSON object: it matches member names itself
// (encoding/json matches struct fields case-insensitively), and each member is of a jsonbody type.
func checkLenient(t *testing.T, op string, body reflect.Type) {
	t.Helper()
	if !reflect.PointerTo(body).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		t.Errorf("%s: %s does not decode itself (additionalProperties in gen/server's overlay)", op, body)
	}
	lenient := reflect.TypeFor[jsonbody.Value]().PkgPath()
	for i := range body.NumField() {
		f := body.Field(i)
		if f.Name == "AdditionalProperties" {
			continue
		}
		if f.Type.PkgPath() != lenient {
			t.Errorf("%s: member %s of %s is a %s, which a wrong JSON type fails to decode into: give it a jsonbody type in gen/server's overlay",
				op, f.Name, body, f.Type)
		}
		if inner, ok := nestedStruct(f.Type); ok {
			checkLenient(t, op, inner)
		}
	}
}

// nestedStruct is the generated struct a jsonbody.Object (or Objects) holds.
func nestedStruct(t reflect.Type) (reflect.Type, bool) {
	if m, ok := t.MethodByName("Fields"); ok {
		return m.Type.Out(0), true
	}
	if m, ok := t.MethodByName("Items"); ok {
		return nestedStruct(m.Type.Out(0).Elem())
	}
	return nil, false
}
