// Package request is what handlers know of the HTTP request beyond the generated request object (its id,
// client IP, headers, raw body) and what they leave for the response headers (a key marked for
// rotation). The HTTP layer's first middleware stores it in the request context.
package request

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/apikeys"
)

// HeaderID carries the request id, in both directions.
const HeaderID = "X-Request-ID"

// Meta is one request's context.
type Meta struct {
	ID     string
	IP     string
	Method string
	Header http.Header
	// ViaTrustedProxy is set when the peer is a configured proxy, whose geo headers are believed.
	ViaTrustedProxy bool
	// RawBody is a JSON body exactly as received, before the contract normalised it: for operations that
	// verify a signature over it, and for the request an Idempotency-Key names.
	RawBody []byte
	// Rotation is the request's API key when it is marked for rotation: the response gains the
	// Deprecation, Sunset and Link headers and Warnings.
	Rotation *apikeys.Key
	// Warnings is the top-level "warnings" array of the response (key rotation).
	Warnings []apierr.Warning
}

type metaKey struct{}

// With stores m in ctx.
func With(ctx context.Context, m *Meta) context.Context { return context.WithValue(ctx, metaKey{}, m) }

// From is the request's meta (an empty one outside a request).
func From(ctx context.Context) *Meta {
	if m, ok := ctx.Value(metaKey{}).(*Meta); ok {
		return m
	}
	return &Meta{Header: http.Header{}}
}

// ObjectBody refuses a JSON body that is not an object. The contract middleware hands such a body to the
// generated decoder of a handler-checked body as no body at all (decoding it could only fail, before the
// handler's own checks), so the handler asks here, where it reads its body.
func ObjectBody(ctx context.Context) error {
	if raw := bytes.TrimSpace(From(ctx).RawBody); len(raw) > 0 && raw[0] != '{' {
		return apierr.Invalid("Request body must be a JSON object")
	}
	return nil
}

// ID is the id of the request ctx belongs to ("" outside a request).
func ID(ctx context.Context) string { return From(ctx).ID }

// Cookie is the request's value of a cookie ("" without one).
func Cookie(ctx context.Context, name string) string {
	if c, err := (&http.Request{Header: From(ctx).Header}).Cookie(name); err == nil {
		return c.Value
	}
	return ""
}

// SafeMethod reports whether the request only reads (GET, HEAD, OPTIONS).
func SafeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// ETagMatches is If-None-Match's weak comparison (RFC 9110 13.1.2) against one strong ETag.
func ETagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// AcceptsGzip reports whether an Accept-Encoding list accepts gzip (not with q=0).
func AcceptsGzip(header string) bool {
	for _, item := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(item), ";")
		if n := strings.ToLower(strings.TrimSpace(name)); n != "gzip" && n != "*" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				return false
			}
		}
		return true
	}
	return false
}
