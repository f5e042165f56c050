package webui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/webui"
)

// The spec's label sets: each names every value of its enum in the enum's order; an inline enum's set is
// named by x-reftrack-label-set.
func TestLabelsOfTheSpec(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Spec()
	if err != nil {
		t.Fatal(err)
	}
	labels, err := webui.LabelsOf(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"CommissionStatus", "PayoutStatus", "CustomerStatus", "PartnerStatus", "InvitationStatus",
		"ReadinessState", "WebhookDeliveryStatus"} {
		if len(labels[set]) == 0 {
			t.Errorf("no label set %s", set)
		}
	}
	enum := doc.Components.Schemas["CommissionStatus"].Value.Enum
	if len(labels["CommissionStatus"]) != len(enum) {
		t.Fatalf("CommissionStatus labels %v for the enum %v", labels["CommissionStatus"], enum)
	}
	for i, l := range labels["CommissionStatus"] {
		if l.Value != enum[i] {
			t.Errorf("label %d is of %q, the enum's value there is %v", i, l.Value, enum[i])
		}
	}
	for key, want := range map[[2]string]string{
		{"CommissionStatus", "reversed"}: "refunded", {"CommissionStatus", "in_payout"}: "in payout",
		{"CustomerStatus", "converted"}: "bought", {"ReadinessState", "live_verified"}: "Live, verified",
	} {
		if got := labels.Words(key[0], key[1]); got != want {
			t.Errorf("%s %s = %q, want %q", key[0], key[1], got, want)
		}
	}
}

// A set that misses a value, labels one the enum lacks, or has no name is refused.
func TestLabelsOfRefusesAnIncompleteSet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"missing", `S: {type: string, enum: [a, b], x-reftrack-labels: {a: A}}`, `S: no label for "b"`},
		{"extra", `S: {type: string, enum: [a], x-reftrack-labels: {a: A, c: C}}`, `S: a label for "c", which the enum does not have`},
		{"empty words", `S: {type: string, enum: [a], x-reftrack-labels: {a: ''}}`, `S: the label of "a" is not words`},
		{"inline, unnamed", `O: {type: object, properties: {s: {type: string, enum: [a], x-reftrack-labels: {a: A}}}}`, `has no x-reftrack-label-set`},
		{"twice", `O: {type: object, properties: {s: {type: string, enum: [a], x-reftrack-label-set: S, x-reftrack-labels: {a: A}}}}
    S: {type: string, enum: [a], x-reftrack-labels: {a: A}}`, `two label sets named S`},
	} {
		doc, err := openapi3.NewLoader().LoadFromData([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    " + tc.spec + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := webui.LabelsOf(doc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Both pages' scripts carry the spec's labels (LABELS) and copy no list of their own.
func TestScriptsCarryTheSpecsLabels(t *testing.T) {
	t.Parallel()
	for _, js := range pageScripts(t) {
		name, body := js.name, string(js.body)
		if !strings.Contains(body, `var LABELS = {`) || !strings.Contains(body, `["reversed","refunded"]`) {
			t.Errorf("%s has no LABELS from the spec", name)
		}
		// A status's words written into a script would be a second list: "refunded" and "in payout" are the
		// spec's words for reversed and in_payout, and appear in the scripts only there.
		for _, words := range []string{`"refunded"`, `"in payout"`, `"signed up"`, `"Integration verified"`} {
			if n := strings.Count(body, words); n != 1 {
				t.Errorf("%s has %s %d times: a list of labels besides the spec's", name, words, n)
			}
		}
	}
}
