package webui

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/commission"
)

// The words the pages show for the API's enum values (a commission's status, a customer's, a payout's…)
// are the spec's: each such enum carries x-reftrack-labels, its value → words, so the dashboard and the
// portal say the same thing and neither copies the list. A named schema's set is its name; an inline
// enum names its set with x-reftrack-label-set.
const (
	labelsExtension   = "x-reftrack-labels"
	labelSetExtension = "x-reftrack-label-set"
)

// Labels are the spec's label sets by name, each in its enum's order.
type Labels map[string][]Label

// Label is one enum value's words; in JSON, the pair [value, words].
type Label struct{ Value, Words string }

// MarshalJSON writes the pair.
func (l Label) MarshalJSON() ([]byte, error) { return json.Marshal([2]string{l.Value, l.Words}) }

// Words are the value's words in the set ("" when it has none).
func (ls Labels) Words(set, value string) string {
	for _, l := range ls[set] {
		if l.Value == value {
			return l.Words
		}
	}
	return ""
}

// LabelsOf reads every label set of doc's component schemas (their properties and items too) and checks
// that each names every value of its enum, and nothing else.
func LabelsOf(doc *openapi3.T) (Labels, error) {
	out := Labels{}
	names := make([]string, 0, len(doc.Components.Schemas))
	for name := range doc.Components.Schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[*openapi3.Schema]bool{}
	var walk func(name string, s *openapi3.Schema) error
	walk = func(name string, s *openapi3.Schema) error {
		if s == nil || seen[s] {
			return nil
		}
		seen[s] = true
		if raw, ok := s.Extensions[labelsExtension]; ok {
			set := name
			if n, ok := s.Extensions[labelSetExtension].(string); ok {
				set = n
			}
			if set == "" {
				return fmt.Errorf("an inline enum's %s has no %s", labelsExtension, labelSetExtension)
			}
			labels, err := labelSet(raw, s.Enum)
			if err != nil {
				return fmt.Errorf("%s: %w", set, err)
			}
			if _, dup := out[set]; dup {
				return fmt.Errorf("two label sets named %s", set)
			}
			out[set] = labels
		}
		for _, p := range s.Properties {
			if p != nil && p.Ref == "" {
				if err := walk("", p.Value); err != nil {
					return err
				}
			}
		}
		if s.Items != nil && s.Items.Ref == "" {
			return walk("", s.Items.Value)
		}
		return nil
	}
	for _, name := range names {
		if err := walk(name, doc.Components.Schemas[name].Value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// labelSet reads one x-reftrack-labels, which must label exactly the enum's values (null aside), in the
// enum's order.
func labelSet(raw any, enum []any) ([]Label, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", labelsExtension)
	}
	labels := map[string]string{}
	for k, v := range m {
		words, ok := v.(string)
		if !ok || words == "" {
			return nil, fmt.Errorf("the label of %q is not words", k)
		}
		labels[k] = words
	}
	var values []string
	var out []Label
	for _, e := range enum {
		if v, ok := e.(string); ok {
			values = append(values, v)
			words, ok := labels[v]
			if !ok {
				return nil, fmt.Errorf("no label for %q", v)
			}
			out = append(out, Label{Value: v, Words: words})
		}
	}
	for k := range labels {
		if !slices.Contains(values, k) {
			return nil, fmt.Errorf("a label for %q, which the enum does not have", k)
		}
	}
	return out, nil
}

// labelsScript declares, for the pages' scripts, LABELS (the embedded spec's label sets) and EXPONENT
// (every ISO 4217 currency's minor unit, as the ledger counts them).
func labelsScript() ([]byte, error) {
	doc, err := openapi.Spec()
	if err != nil {
		return nil, err
	}
	labels, err := LabelsOf(doc)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(labels)
	if err != nil {
		return nil, err
	}
	e, err := json.Marshal(commission.Exponents())
	if err != nil {
		return nil, err
	}
	out := append([]byte("\n  // The words for the API's enum values, from the spec's x-reftrack-labels (pkg/webui/labels.go).\n  var LABELS = "), b...)
	out = append(append(append(out, ";\n  // Each ISO 4217 currency's minor-unit digits (pkg/commission).\n  var EXPONENT = "...), e...), ";\n"...)
	return out, nil
}
