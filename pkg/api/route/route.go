// Package route reads each operation's policy from the OpenAPI document's x-reftrack-* extensions, once
// at start, into the table the HTTP middleware and the error handler consult: the credential it takes,
// the envelope of its errors, its rate limit, CORS, 500 wording and request-id quirks, and its body limit.
// The spec is the one place these rules are written; nothing here is keyed by path.
package route

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reftrack/reftrack/pkg/apierr"
)

// The extensions an operation carries.
const (
	ExtAuth       = "x-reftrack-auth"
	ExtEnvelope   = "x-reftrack-envelope"
	ExtLimit      = "x-reftrack-limit"
	ExtCORS       = "x-reftrack-cors"
	ExtErrors     = "x-reftrack-errors"
	ExtBody       = "x-reftrack-body"
	ExtValidation = "x-reftrack-validation"
)

// DefaultMaxBodyBytes is the request body limit of an operation that states none.
const DefaultMaxBodyBytes = 64 << 10

// Auth is the credential an operation takes (x-reftrack-auth).
type Auth string

// Credentials.
const (
	// None: anonymous.
	None Auth = "none"
	// ProgramKey: a Bearer program API key, required; the middleware authenticates it before the handler.
	ProgramKey Auth = "program-key"
	// OptionalProgramKey: a key is used when one is sent; the handler asks for it.
	OptionalProgramKey Auth = "optional-program-key"
	// Account: a Bearer account login token, required; the middleware authenticates it.
	Account Auth = "account"
	// AccountOrSession: a Bearer account login token or the dashboard session cookie (with the CSRF
	// token on changes), required; the middleware authenticates it.
	AccountOrSession Auth = "account-or-session"
	// Session: the dashboard session cookie, which the page's handler reads itself.
	Session Auth = "session"
	// PartnerSession: the partner portal's session cookie (with the CSRF token on changes), required; the
	// middleware authenticates the person.
	PartnerSession Auth = "partner-session"
	// WebhookSignature: the payment processor's signature over the raw body, checked by the handler.
	WebhookSignature Auth = "webhook-signature"
)

var auths = []Auth{None, ProgramKey, OptionalProgramKey, Account, AccountOrSession, Session, PartnerSession, WebhookSignature}

// Envelope is which envelope the operation's errors use (x-reftrack-envelope).
type Envelope struct {
	// Errors is the envelope of the operation's own errors.
	Errors apierr.Envelope
	// Typed lists the kinds answered in the typed envelope whatever Errors says.
	Typed []apierr.Kind
}

// For is the envelope an error of kind k is answered in.
func (e Envelope) For(k apierr.Kind) apierr.Envelope {
	if slices.Contains(e.Typed, k) {
		return apierr.Typed
	}
	return e.Errors
}

// Limit is the operation's rate limit (x-reftrack-limit).
type Limit struct {
	Bucket    string
	PerMinute int
	// ByKey counts per Bearer token (falling back to the client IP when none is sent), else per IP.
	ByKey bool
}

// CORS is what the operation's preflight answers (x-reftrack-cors).
type CORS struct {
	AllowMethods string
	AllowHeaders string
	MaxAge       int
}

// Errors is how the operation words errors it did not word itself (x-reftrack-errors).
type Errors struct {
	// Internal is the message of a 500 the handler did not word ("" keeps the generic one).
	Internal string
	// RetryAfter is the retry hint of a 5xx, in seconds (0: none).
	RetryAfter int
	// RequestIDIn5xx appends " (request_id: <id>)" to 5xx messages and puts the id in error.details.
	RequestIDIn5xx bool
	// NoRequestIDOn lists statuses answered without X-Request-ID.
	NoRequestIDOn []int
	// Wording names the interface's message set for errors many routes share ("" is the default set).
	Wording string
}

// Body is the request body's handling (x-reftrack-body).
type Body struct {
	MaxBytes int64
	// Raw keeps the exact bytes (signature checks): no JSON normalisation.
	Raw bool
}

// Policy is one operation's policy.
type Policy struct {
	OperationID string
	Method      string
	// Path is the spec's path (/api/v1/programs/{programId}); EchoPath the router's (/…/:programId).
	Path     string
	EchoPath string
	Auth     Auth
	Envelope Envelope
	Limit    *Limit
	CORS     *CORS
	Errors   Errors
	Body     Body
	// HandlerValidates: the handler checks the request itself (x-reftrack-validation: handler).
	HandlerValidates bool

	PathItem  *openapi3.PathItem
	Operation *openapi3.Operation
}

// Default is the policy of a request that matched no operation (echo's own 404 and 405).
var Default = &Policy{Auth: None, Envelope: Envelope{Errors: apierr.Platform}, Body: Body{MaxBytes: DefaultMaxBodyBytes}}

// DefaultPage is Default for an address under the browser pages' paths (PagePath): a person who mistypes
// one gets a page, not JSON.
var DefaultPage = &Policy{Auth: None, Envelope: Envelope{Errors: apierr.Page}, Body: Body{MaxBytes: DefaultMaxBodyBytes}}

// pagePrefixes are where the pages a person opens in a browser live.
var pagePrefixes = []string{"/dashboard/", "/partners/", "/p/", "/login/", "/dev/"}

// PagePath reports whether path is under the browser pages' paths.
func PagePath(path string) bool {
	for _, p := range pagePrefixes {
		if strings.HasPrefix(path, p) || path+"/" == p {
			return true
		}
	}
	return false
}

// Table holds every operation's policy.
type Table struct {
	byRoute map[string]*Policy // "METHOD /echo/:path"
	all     []*Policy
	// byPath is, per path, the policy a request with a method the path does not serve (405) answers by:
	// the path's limit, CORS and error rules, without its credential, body or validation.
	byPath, byPathOptions map[string]*Policy
}

// Load reads the policy of every operation of doc. An operation without x-reftrack-auth or
// x-reftrack-envelope, or with a value it does not understand, is an error naming it.
func Load(doc *openapi3.T) (*Table, error) {
	t := &Table{byRoute: map[string]*Policy{}}
	var errs []error
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			p, err := parse(method, path, item, op)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s (%s): %w", method, path, op.OperationID, err))
				continue
			}
			t.byRoute[method+" "+p.EchoPath] = p
			t.all = append(t.all, p)
		}
	}
	sort.Slice(t.all, func(i, j int) bool { return t.all[i].OperationID < t.all[j].OperationID })
	errs = append(errs, checkBuckets(t.all)...)
	t.byPath, t.byPathOptions = wrongMethodPolicies(t.all)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("route policy in the spec: %w", err)
	}
	return t, nil
}

// Lookup is the policy of the operation echo routed a request to.
func (t *Table) Lookup(method, echoPath string) (*Policy, bool) {
	p, ok := t.byRoute[method+" "+echoPath]
	return p, ok
}

// LookupWrongMethod is the policy of a request whose method echoPath does not serve (answered 405): the
// rules of the path's operation (its non-preflight one), without a credential, a body or validation, and
// uncounted when the method is OPTIONS (a preflight is never counted).
func (t *Table) LookupWrongMethod(method, echoPath string) (*Policy, bool) {
	if method == "OPTIONS" {
		p, ok := t.byPathOptions[echoPath]
		return p, ok
	}
	p, ok := t.byPath[echoPath]
	return p, ok
}

func wrongMethodPolicies(all []*Policy) (byPath, byPathOptions map[string]*Policy) {
	byPath, byPathOptions = map[string]*Policy{}, map[string]*Policy{}
	sorted := append([]*Policy{}, all...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Method < sorted[j].Method })
	for _, p := range sorted {
		if p.Method == "OPTIONS" || byPath[p.EchoPath] != nil {
			continue
		}
		w := *p
		w.Auth, w.HandlerValidates, w.Body = None, false, Body{MaxBytes: DefaultMaxBodyBytes}
		if w.Envelope.Errors == apierr.Page || w.Envelope.Errors == apierr.OAuth {
			w.Envelope = Envelope{Errors: apierr.Platform} // a 405 is router's answer, in the platform envelope
		}
		w.Operation, w.PathItem = nil, nil
		byPath[p.EchoPath] = &w
		o := w
		o.Limit = nil
		byPathOptions[p.EchoPath] = &o
	}
	return byPath, byPathOptions
}

// All is every operation's policy, by operation id.
func (t *Table) All() []*Policy { return t.all }

type policyKey struct{}

// NewContext stores the request's policy.
func NewContext(ctx context.Context, p *Policy) context.Context {
	return context.WithValue(ctx, policyKey{}, p)
}

// FromContext is the request's policy (Default outside an operation).
func FromContext(ctx context.Context) *Policy {
	if p, ok := ctx.Value(policyKey{}).(*Policy); ok {
		return p
	}
	return Default
}

// The extensions' shapes, as written in the spec. Unknown members are refused so that a typo fails at
// start instead of silently applying a default.
type (
	envelopeExt struct {
		Errors string   `json:"errors"`
		Typed  []string `json:"typed"`
	}
	limitExt struct {
		Bucket    string `json:"bucket"`
		PerMinute int    `json:"per-minute"`
		By        string `json:"by"`
	}
	corsExt struct {
		AllowMethods []string `json:"allow-methods"`
		AllowHeaders []string `json:"allow-headers"`
		MaxAge       int      `json:"max-age"`
	}
	errorsExt struct {
		Internal       string `json:"internal"`
		RetryAfter     int    `json:"retry-after"`
		RequestIDIn5xx bool   `json:"request-id-in-5xx"`
		NoRequestIDOn  []int  `json:"no-request-id-on"`
		Wording        string `json:"wording"`
	}
	bodyExt struct {
		MaxBytes int64 `json:"max-bytes"`
		Raw      bool  `json:"raw"`
	}
)

func parse(method, path string, item *openapi3.PathItem, op *openapi3.Operation) (*Policy, error) {
	p := &Policy{
		OperationID: op.OperationID, Method: method, Path: path, EchoPath: EchoPath(path),
		Body: Body{MaxBytes: DefaultMaxBodyBytes}, PathItem: item, Operation: op,
	}
	ext := op.Extensions
	for name := range ext {
		if strings.HasPrefix(name, "x-reftrack-") && !slices.Contains([]string{ExtAuth, ExtEnvelope, ExtLimit, ExtCORS, ExtErrors, ExtBody, ExtValidation}, name) {
			return nil, fmt.Errorf("unknown extension %s", name)
		}
	}

	auth, ok := ext[ExtAuth].(string)
	if !ok || !slices.Contains(auths, Auth(auth)) {
		return nil, fmt.Errorf("%s must be one of %v, got %v", ExtAuth, auths, ext[ExtAuth])
	}
	p.Auth = Auth(auth)

	switch v := ext[ExtEnvelope].(type) {
	case string:
		env, err := envelopeNamed(v)
		if err != nil {
			return nil, err
		}
		p.Envelope.Errors = env
	case map[string]any:
		var e envelopeExt
		if err := decode(v, &e); err != nil {
			return nil, fmt.Errorf("%s: %w", ExtEnvelope, err)
		}
		env, err := envelopeNamed(e.Errors)
		if err != nil {
			return nil, err
		}
		p.Envelope = Envelope{Errors: env}
		for _, k := range e.Typed {
			if !slices.Contains(apierr.Kinds, apierr.Kind(k)) {
				return nil, fmt.Errorf("%s: typed: unknown error code %q", ExtEnvelope, k)
			}
			p.Envelope.Typed = append(p.Envelope.Typed, apierr.Kind(k))
		}
	default:
		return nil, fmt.Errorf("%s is required: platform, typed, or {errors, typed}", ExtEnvelope)
	}

	if v, ok := ext[ExtLimit]; ok {
		var l limitExt
		if err := decode(v, &l); err != nil {
			return nil, fmt.Errorf("%s: %w", ExtLimit, err)
		}
		if l.Bucket == "" || l.PerMinute < 1 || (l.By != "ip" && l.By != "key") {
			return nil, fmt.Errorf("%s needs bucket, per-minute (at least 1) and by (ip or key)", ExtLimit)
		}
		p.Limit = &Limit{Bucket: l.Bucket, PerMinute: l.PerMinute, ByKey: l.By == "key"}
	}

	if v, ok := ext[ExtCORS]; ok {
		var c corsExt
		if err := decode(v, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", ExtCORS, err)
		}
		if len(c.AllowMethods) == 0 || c.MaxAge < 0 {
			return nil, fmt.Errorf("%s needs allow-methods and a max-age of 0 or more", ExtCORS)
		}
		p.CORS = &CORS{AllowMethods: strings.Join(c.AllowMethods, ", "), AllowHeaders: strings.Join(c.AllowHeaders, ", "), MaxAge: c.MaxAge}
	}

	if v, ok := ext[ExtErrors]; ok {
		var e errorsExt
		if err := decode(v, &e); err != nil {
			return nil, fmt.Errorf("%s: %w", ExtErrors, err)
		}
		if e.RetryAfter < 0 {
			return nil, fmt.Errorf("%s: retry-after must not be negative", ExtErrors)
		}
		p.Errors = Errors(e)
	}

	if v, ok := ext[ExtBody]; ok {
		var b bodyExt
		if err := decode(v, &b); err != nil {
			return nil, fmt.Errorf("%s: %w", ExtBody, err)
		}
		if b.MaxBytes > 0 {
			p.Body.MaxBytes = b.MaxBytes
		}
		p.Body.Raw = b.Raw
	}

	if v, ok := ext[ExtValidation]; ok {
		if v != "handler" {
			return nil, fmt.Errorf("%s must be \"handler\", got %v", ExtValidation, v)
		}
		p.HandlerValidates = true
	}
	return p, nil
}

func envelopeNamed(name string) (apierr.Envelope, error) {
	switch name {
	case "platform":
		return apierr.Platform, nil
	case "typed":
		return apierr.Typed, nil
	case "page":
		return apierr.Page, nil
	case "oauth":
		return apierr.OAuth, nil
	}
	return 0, fmt.Errorf("%s: errors must be platform, typed, page or oauth, got %q", ExtEnvelope, name)
}

// decode reads an extension's value (already decoded from YAML) into v, refusing unknown members.
func decode(from any, v any) error {
	raw, err := json.Marshal(from)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// checkBuckets refuses operations that share a bucket but state different limits: a shared count has
// one limit.
func checkBuckets(all []*Policy) []error {
	first := map[string]*Policy{}
	var errs []error
	for _, p := range all {
		if p.Limit == nil {
			continue
		}
		f, seen := first[p.Limit.Bucket]
		if !seen {
			first[p.Limit.Bucket] = p
			continue
		}
		if *f.Limit != *p.Limit {
			errs = append(errs, fmt.Errorf("%s and %s share the bucket %q with different limits", f.OperationID, p.OperationID, p.Limit.Bucket))
		}
	}
	return errs
}

// EchoPath turns the spec's /a/{b}/c into echo's /a/:b/c.
func EchoPath(p string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i])
		b.WriteByte(':')
		b.WriteString(p[i+1 : i+j])
		p = p[i+j+1:]
	}
}
