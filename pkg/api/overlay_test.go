package api_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/route"
)

// The server's generated code receives the raw JSON of the request bodies whose operations check their
// request themselves (x-reftrack-validation: handler), so that a wrong field gets its documented message:
// the overlay of gen/server says which, and must agree with the spec.
//
// typedBodies are handler-checked bodies that decode into their generated type all the same.
var typedBodies = map[string]string{
	"DevIdTokenRequest": "two optional strings; the development issuer checks the email itself",
}

func TestOverlayMatchesHandlerValidation(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Spec() // shared, read only: a parse of its own costs ~0.4 s of CPU under the race detector
	if err != nil {
		t.Fatal(err)
	}
	table, err := route.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range table.All() {
		if !p.HandlerValidates || p.Operation.RequestBody == nil {
			continue
		}
		if mt := p.Operation.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			if name := strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/"); typedBodies[name] == "" {
				want = append(want, name)
			}
		}
	}
	raw, err := os.ReadFile("../../gen/server/overlay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var overlay struct {
		Actions []struct {
			Target string         `yaml:"target"`
			Update map[string]any `yaml:"update"`
		} `yaml:"actions"`
	}
	if err := yaml.Unmarshal(raw, &overlay); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range overlay.Actions {
		if a.Update["x-go-type"] != "json.RawMessage" {
			t.Errorf("overlay action on %s does more than make the body raw: %v", a.Target, a.Update)
		}
		got = append(got, strings.TrimPrefix(a.Target, "$.components.schemas."))
	}
	slices.Sort(want)
	want = slices.Compact(want) // a schema two operations share (the webhook and its alias) is one overlay action
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Errorf("overlay makes raw %v; the spec's handler-validated JSON bodies are %v", got, want)
	}
}
