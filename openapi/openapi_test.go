package openapi_test

import (
	"context"
	"fmt"
	"slices"
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
