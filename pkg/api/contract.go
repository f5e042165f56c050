package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/api/internal/request"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/apierr"
)

// contract enforces the spec on requests: body size, JSON bodies, and schema validation, as each
// route's policy says.
type contract struct {
	routes map[*route.Policy]*routers.Route // kin-openapi's view of each operation, for validation
	// query is the declared query parameters whose values must be clean text, of each operation that
	// answers 400.
	query map[*route.Policy][]string
	// segments is the string path parameters of each operation: a value that cannot name anything
	// (cleanSegment) answers 404 before a handler looks it up.
	segments map[*route.Policy][]string
	opts     *openapi3filter.Options
}

func newContract(doc *openapi3.T, table *route.Table) *contract {
	c := &contract{
		routes:   map[*route.Policy]*routers.Route{},
		query:    map[*route.Policy][]string{},
		segments: map[*route.Policy][]string{},
		opts: &openapi3filter.Options{
			AuthenticationFunc:  openapi3filter.NoopAuthenticationFunc, // the authenticate middleware and handlers do
			SkipSettingDefaults: true,                                  // handlers apply defaults
			SchemaValidationOptions: []openapi3.SchemaValidationOption{
				// kin-openapi leaves "email" unchecked; the generated models refuse what net/mail cannot
				// parse, so the validator must refuse it first, with a schema message.
				openapi3.WithStringFormatValidator("email", openapi3.NewCallbackValidator(validEmail)),
			},
		},
	}
	for _, p := range table.All() {
		c.routes[p] = &routers.Route{Spec: doc, Path: p.Path, PathItem: p.PathItem, Method: p.Method, Operation: p.Operation}
		for _, params := range []openapi3.Parameters{p.PathItem.Parameters, p.Operation.Parameters} {
			for _, param := range params {
				// Integer parameters need no check: their binder refuses anything but digits (400).
				if v := param.Value; v != nil && v.In == openapi3.ParameterInPath && v.Schema != nil && v.Schema.Value.Type.Is("string") {
					c.segments[p] = append(c.segments[p], v.Name)
				}
			}
		}
		if p.Operation.Responses.Status(http.StatusBadRequest) == nil {
			// An operation that never answers 400 (cli/status, whose program_id is only compared with
			// the key's) keeps its contract: its handler stores no query text.
			continue
		}
		for _, params := range []openapi3.Parameters{p.PathItem.Parameters, p.Operation.Parameters} {
			for _, param := range params {
				if param.Value != nil && param.Value.In == openapi3.ParameterInQuery {
					c.query[p] = append(c.query[p], param.Value.Name)
				}
			}
		}
	}
	return c
}

// validEmail accepts a bare address (no display name) that net/mail parses, in ASCII: JSON Schema's
// "email" is RFC 5321's mailbox (internationalised addresses are "idn-email"), and strict validators of
// the spec hold clients to that.
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

func (k *contract) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		policy := route.FromContext(c.Request().Context())
		kr, ok := k.routes[policy]
		if !ok {
			return next(c) // not a route of the spec: echo answers 404/405
		}
		if err := checkSegments(c, k.segments[policy]); err != nil {
			return err
		}
		if err := checkQuery(c.Request().URL.RawQuery, k.query[policy]); err != nil {
			return err
		}
		if rb := policy.Operation.RequestBody; rb != nil {
			var err error
			switch {
			case rb.Value.Content.Get(echo.MIMEApplicationJSON) != nil:
				err = k.readBody(c, policy.Body, policy.HandlerValidates)
			case rb.Value.Content.Get(echo.MIMEApplicationForm) != nil:
				err = readForm(c, policy.Body)
			}
			if err != nil {
				return err
			}
		}
		if policy.HandlerValidates {
			return next(c)
		}
		req := c.Request() // after readBody, which replaces it
		params := make(map[string]string, len(c.ParamNames()))
		for i, name := range c.ParamNames() {
			params[name] = c.ParamValues()[i]
		}
		err := openapi3filter.ValidateRequest(req.Context(), &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      kr,
			Options:    k.opts,
		})
		if err != nil {
			return apierr.Invalid(describeValidationError(err)).WithCause(err)
		}
		return next(c)
	}
}

// readBody enforces the size limit, checks the JSON (valid, not nested too deeply, no NUL characters),
// keeps the exact bytes in the request meta (for a signature check, and the request an Idempotency-Key
// names) and, unless the handler needs the exact bytes as its body, normalises it: a body that parses as
// JSON is treated as JSON whatever its Content-Type says (curl -d sends form encoding), and members whose
// value is null are dropped, because the interface counts a JSON null as absent. handlerValidates: the
// handler checks the body itself (x-reftrack-validation: handler).
func (k *contract) readBody(c echo.Context, policy route.Body, handlerValidates bool) error {
	req := c.Request()
	raw, err := readLimited(req, policy.MaxBytes)
	if err != nil || raw == nil {
		return err
	}
	body := raw
	if len(bytes.TrimSpace(raw)) > 0 {
		switch {
		case policy.Raw && !json.Valid(raw):
			return apierr.Invalid("Request body must be valid JSON")
		case !policy.Raw:
			if body, err = normaliseJSON(raw); err != nil {
				return apierr.Invalid("Request body must be valid JSON").WithCause(err)
			}
		}
		if err := checkJSON(raw); err != nil {
			return err
		}
		if mt, _, _ := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType)); mt != echo.MIMEApplicationJSON {
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		}
		if handlerValidates && !policy.Raw && !isObject(body) {
			// A handler-checked body decodes into its generated struct, which only an object fits: the
			// handler refuses the rest itself (request.ObjectBody), after the checks that come first.
			body = nil
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	request.From(req.Context()).RawBody = raw
	return nil
}

// readLimited reads the whole body within limit (nil without a body).
func readLimited(req *http.Request, limit int64) ([]byte, error) {
	if req.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	req.Body.Close()
	if err != nil {
		return nil, apierr.Invalid("Could not read the request body").WithCause(err)
	}
	if int64(len(raw)) > limit {
		return nil, tooLarge(limit)
	}
	return raw, nil
}

// readForm reads a form body within the size limit, strictly (parseForm), and leaves the fields where
// the generated binder reads them, so that net/http's own parsing (which fails on malformed bodies and
// multipart, or silently drops what it cannot read) never runs. Query parameters are not form fields.
func readForm(c echo.Context, policy route.Body) error {
	req := c.Request()
	raw, err := readLimited(req, policy.MaxBytes)
	if err != nil {
		return err
	}
	if ct := req.Header.Get(echo.HeaderContentType); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != echo.MIMEApplicationForm {
			return apierr.Invalid("Content-Type must be " + echo.MIMEApplicationForm)
		}
	} else {
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm) // what browsers send; curl may not
	}
	form, err := parseForm(string(raw))
	if err != nil {
		return err
	}
	req.PostForm, req.Form = form, url.Values{}
	for name, values := range form {
		req.Form[name] = append([]string{}, values...)
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	req.ContentLength = int64(len(raw))
	return nil
}

func tooLarge(limit int64) *apierr.Error {
	return apierr.New(apierr.KindPayloadTooLarge,
		fmt.Sprintf("Request body is larger than the limit of %d KiB", limit>>10))
}

// isObject reports whether a JSON text is an object.
func isObject(body []byte) bool {
	body = bytes.TrimSpace(body)
	return len(body) > 0 && body[0] == '{'
}

// normaliseJSON checks raw is one JSON value and drops object members whose value is null. It returns
// raw itself when nothing was dropped, so numbers and strings reach the handler exactly as sent.
func normaliseJSON(raw []byte) ([]byte, error) {
	if !bytes.Contains(raw, []byte("null")) {
		// Nothing to drop: checking validity is enough, and much cheaper than decoding (the click route
		// is the hot path).
		if !json.Valid(raw) {
			return nil, errors.New("invalid JSON")
		}
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	if !dropNulls(v) {
		return raw, nil
	}
	return json.Marshal(v)
}

// dropNulls removes null members from every object in v and reports whether it removed any.
func dropNulls(v any) bool {
	dropped := false
	switch t := v.(type) {
	case map[string]any:
		for k, m := range t {
			if m == nil {
				delete(t, k)
				dropped = true
				continue
			}
			dropped = dropNulls(m) || dropped
		}
	case []any:
		for _, m := range t {
			dropped = dropNulls(m) || dropped
		}
	}
	return dropped
}

// describeValidationError turns a kin-openapi request error into a message a client can act on.
func describeValidationError(err error) string {
	var reqErr *openapi3filter.RequestError
	if !errors.As(err, &reqErr) {
		return "Invalid request"
	}
	reason := reqErr.Reason
	var schemaErr *openapi3.SchemaError
	if errors.As(reqErr.Err, &schemaErr) {
		reason = schemaReason(schemaErr)
		if ptr := schemaErr.JSONPointer(); len(ptr) > 0 && reqErr.RequestBody != nil {
			reason = fmt.Sprintf("%s: %s", strings.Join(ptr, "."), reason)
		}
	} else if reason == "" && reqErr.Err != nil {
		reason = reqErr.Err.Error()
	}
	switch {
	case reqErr.Parameter != nil:
		return fmt.Sprintf("Invalid %s parameter %s: %s", reqErr.Parameter.In, reqErr.Parameter.Name, reason)
	case reqErr.RequestBody != nil:
		return fmt.Sprintf("Invalid request body: %s", reason)
	}
	return "Invalid request: " + reason
}

// Formats a person can be told how to write (kin-openapi's own reasons quote the regular expression).
var formatReasons = map[string]string{
	"date-time": "must be an ISO 8601 date and time with a time zone, such as 2026-01-31T09:30:00Z",
	"date":      "must be a date in the form YYYY-MM-DD, such as 2026-01-31",
	"email":     "must be an email address such as ana@example.com",
	"uri":       "must be an absolute URL such as https://shop.example.com/",
}

// schemaReason words a schema error for people: a string format names the accepted form, a pattern
// shows the schema's example; no message quotes a regular expression.
func schemaReason(e *openapi3.SchemaError) string {
	if e.Schema == nil {
		return e.Reason
	}
	switch e.SchemaField {
	case "format":
		if r, ok := formatReasons[e.Schema.Format]; ok {
			return r
		}
		if e.Schema.Type != nil && e.Schema.Type.Is("string") {
			return "must be a valid " + e.Schema.Format
		}
	case "pattern":
		if e.Schema.Example != nil {
			return fmt.Sprintf("is not in the accepted form, such as %v", e.Schema.Example)
		}
		return "is not in the accepted form"
	}
	return e.Reason
}
