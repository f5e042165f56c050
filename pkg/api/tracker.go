package api

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	gen "github.com/reftrack/reftrack/gen/server"
)

// The tracker's URL carries no version, so browsers keep it an hour and then revalidate with its ETag.
const trackerCacheControl = "public, max-age=3600"

// GetTrackerScript serves the browser tracker.
func (s *Server) GetTrackerScript(_ context.Context, req gen.GetTrackerScriptRequestObject) (gen.GetTrackerScriptResponseObject, error) {
	body, notModified := s.trackerScript(req.Params.IfNoneMatch, req.Params.AcceptEncoding)
	if notModified != nil {
		return gen.GetTrackerScript304Response(*notModified), nil
	}
	return gen.GetTrackerScript200ApplicationjavascriptResponse{TrackerScriptApplicationjavascriptResponse: *body}, nil
}

// GetTrackerScriptAlias serves the same file under its short name.
func (s *Server) GetTrackerScriptAlias(_ context.Context, req gen.GetTrackerScriptAliasRequestObject) (gen.GetTrackerScriptAliasResponseObject, error) {
	body, notModified := s.trackerScript(req.Params.IfNoneMatch, req.Params.AcceptEncoding)
	if notModified != nil {
		return gen.GetTrackerScriptAlias304Response(*notModified), nil
	}
	return gen.GetTrackerScriptAlias200ApplicationjavascriptResponse{TrackerScriptApplicationjavascriptResponse: *body}, nil
}

// trackerScript answers 304 when the client's copy is current, else the script, gzip-encoded when the
// client accepts it.
func (s *Server) trackerScript(ifNoneMatch, acceptEncoding *string) (*gen.TrackerScriptApplicationjavascriptResponse, *gen.TrackerScriptNotModifiedResponse) {
	t := s.tracker
	if ifNoneMatch != nil && etagMatches(*ifNoneMatch, t.ETag) {
		return nil, &gen.TrackerScriptNotModifiedResponse{Headers: gen.TrackerScriptNotModifiedResponseHeaders{
			ETag: t.ETag, CacheControl: trackerCacheControl, Vary: "Accept-Encoding",
		}}
	}
	res := &gen.TrackerScriptApplicationjavascriptResponse{
		Body: bytes.NewReader(t.Body), ContentLength: int64(len(t.Body)),
		Headers: gen.TrackerScriptResponseHeaders{ETag: t.ETag, CacheControl: trackerCacheControl, Vary: "Accept-Encoding"},
	}
	if acceptEncoding != nil && acceptsGzip(*acceptEncoding) {
		gz := "gzip"
		res.Body, res.ContentLength, res.Headers.ContentEncoding = bytes.NewReader(t.Gzip), int64(len(t.Gzip)), &gz
	}
	return res, nil
}

// etagMatches is If-None-Match's weak comparison (RFC 9110 13.1.2) against one strong ETag.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding list accepts gzip (not with q=0).
func acceptsGzip(header string) bool {
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
