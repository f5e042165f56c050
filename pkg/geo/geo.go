// Package geo reads a visitor's location from the headers a trusted edge proxy adds (Cloudflare, Vercel).
package geo

import (
	"net/http"
	"net/url"
	"strings"
)

// Location is what a click records of where it came from; empty fields are unknown.
type Location struct {
	Country string // ISO 3166-1 alpha-2
	Region  string
	City    string
}

// FromHeaders reads CF-IPCountry, X-Vercel-IP-Country, X-Vercel-IP-Country-Region and X-Vercel-IP-City.
// Only call it for requests that came through a trusted proxy: anyone can send these headers.
func FromHeaders(h http.Header) Location {
	var l Location
	for _, name := range []string{"X-Vercel-IP-Country", "CF-IPCountry"} {
		if c := strings.ToUpper(strings.TrimSpace(h.Get(name))); isCountry(c) {
			l.Country = c
			break
		}
	}
	l.Region = clean(h.Get("X-Vercel-IP-Country-Region"))
	if city, err := url.QueryUnescape(h.Get("X-Vercel-IP-City")); err == nil { // Vercel URL-encodes it
		l.City = clean(city)
	}
	return l
}

// isCountry accepts two letters; Cloudflare's XX (unknown) and T1 (Tor) are not countries.
func isCountry(c string) bool {
	return len(c) == 2 && c != "XX" && c[0] >= 'A' && c[0] <= 'Z' && c[1] >= 'A' && c[1] <= 'Z'
}

func clean(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 100 {
		return ""
	}
	return s
}
