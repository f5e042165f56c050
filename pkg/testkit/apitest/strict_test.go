package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/reftrack/reftrack/openapi"
)

// saleSpec is a small spec with a sale route whose answer's commission is nullable in the form given.
const saleSpec = `openapi: 3.0.3
info: {title: strict check, version: "1"}
paths:
  /sale:
    post:
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [amount_cents]
              properties:
                transaction_id: {type: string}
                amount_cents: {type: integer, format: int64, minimum: 1}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Sale'}
        '400': {$ref: '#/components/responses/Refused'}
  /ping:
    post:
      responses:
        '204': {description: ok}
        '400': {$ref: '#/components/responses/Refused'}
components:
  responses:
    Refused:
      description: refused
      content:
        application/json:
          schema: {type: object}
  schemas:
    Commission:
      type: object
      %s
      required: [id, amount_cents]
      properties:
        id: {type: integer, format: int64}
        amount_cents: {type: integer, format: int64}
    Sale:
      type: object
      required: [sale_id, commission]
      properties:
        sale_id: {type: integer, format: int64}
        commission:
%s
`

// The form the spec used before: nullable beside a type, the object through allOf.
const oldCommission = `          type: object
          nullable: true
          allOf:
            - $ref: '#/components/schemas/Commission'`

// The form it uses now: nullable on the referenced schema, beside its type, and the $ref alone.
const newCommission = `          $ref: '#/components/schemas/Commission'`

// exchange is a validating transport over a fake server that answers status and body to every request.
type exchange struct {
	transport *validatingTransport
	mu        sync.Mutex
	reported  []error
}

func newExchange(t *testing.T, spec string, status int, body string) *exchange {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := doc.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var document map[string]any
	if err := json.Unmarshal(raw, &document); err != nil {
		t.Fatal(err)
	}
	strict, err := newStrictSpec(document)
	if err != nil {
		t.Fatal(err)
	}
	x := &exchange{}
	server := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(body))}, nil
	})
	x.transport = &validatingTransport{base: server, router: router, doc: doc, strict: strict, report: func(err error) {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.reported = append(x.reported, err)
	}}
	return x
}

// send sends body to path and returns what the transport reported.
func (x *exchange) send(t *testing.T, path, body string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://reftrack.test"+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := x.transport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	x.mu.Lock()
	defer x.mu.Unlock()
	return errors.Join(x.reported...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func specWith(componentNullable, property string) string {
	return strings.Replace(strings.Replace(saleSpec, "%s", componentNullable, 1), "%s", property, 1)
}

func TestStrictCheckReadsNullableAsOAS303Does(t *testing.T) {
	t.Parallel()
	const nullCommission = `{"sale_id": 1, "commission": null}`
	const request = `{"transaction_id": "in_1", "amount_cents": 4900}`

	// kin-openapi alone accepts null here; a strict reader (Prism, JSON Schema) does not, since the allOf
	// still applies to null.
	old := newExchange(t, specWith("", oldCommission), http.StatusOK, nullCommission)
	err := old.send(t, "/sale", request)
	if err == nil || !strings.Contains(err.Error(), "strict JSON Schema check") {
		t.Errorf("old form: commission null was not reported by the strict check: %v", err)
	}

	for name, body := range map[string]string{
		"null":   nullCommission,
		"object": `{"sale_id": 1, "commission": {"id": 7, "amount_cents": 980}}`,
	} {
		x := newExchange(t, specWith("nullable: true", newCommission), http.StatusOK, body)
		if err := x.send(t, "/sale", request); err != nil {
			t.Errorf("new form, commission %s: %v", name, err)
		}
	}

	// The new form still refuses what does not fit.
	x := newExchange(t, specWith("nullable: true", newCommission), http.StatusOK, `{"sale_id": 1, "commission": {"id": "7"}}`)
	if err := x.send(t, "/sale", request); err == nil {
		t.Error("new form: a commission of the wrong shape was not reported")
	}
}

func TestStrictCheckReportsForbiddenRequestsAccepted(t *testing.T) {
	t.Parallel()
	spec := specWith("nullable: true", newCommission)
	const answer = `{"sale_id": 1, "commission": null}`
	for _, c := range []struct {
		name, path, body, want string
	}{
		{"body misses a required member", "/sale", `{"transaction_id": "in_1"}`, "missing property 'amount_cents'"},
		{"member of the wrong type", "/sale", `{"amount_cents": "4900"}`, "got string, want integer"},
		{"member out of range", "/sale", `{"amount_cents": 0}`, "minimum"},
		{"required body missing", "/sale", ``, "requires a request body"},
		{"body the operation does not declare", "/ping", `{}`, "declares none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			status := http.StatusOK
			if c.path == "/ping" {
				status = http.StatusNoContent
			}
			body := answer
			if status == http.StatusNoContent {
				body = ""
			}
			// Accepted (2xx): a disagreement.
			err := newExchange(t, spec, status, body).send(t, c.path, c.body)
			if err == nil || !strings.Contains(err.Error(), "request the spec forbids") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("accepted: got %v, want a forbidden-request report mentioning %q", err, c.want)
			}
			// Refused (4xx): the test sent bad input on purpose, nothing to report about the request.
			if err := newExchange(t, spec, http.StatusBadRequest, `{}`).send(t, c.path, c.body); err != nil {
				t.Errorf("refused: reported %v", err)
			}
		})
	}
	// A request that fits, accepted: nothing to report.
	if err := newExchange(t, spec, http.StatusOK, answer).send(t, "/sale", `{"amount_cents": 4900}`); err != nil {
		t.Errorf("fitting request: %v", err)
	}
}

// The strict reading of the published spec compiles every response and request schema it has.
func TestStrictSpecCompilesThePublishedSpec(t *testing.T) {
	t.Parallel()
	document, err := openapi.Document()
	if err != nil {
		t.Fatal(err)
	}
	s, err := newStrictSpec(document)
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := s.doc["paths"].(map[string]any)
	n := 0
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			responses, _ := lookup(op, "/responses").(map[string]any)
			for code := range responses {
				ptr, _ := s.resolve("/paths/" + escapePointer(path) + "/" + method + "/responses/" + escapePointer(code))
				content, _ := lookup(s.doc, ptr+"/content").(map[string]any)
				for mt := range content {
					if lookup(s.doc, ptr+"/content/"+escapePointer(mt)+"/schema") == nil {
						continue
					}
					if _, err := s.schema(ptr + "/content/" + escapePointer(mt) + "/schema"); err != nil {
						t.Errorf("%s %s %s: %v", method, path, code, err)
					}
					n++
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("compiled only %d response schemas", n)
	}
}
