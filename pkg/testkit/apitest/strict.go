package apitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"mime"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// strictSpec checks bodies against the spec read as a JSON Schema validator (Prism, ajv) reads it.
// kin-openapi, which the transport runs as well, reads OAS 3.0 loosely in places: it accepts null for
// a property declared `type: object, nullable: true, allOf: [$ref]`, where OAS 3.0.3 says `nullable`
// only adds null to the sibling `type` and the `allOf` still applies to null (and rejects it). Generated
// clients follow the strict reading, so the tests must too.
//
// The document is converted to JSON Schema 2020-12 once; each schema is compiled the first time an
// exchange needs it and kept.
type strictSpec struct {
	doc map[string]any // the converted document

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by JSON pointer into doc
}

// strictDocURL names the converted document for the compiler; "#/components/…" references resolve in it.
const strictDocURL = "urn:reftrack:openapi.json"

// newStrictSpec converts an OAS 3.0 document, as JSON (openapi.Document), for strict checks. It does not
// change doc.
func newStrictSpec(doc map[string]any) (*strictSpec, error) {
	converted, _ := convertDocument(doc, "").(map[string]any)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "int32", Validate: integerIn(math.MinInt32, math.MaxInt32)})
	c.RegisterFormat(&jsonschema.Format{Name: "int64", Validate: integerIn(math.MinInt64, math.MaxInt64)})
	if err := c.AddResource(strictDocURL, converted); err != nil {
		return nil, fmt.Errorf("strict validator: %w", err)
	}
	return &strictSpec{doc: converted, compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// integerIn is the OAS formats int32 and int64: an integer within the format's range.
func integerIn(lo, hi int64) func(any) error {
	return func(v any) error {
		n, ok := v.(json.Number) // what jsonschema.UnmarshalJSON decodes numbers into
		if !ok {
			return nil // a format applies to numbers only; a wrong type is the type keyword's business
		}
		f, _, err := big.ParseFloat(n.String(), 10, 256, big.ToNearestEven)
		if err != nil || !f.IsInt() {
			return fmt.Errorf("%s is not an integer", n)
		}
		if i, acc := f.Int64(); acc != big.Exact || i < lo || i > hi {
			return fmt.Errorf("%s is out of the format's range", n)
		}
		return nil
	}
}

// response checks a response body against the schema the spec gives for the operation (path is the
// spec's path template), status and media type. Bodies the spec gives no JSON schema for pass.
func (s *strictSpec) response(path, method string, status int, contentType string, body []byte) error {
	ptr, ok := s.responsePointer(path, method, status)
	if !ok {
		return nil // a status the spec does not list: kin-openapi reports it
	}
	return s.body(ptr, contentType, body, false)
}

// request checks a request the server accepted: a body where the spec declares none, a missing body
// the spec requires, a media type it does not list, a JSON body that does not fit its schema.
func (s *strictSpec) request(path, method, contentType string, body []byte) error {
	opPtr := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method)
	op, ok := lookup(s.doc, opPtr).(map[string]any)
	if !ok {
		return nil
	}
	empty := len(bytes.TrimSpace(body)) == 0
	if _, ok := op["requestBody"]; !ok {
		if !empty {
			return errors.New("the request has a body but the operation declares none")
		}
		return nil
	}
	ptr, rb := s.resolve(opPtr + "/requestBody")
	if empty {
		if required, _ := rb["required"].(bool); required {
			return errors.New("the operation requires a request body and none was sent")
		}
		return nil
	}
	return s.body(ptr, contentType, body, true)
}

// body checks body against the media type of the response or request object at ptr.
func (s *strictSpec) body(ptr, contentType string, body []byte, isRequest bool) error {
	obj, _ := lookup(s.doc, ptr).(map[string]any)
	content, _ := obj["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) > 0 && isRequest {
			return errors.New("the request has a body but the operation declares no content")
		}
		return nil
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = ""
	}
	key, ok := matchMediaType(content, mt)
	if !ok && isRequest && content["application/json"] != nil && json.Valid(body) {
		// The spec's documented rule: a body that parses as JSON is taken as JSON whatever its
		// Content-Type says (curl -d sends form encoding).
		key, ok = "application/json", true
	}
	if !ok {
		if isRequest {
			return fmt.Errorf("Content-Type %q is not one the operation accepts", contentType)
		}
		return nil // kin-openapi reports an undeclared response media type
	}
	if !isJSON(key) && !isJSON(mt) {
		return nil // pages, scripts, style sheets, YAML, metrics: no JSON schema to apply
	}
	schemaPtr := ptr + "/content/" + escapePointer(key) + "/schema"
	if lookup(s.doc, schemaPtr) == nil {
		return nil
	}
	sch, err := s.schema(schemaPtr)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("strict JSON Schema check: %w", err)
	}
	return nil
}

// schema compiles the schema at ptr once.
func (s *strictSpec) schema(ptr string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[ptr]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(strictDocURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("strict validator: compile %s: %w", ptr, err)
	}
	s.compiled[ptr] = sch
	return sch, nil
}

// responsePointer finds the response object for status: the exact code, then the range (4XX), then
// default; a Reference Object is followed.
func (s *strictSpec) responsePointer(path, method string, status int) (string, bool) {
	base := "/paths/" + escapePointer(path) + "/" + strings.ToLower(method) + "/responses"
	responses, _ := lookup(s.doc, base).(map[string]any)
	for _, code := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if _, ok := responses[code]; ok {
			ptr, _ := s.resolve(base + "/" + escapePointer(code))
			return ptr, true
		}
	}
	return "", false
}

// resolve follows local Reference Objects from ptr and returns where they end.
func (s *strictSpec) resolve(ptr string) (string, map[string]any) {
	for range 10 {
		obj, _ := lookup(s.doc, ptr).(map[string]any)
		ref, ok := obj["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return ptr, obj
		}
		ptr = strings.TrimPrefix(ref, "#")
	}
	return ptr, nil
}

// matchMediaType finds mt among the content's media types: exact, then type/*, then */*.
func matchMediaType(content map[string]any, mt string) (string, bool) {
	if _, ok := content[mt]; ok {
		return mt, true
	}
	if typ, _, ok := strings.Cut(mt, "/"); ok {
		if _, ok := content[typ+"/*"]; ok {
			return typ + "/*", true
		}
	}
	if _, ok := content["*/*"]; ok {
		return "*/*", true
	}
	return "", false
}

func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }

// lookup reads a JSON pointer in doc (nil when nothing is there).
func lookup(doc any, ptr string) any {
	if ptr == "" {
		return doc
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func escapePointer(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// convertDocument copies an OAS 3.0 document, converting every Schema Object in it (under
// components.schemas and every "schema" member) to JSON Schema 2020-12. key is v's member name.
func convertDocument(v any, key string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, m := range t {
			switch {
			case k == "schema":
				out[k] = convertSchema(m)
			case k == "schemas" && key == "components":
				schemas, _ := m.(map[string]any)
				converted := make(map[string]any, len(schemas))
				for name, sch := range schemas {
					converted[name] = convertSchema(sch)
				}
				out[k] = converted
			case k == "example" || k == "examples" || strings.HasPrefix(k, "x-"):
				out[k] = m // data, not schemas
			default:
				out[k] = convertDocument(m, k)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, m := range t {
			out[i] = convertDocument(m, key)
		}
		return out
	}
	return v
}

// convertSchema converts one OAS 3.0.3 Schema Object to JSON Schema 2020-12, reading it strictly:
//   - `nullable: true` adds "null" to the sibling `type`, and only when there is one; every other
//     keyword (allOf, enum, …) still applies to null.
//   - A Reference Object's siblings are ignored (OAS 3.0), so a `$ref` stands alone.
//   - Draft 4's boolean exclusiveMinimum/exclusiveMaximum become 2020-12's numbers.
//   - OAS-only annotations (discriminator, example, xml, externalDocs, x-*) are dropped.
func convertSchema(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v // a boolean schema (additionalProperties: true)
	}
	if ref, ok := s["$ref"]; ok {
		return map[string]any{"$ref": ref}
	}
	out := make(map[string]any, len(s))
	for k, m := range s {
		switch k {
		case "properties":
			props, _ := m.(map[string]any)
			converted := make(map[string]any, len(props))
			for name, p := range props {
				converted[name] = convertSchema(p)
			}
			out[k] = converted
		case "items", "additionalProperties", "not":
			out[k] = convertSchema(m)
		case "allOf", "anyOf", "oneOf":
			list, _ := m.([]any)
			converted := make([]any, len(list))
			for i, sub := range list {
				converted[i] = convertSchema(sub)
			}
			out[k] = converted
		case "nullable", "discriminator", "example", "xml", "externalDocs":
		default:
			if !strings.HasPrefix(k, "x-") {
				out[k] = m
			}
		}
	}
	if nullable, _ := s["nullable"].(bool); nullable {
		if typ, ok := s["type"].(string); ok {
			out["type"] = []any{typ, "null"}
		}
	}
	for exclusive, bound := range map[string]string{"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"} {
		if b, ok := out[exclusive].(bool); ok {
			delete(out, exclusive)
			if n, has := out[bound]; b && has {
				out[exclusive] = n
				delete(out, bound)
			}
		}
	}
	return out
}

// component checks body, a JSON document, against the component schema name.
func (s *strictSpec) component(name string, body []byte) error {
	sch, err := s.schema("/components/schemas/" + escapePointer(name))
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("strict JSON Schema check: %w", err)
	}
	return nil
}
