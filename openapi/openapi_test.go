package openapi_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/openapi"
)

func TestLoadValidates(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.OpenAPI; got != "3.0.3" {
		t.Errorf("openapi version = %q, want 3.0.3", got)
	}
}

// OAS 3.0.3's `nullable: true` only adds null to the sibling `type`; every other keyword still applies to
// null. So a nullable schema that has no type, whose object comes through allOf/anyOf/oneOf, or whose
// enum leaves null out, refuses null for strict validators (Prism, JSON Schema) and the clients generated
// from the spec, even where kin-openapi lets it pass. Make the referenced schema nullable instead.
func TestNullableAdmitsNull(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch node := v.(type) {
		case map[string]any:
			if nullable, _ := node["nullable"].(bool); nullable {
				if _, ok := node["type"].(string); !ok {
					t.Errorf("%s: nullable without a type admits no null", at)
				}
				for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref"} {
					if _, ok := node[k]; ok {
						t.Errorf("%s: nullable beside %s: the %s still refuses null", at, k, k)
					}
				}
				if enum, ok := node["enum"].([]any); ok && !slices.Contains(enum, nil) {
					t.Errorf("%s: nullable enum without null refuses null", at)
				}
			}
			for k, m := range node {
				if k != "example" && k != "examples" {
					walk(m, at+"/"+k)
				}
			}
		case []any:
			for i, m := range node {
				walk(m, fmt.Sprintf("%s/%d", at, i))
			}
		}
	}
	walk(doc, "#")
}

// A JSON null counts as absent on every route (info.description, docs/rules.md#bad-input-abuse-and-faults),
// so every optional property of every JSON request body, at any depth, must admit null under the strict
// reading above, or strict validators flag requests the server accepts; and a required property must not,
// since null there is absent and answers 400.
func TestRequestNullCountsAsAbsent(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	components, _ := doc["components"].(map[string]any)
	checked := map[string]bool{} // schema locations, each checked once
	var walk func(s any, at string)
	walk = func(s any, at string) {
		node, name := resolveSchema(components, s)
		if name != "" {
			if checked[name] {
				return
			}
			checked[name] = true
			at = name
		}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := node[k].([]any)
			for i, sub := range list {
				walk(sub, fmt.Sprintf("%s/%s/%d", at, k, i))
			}
		}
		required, _ := node["required"].([]any)
		props, _ := node["properties"].(map[string]any)
		for prop, ps := range props {
			where := at + "." + prop
			switch nullOK := admitsNull(components, ps); {
			case slices.Contains(required, any(prop)) && nullOK:
				t.Errorf("%s: required, but admits null (null counts as absent: it must answer 400)", where)
			case !slices.Contains(required, any(prop)) && !nullOK:
				t.Errorf("%s: optional, but refuses null under the strict reading (null counts as absent)", where)
			}
			checked[where] = true
			walk(ps, where)
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, at+"[]")
		}
		if extra, ok := node["additionalProperties"].(map[string]any); ok {
			walk(extra, at+"{}")
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	bodies := 0
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			opm, _ := op.(map[string]any) // path-level parameters are a list
			rb, _ := opm["requestBody"].(map[string]any)
			if ref, ok := rb["$ref"].(string); ok {
				rb, _ = lookupRef(doc, ref).(map[string]any)
			}
			content, _ := rb["content"].(map[string]any)
			for mt, media := range content {
				if mt != "application/json" {
					continue
				}
				bodies++
				walk(media.(map[string]any)["schema"], method+" "+path)
			}
		}
	}
	if bodies < 15 || len(checked) < 70 {
		t.Errorf("walked %d JSON request bodies and %d schemas and properties; has the document's shape changed?", bodies, len(checked))
	}
}

// admitsNull reports whether a JSON null fits schema s under OAS 3.0.3's strict reading: `nullable`
// only adds null to a sibling `type`; enum, allOf, anyOf, oneOf and not still apply to null; a `$ref`
// stands alone.
func admitsNull(components map[string]any, s any) bool {
	node, _ := resolveSchema(components, s)
	if node == nil {
		return true // true, or an empty schema
	}
	if _, typed := node["type"].(string); typed {
		if nullable, _ := node["nullable"].(bool); !nullable {
			return false
		}
	}
	if enum, ok := node["enum"].([]any); ok && !slices.Contains(enum, nil) {
		return false
	}
	if list, ok := node["allOf"].([]any); ok {
		for _, sub := range list {
			if !admitsNull(components, sub) {
				return false
			}
		}
	}
	if list, ok := node["anyOf"].([]any); ok && !slices.ContainsFunc(list, func(sub any) bool { return admitsNull(components, sub) }) {
		return false
	}
	if list, ok := node["oneOf"].([]any); ok {
		matches := 0
		for _, sub := range list {
			if admitsNull(components, sub) {
				matches++
			}
		}
		if matches != 1 {
			return false
		}
	}
	if not, ok := node["not"]; ok && admitsNull(components, not) {
		return false
	}
	return true
}

// resolveSchema follows `$ref`s to components.schemas and returns the schema and, when it came through
// a reference, the referenced schema's name.
func resolveSchema(components map[string]any, s any) (map[string]any, string) {
	node, _ := s.(map[string]any)
	name := ""
	for range 10 {
		ref, ok := node["$ref"].(string)
		if !ok {
			break
		}
		name = strings.TrimPrefix(ref, "#/components/schemas/")
		schemas, _ := components["schemas"].(map[string]any)
		node, _ = schemas[name].(map[string]any)
	}
	return node, name
}

// lookupRef reads a local reference ("#/components/requestBodies/Ignored") in doc.
func lookupRef(doc map[string]any, ref string) any {
	var cur any = doc
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[tok]
	}
	return cur
}

// ProgramUpdate writes out, nullable, the rules of schemas it cannot reference (a `$ref` cannot be made
// nullable): they must stay the same rules.
func TestProgramUpdateKeepsSharedRules(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	props := schemas["ProgramUpdate"].(map[string]any)["properties"].(map[string]any)
	for prop, name := range map[string]string{"domain": "DomainInput", "lead_auth": "LeadAuth", "commission_type": "CommissionType",
		"commission_rate": "CommissionRateInput", "commission_approval": "CommissionApproval"} {
		copied, shared := props[prop].(map[string]any), schemas[name].(map[string]any)
		if enum, ok := shared["enum"].([]any); ok {
			shared = maps.Clone(shared)
			shared["enum"] = append(slices.Clone(enum), nil)
		}
		for _, k := range []string{"type", "format", "pattern", "enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength"} {
			if !reflect.DeepEqual(copied[k], shared[k]) {
				t.Errorf("ProgramUpdate.%s %s = %v, want %s's %v", prop, k, copied[k], name, shared[k])
			}
		}
	}
}
