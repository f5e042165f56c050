package leads

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/apikeys"
)

// Mode: server mode with a key, browser mode without; the program each takes; the Origin only in browser
// mode; the test-mode program check.
func TestMode(t *testing.T) {
	t.Parallel()
	key := apikeys.Claim{HasKey: true, KeyProgramID: 7}
	keyNaming := func(p int64) apikeys.Claim { c := key; c.Named = &p; return c }
	naming := func(p int64) apikeys.Claim { return apikeys.Claim{Named: &p} }
	const origin = "https://shop.example.com"
	for _, tc := range []struct {
		name string
		q    Request
		want Input
		err  error
	}{
		{name: "key: server mode, the key's program, no Origin",
			q:    Request{Claim: key, ClickID: "clk", CustomerKey: "c", Email: "a@example.com", Origin: origin},
			want: Input{ProgramID: 7, ServerMode: true, ClickID: "clk", CustomerKey: "c", Email: "a@example.com", Source: SourceServer}},
		{name: "key naming another program outside test mode: the key's program",
			q:    Request{Claim: keyNaming(8), ClickID: "clk"},
			want: Input{ProgramID: 7, ServerMode: true, ClickID: "clk", Source: SourceServer}},
		{name: "key naming its own program in test mode",
			q:    Request{Claim: keyNaming(7), ClickID: "clk", Test: true},
			want: Input{ProgramID: 7, ServerMode: true, ClickID: "clk", Test: true, Source: SourceServer}},
		{name: "key naming another program in test mode", q: Request{Claim: keyNaming(8), ClickID: "clk", Test: true},
			err: apikeys.ErrProgramMismatch},
		{name: "no key: browser mode, the click's program, the Origin checked",
			q:    Request{ClickID: "clk", CustomerKey: "c", Origin: origin},
			want: Input{ClickID: "clk", CustomerKey: "c", Origin: origin, Source: SourceBrowser}},
		{name: "no key, a program named: that program",
			q:    Request{Claim: naming(8), ClickID: "clk", Test: true},
			want: Input{ProgramID: 8, ClickID: "clk", Test: true, Source: SourceBrowser}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Mode(tc.q)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("Mode: %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Mode (-got +want):\n%s", diff)
			}
		})
	}
}
