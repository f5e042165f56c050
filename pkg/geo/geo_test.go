package geo

import (
	"net/http"
	"testing"
)

func TestFromHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    map[string]string
		want Location
	}{
		{"vercel", map[string]string{"X-Vercel-IP-Country": "DE", "X-Vercel-IP-Country-Region": "BE", "X-Vercel-IP-City": "S%C3%A3o%20Paulo"},
			Location{Country: "DE", Region: "BE", City: "São Paulo"}},
		{"cloudflare", map[string]string{"CF-IPCountry": "vn"}, Location{Country: "VN"}},
		{"cloudflare unknown", map[string]string{"CF-IPCountry": "XX"}, Location{}},
		{"tor", map[string]string{"CF-IPCountry": "T1"}, Location{}},
		{"none", nil, Location{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.h {
				h.Set(k, v)
			}
			if got := FromHeaders(h); got != tt.want {
				t.Errorf("FromHeaders = %+v, want %+v", got, tt.want)
			}
		})
	}
}
