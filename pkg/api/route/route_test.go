package route_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/reftrack/reftrack/openapi"
	"github.com/reftrack/reftrack/pkg/api/route"
	"github.com/reftrack/reftrack/pkg/apierr"
)

func load(t *testing.T) (*openapi3.T, *route.Table) {
	t.Helper()
	doc, err := openapi.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	table, err := route.Load(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, table
}

// Every operation of the published spec states its policy, and the table has them all.
func TestEveryOperationHasAPolicy(t *testing.T) {
	t.Parallel()
	doc, table := load(t)
	n := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			n++
			for _, ext := range []string{route.ExtAuth, route.ExtEnvelope} {
				if _, ok := op.Extensions[ext]; !ok {
					t.Errorf("%s %s (%s) lacks %s", method, path, op.OperationID, ext)
				}
			}
			if _, ok := table.Lookup(method, route.EchoPath(path)); !ok {
				t.Errorf("%s %s is not in the table", method, path)
			}
		}
	}
	if len(table.All()) != n {
		t.Errorf("table has %d operations, the spec %d", len(table.All()), n)
	}
}

// The credential each operation states agrees with its OpenAPI security requirement, which is what
// generated clients read.
func TestAuthAgreesWithSecurity(t *testing.T) {
	t.Parallel()
	_, table := load(t)
	want := map[route.Auth][]string{
		route.None:               nil,
		route.ProgramKey:         {"programKey"},
		route.OptionalProgramKey: {"anonymous", "programKey"},
		route.Account:            {"accountToken"},
		route.AccountOrSession:   {"accountToken", "sessionCookie"},
		route.PartnerSession:     {"partnerSession"},
		route.WebhookSignature:   {"stripeSignature"},
	}
	for _, p := range table.All() {
		var got []string
		for _, req := range *p.Operation.Security {
			if len(req) == 0 {
				got = append(got, "anonymous")
			}
			for name := range req {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if p.Auth == route.Session {
			// The page reads the cookie itself: a visitor without one is sent to sign in.
			if !slices.Contains(got, "sessionCookie") && len(got) > 0 {
				t.Errorf("%s: session route with security %v", p.OperationID, got)
			}
			continue
		}
		if !slices.Equal(got, want[p.Auth]) {
			t.Errorf("%s: x-reftrack-auth %s but security %v, want %v", p.OperationID, p.Auth, got, want[p.Auth])
		}
	}
}

// Spot checks of the interface's rules as the table reads them from the spec.
func TestPoliciesFromTheSpec(t *testing.T) {
	t.Parallel()
	_, table := load(t)
	get := func(method, path string) *route.Policy {
		t.Helper()
		p, ok := table.Lookup(method, path)
		if !ok {
			t.Fatalf("no policy for %s %s", method, path)
		}
		return p
	}
	sale := get("POST", "/api/v1/track/sale")
	refund := get("POST", "/api/v1/track/refund")
	if *sale.Limit != (route.Limit{Bucket: "payments", PerMinute: 120, ByKey: true}) || *refund.Limit != *sale.Limit {
		t.Errorf("sale and refund limits = %+v, %+v; want one payments bucket of 120 per key", sale.Limit, refund.Limit)
	}
	if sale.Auth != route.ProgramKey || sale.Envelope.For(apierr.KindRateLimited) != apierr.Typed ||
		sale.Envelope.For(apierr.KindInvalid) != apierr.Platform || sale.Errors.Internal != "Sale tracking failed" {
		t.Errorf("sale policy = %+v", sale)
	}
	click := get("POST", "/api/v1/track/click")
	if click.CORS == nil || click.Limit.ByKey || click.Limit.PerMinute != 60 || click.Envelope.For(apierr.KindLinkDisabled) != apierr.Typed {
		t.Errorf("click policy = %+v", click)
	}
	if pre := get("OPTIONS", "/api/v1/track/click"); pre.Limit != nil || pre.CORS == nil || pre.CORS.MaxAge != 600 {
		t.Errorf("preflight policy = %+v: preflights are not limited and answer CORS", pre)
	}
	ready := get("GET", "/api/v1/programs/me/readiness")
	if ready.Envelope.For(apierr.KindInternal) != apierr.Typed || ready.Errors.RetryAfter != 10 || ready.Errors.Wording != "readiness" {
		t.Errorf("readiness policy = %+v", ready)
	}
	status := get("GET", "/api/v1/cli/status")
	if !slices.Equal(status.Errors.NoRequestIDOn, []int{200, 401, 429}) || !status.Errors.RequestIDIn5xx || status.Limit.Bucket != "cli" {
		t.Errorf("cli status policy = %+v", status)
	}
	hook := get("POST", "/api/v1/webhooks/stripe/:programId")
	if !hook.Body.Raw || hook.Body.MaxBytes != 1<<20 || hook.Auth != route.WebhookSignature {
		t.Errorf("webhook policy = %+v", hook)
	}
	// Account routes outside /api/v1/cli/* share 600 per minute per token (docs/rules.md#limits).
	if p := get("PATCH", "/api/v1/links/:linkId"); p.Body.MaxBytes != route.DefaultMaxBodyBytes || p.HandlerValidates || p.Limit == nil ||
		*p.Limit != (route.Limit{Bucket: "account", PerMinute: 600, ByKey: true}) {
		t.Errorf("update link policy = %+v", p)
	}
	// The handler checks the body, for the exact range messages (docs/rules.md#bad-input-abuse-and-faults).
	if p := get("PATCH", "/api/v1/programs/:programId"); !p.HandlerValidates {
		t.Errorf("update program policy = %+v", p)
	}
	if login, token := get("POST", "/login"), get("POST", "/dev/oidc/token"); login.Envelope.For(apierr.KindInvalid) != apierr.Page ||
		token.Envelope.For(apierr.KindPayloadTooLarge) != apierr.OAuth {
		t.Errorf("login and token envelopes = %+v, %+v; want page and oauth", login.Envelope, token.Envelope)
	}
	// A method the page does not serve is the router's 405, in the platform envelope.
	if p, ok := table.LookupWrongMethod("PUT", "/login"); !ok || p.Envelope.Errors != apierr.Platform {
		t.Errorf("405 policy of /login = %+v", p)
	}
	// Every /api/v1/cli/ operation shares the CLI bucket.
	for _, p := range table.All() {
		if strings.HasPrefix(p.Path, "/api/v1/cli/") && (p.Limit == nil || p.Limit.Bucket != "cli") {
			t.Errorf("%s is not limited in the cli bucket", p.OperationID)
		}
	}
}

// A method the path does not serve (405) is answered by the path's rules, without its credential; an
// OPTIONS request is never counted.
func TestWrongMethodPolicy(t *testing.T) {
	t.Parallel()
	_, table := load(t)
	p, ok := table.LookupWrongMethod("GET", "/api/v1/track/sale")
	if !ok || p.Limit == nil || p.Limit.Bucket != "payments" || p.Auth != route.None || p.Operation != nil {
		t.Errorf("GET on the sale route: %+v", p)
	}
	if p, ok := table.LookupWrongMethod("OPTIONS", "/api/v1/track/sale"); !ok || p.Limit != nil {
		t.Errorf("OPTIONS on the sale route: %+v", p)
	}
	if p, ok := table.LookupWrongMethod("PUT", "/api/v1/track/click"); !ok || p.CORS == nil || p.Limit == nil || p.Limit.Bucket != "click" {
		t.Errorf("PUT on the click route takes the click's rules, not its preflight's: %+v", p)
	}
	if _, ok := table.LookupWrongMethod("GET", "/nowhere"); ok {
		t.Error("a path of no operation has a policy")
	}
}

// A policy the server cannot read stops it at start, naming the operation.
func TestBadPolicies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ext  map[string]any
		want string
	}{
		{"no auth", map[string]any{"x-reftrack-envelope": "platform"}, "x-reftrack-auth must be one of"},
		{"unknown auth", map[string]any{"x-reftrack-auth": "cookie", "x-reftrack-envelope": "platform"}, "x-reftrack-auth must be one of"},
		{"no envelope", map[string]any{"x-reftrack-auth": "none"}, "x-reftrack-envelope is required"},
		{"unknown envelope", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "json"}, "errors must be platform, typed, page or oauth"},
		{"unknown typed code", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": map[string]any{"errors": "platform", "typed": []any{"slow_down"}}}, `unknown error code "slow_down"`},
		// Every error carries error.code now: the former with-code option is refused, not silently ignored.
		{"with-code is gone", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": map[string]any{"errors": "platform", "with-code": true}}, `unknown field "with-code"`},
		{"typo in a member", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "platform", "x-reftrack-limit": map[string]any{"bucket": "b", "per_minute": 5.0, "by": "ip"}}, "unknown field"},
		{"limit without by", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "platform", "x-reftrack-limit": map[string]any{"bucket": "b", "per-minute": 5.0}}, "needs bucket, per-minute"},
		{"unknown extension", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "platform", "x-reftrack-cache": true}, "unknown extension x-reftrack-cache"},
		{"validation other than handler", map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "platform", "x-reftrack-validation": "schema"}, `must be "handler"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := route.Load(docWith(tt.ext))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "getThing") {
				t.Errorf("Load = %v, want an error naming getThing and containing %q", err, tt.want)
			}
		})
	}
	t.Run("shared bucket, different limits", func(t *testing.T) {
		doc := docWith(map[string]any{"x-reftrack-auth": "none", "x-reftrack-envelope": "platform",
			"x-reftrack-limit": map[string]any{"bucket": "b", "per-minute": 5.0, "by": "ip"}})
		doc.Paths.Value("/thing").Post = &openapi3.Operation{OperationID: "postThing", Extensions: map[string]any{
			"x-reftrack-auth": "none", "x-reftrack-envelope": "platform",
			"x-reftrack-limit": map[string]any{"bucket": "b", "per-minute": 6.0, "by": "ip"}}}
		if _, err := route.Load(doc); err == nil || !strings.Contains(err.Error(), `share the bucket "b"`) {
			t.Errorf("Load = %v", err)
		}
	})
}

func docWith(ext map[string]any) *openapi3.T {
	paths := openapi3.NewPaths()
	paths.Set("/thing", &openapi3.PathItem{Get: &openapi3.Operation{OperationID: "getThing", Extensions: ext}})
	return &openapi3.T{OpenAPI: "3.0.3", Paths: paths}
}

func TestEchoPath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/healthz":                           "/healthz",
		"/api/tracking/events/{programId}":   "/api/tracking/events/:programId",
		"/api/v1/programs/{programId}/links": "/api/v1/programs/:programId/links",
		"/a/{b}/c/{d}":                       "/a/:b/c/:d",
	} {
		if got := route.EchoPath(in); got != want {
			t.Errorf("EchoPath(%q) = %q, want %q", in, got, want)
		}
	}
}
