package openapi_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reftrack/reftrack/openapi"
)

// Every request body and every documented answer with a body shows an example (Redoc renders them),
// and every example fits its schema: an example that drifts from the schema fails the build.
func TestExamplesCoverAndFit(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := checkExamples(doc)
	for _, p := range c.problems {
		t.Error(p)
	}
	t.Logf("%d operations: %d request bodies, %d answers with a body, %d examples validated",
		c.operations, c.requestBodies, c.responses, c.examples)
	// A walk that found little has walked the wrong thing (the counts of the document as of issue 31).
	if c.operations < 100 || c.requestBodies < 40 || c.responses < 700 || c.examples < c.requestBodies+c.responses {
		t.Errorf("walked %d operations, %d request bodies, %d answers with a body and %d examples: has the document's shape changed?",
			c.operations, c.requestBodies, c.responses, c.examples)
	}
}

// The check above can fail: an example that does not fit its schema, and a body without an example,
// are both reported.
func TestExamplesCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background()) // a copy of its own to break
	if err != nil {
		t.Fatal(err)
	}
	click := doc.Paths.Value("/api/v1/track/click").Post
	click.RequestBody.Value.Content.Get("application/json").Example = map[string]any{"affiliate_url": 42}
	ok := click.Responses.Status(200).Value.Content.Get("application/json")
	ok.Example, ok.Examples = nil, nil
	problems := checkExamples(doc).problems
	for _, want := range []string{
		"POST /api/v1/track/click request body application/json: example does not fit its schema",
		"POST /api/v1/track/click 200 application/json: no example",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("no problem starting %q among:\n%s", want, strings.Join(problems, "\n"))
		}
	}
}

// exampleCheck is what checkExamples found.
type exampleCheck struct {
	operations, requestBodies, responses, examples int
	problems                                       []string
}

// checkExamples walks every operation's request body and answers: each media type with a body must
// carry `example` or `examples`, and each example must fit the media type's schema, read as the server's
// validators read requests and answers (formats checked, email and uri included).
func checkExamples(doc *openapi3.T) exampleCheck {
	var c exampleCheck
	paths := doc.Paths.Map()
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		ops := paths[path].Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			c.operations++
			at := method + " " + path
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range slices.Sorted(maps.Keys(op.RequestBody.Value.Content)) {
					c.requestBodies++
					c.media(at+" request body "+mt, op.RequestBody.Value.Content[mt], openapi3.VisitAsRequest())
				}
			}
			responses := op.Responses.Map()
			for _, status := range slices.Sorted(maps.Keys(responses)) {
				r := responses[status].Value
				for _, mt := range slices.Sorted(maps.Keys(r.Content)) {
					c.responses++
					c.media(at+" "+status+" "+mt, r.Content[mt], openapi3.VisitAsResponse())
				}
			}
		}
	}
	return c
}

// media checks one media type's examples.
func (c *exampleCheck) media(at string, m *openapi3.MediaType, as openapi3.SchemaValidationOption) {
	type example struct {
		name  string
		value any
	}
	var all []example
	if m.Example != nil {
		all = append(all, example{"example", m.Example})
	}
	for _, name := range slices.Sorted(maps.Keys(m.Examples)) {
		ref := m.Examples[name]
		if ref == nil || ref.Value == nil || ref.Value.Value == nil {
			c.problems = append(c.problems, fmt.Sprintf("%s: examples.%s has no value", at, name))
			continue
		}
		all = append(all, example{"examples." + name, ref.Value.Value})
	}
	if len(all) == 0 {
		c.problems = append(c.problems, at+": no example")
		return
	}
	if m.Schema == nil || m.Schema.Value == nil {
		c.problems = append(c.problems, at+": examples but no schema to check them against")
		return
	}
	for _, ex := range all {
		c.examples++
		if err := m.Schema.Value.VisitJSON(ex.value, as, openapi3.MultiErrors(),
			openapi3.WithStringFormatValidator("email", openapi3.NewCallbackValidator(validEmail)),
			openapi3.WithStringFormatValidator("uri", openapi3.NewCallbackValidator(absoluteURI)),
		); err != nil {
			what := "example"
			if ex.name != "example" {
				what = ex.name
			}
			c.problems = append(c.problems, fmt.Sprintf("%s: %s does not fit its schema: %v", at, what, err))
		}
	}
}

// validEmail is the server's reading of format email (pkg/api's contract): a bare ASCII address that
// net/mail parses.
func validEmail(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !isASCII(s) {
		return errors.New("not an email address")
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// absoluteURI is format uri as JSON Schema reads it: an absolute URI, with a scheme.
func absoluteURI(s string) error {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return errors.New("not an absolute URI")
	}
	return nil
}

// Every path parameter has an example that fits its schema, so that testers driven by examples (Dredd)
// can build a request for every operation.
func TestPathParametersHaveExamples(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	operations, problems := checkPathExamples(doc)
	for _, p := range problems {
		t.Error(p)
	}
	// As of issue 43, 65 operations have path parameters: a walk that found few walked the wrong thing.
	if operations < 60 {
		t.Errorf("%d operations with path parameters: has the document's shape changed?", operations)
	}
}

// The check above can fail: a shared parameter without its example is reported at each operation, an
// inline one with an example of the wrong type at its own.
func TestPathExamplesCheckCatchesGaps(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Load(context.Background()) // a copy of its own to break
	if err != nil {
		t.Fatal(err)
	}
	doc.Components.Parameters["EndpointId"].Value.Example = nil
	doc.Paths.Value("/api/v1/links/{linkId}").Parameters.GetByInAndName(openapi3.ParameterInPath, "linkId").Example = "fifteen"
	_, problems := checkPathExamples(doc)
	for _, want := range []string{
		"POST /api/v1/webhook-endpoints/{endpointId}/recover: path parameter endpointId has no example",
		"PATCH /api/v1/links/{linkId}: path parameter linkId: example does not fit its schema",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, want) }) {
			t.Errorf("no problem starting %q among:\n%s", want, strings.Join(problems, "\n"))
		}
	}
}

// checkPathExamples walks every operation's path parameters (its path's and its own): each must carry a
// parameter-level `example` (what Dredd reads) that fits its schema. It returns how many operations have
// path parameters, and the problems.
func checkPathExamples(doc *openapi3.T) (operations int, problems []string) {
	paths := doc.Paths.Map()
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := paths[path]
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			found := false
			for _, ref := range append(slices.Clone(item.Parameters), ops[method].Parameters...) {
				p := ref.Value
				if p == nil || p.In != openapi3.ParameterInPath {
					continue
				}
				found = true
				at := fmt.Sprintf("%s %s: path parameter %s", method, path, p.Name)
				switch {
				case p.Example == nil:
					problems = append(problems, at+" has no example")
				case p.Schema == nil || p.Schema.Value == nil:
					problems = append(problems, at+": no schema to check its example against")
				default:
					if err := p.Schema.Value.VisitJSON(p.Example); err != nil {
						problems = append(problems, fmt.Sprintf("%s: example does not fit its schema: %v", at, err))
					}
				}
			}
			if found {
				operations++
			}
		}
	}
	return operations, problems
}
