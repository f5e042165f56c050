package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/sdk"
)

// An error answer is told once, the same way for every command: the server's message, its request id,
// and the next step for the kind of route.
func TestExplain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  sdk.APIError
		kind routeKind
		want string
	}{
		{"key to rotate", sdk.APIError{Status: 401, Code: "api_key_rotation_required", Message: "This API key passed its rotation deadline.",
			Hint: "A workspace owner regenerates the key.", RequestID: "r1"}, keyRoute,
			"Error: This API key passed its rotation deadline.\n(request id r1)\nNext: A workspace owner regenerates the key. Owners run `reftrack keys regenerate`."},
		{"key not valid", sdk.APIError{Status: 401, Code: "unauthorized", Message: "Invalid API token."}, keyRoute,
			"Error: Invalid API token.\nNext: the program's API key is not valid: a workspace owner runs `reftrack keys regenerate` (creating a new program does not help)."},
		{"login expired", sdk.APIError{Status: 401, Code: "unauthorized", Message: "Invalid or expired token."}, accountRoute,
			"Error: Invalid or expired token.\nNext: run `reftrack login`."},
		{"suspended", sdk.APIError{Status: 403, Code: "account_suspended", Message: "Your account has been suspended."}, accountRoute,
			"Error: Your account has been suspended.\nNext: your account is suspended; contact support (logging in again does not help)."},
		{"suspended at login", sdk.APIError{Status: 403, Code: "forbidden", Message: "Your account has been suspended.", Details: map[string]any{"code": "ACCOUNT_BLOCKED"}}, loginRoute,
			"Error: Your account has been suspended.\nNext: your account is suspended; contact support (logging in again does not help)."},
		{"another's program", sdk.APIError{Status: 403, Code: "forbidden", Message: "program_id does not match the API key"}, keyRoute,
			"Error: program_id does not match the API key\nNext: check the program: `reftrack programs` lists yours."},
		{"wait", sdk.APIError{Status: 429, Code: "rate_limited", Message: "Too many requests.", RetryAfter: 42 * time.Second}, keyRoute,
			"Error: Too many requests.\nNext: wait 42 seconds and try again."},
		{"wait under a second", sdk.APIError{Status: 429, Code: "rate_limited", Message: "Too many requests."}, keyRoute,
			"Error: Too many requests.\nNext: wait 1 seconds and try again."},
		{"failure with its id in the message", sdk.APIError{Status: 500, Code: "internal_error", Message: "Failed (request_id: r2)",
			Details: map[string]any{"request_id": "r2"}, RequestID: "r2"}, accountRoute,
			"Error: Failed (request_id: r2)\nNext: try again in a moment; if it keeps failing, send the request id to support."},
		{"not the service's answer", sdk.APIError{Status: 502, Code: sdk.CodeUnexpectedResponse, Message: "Bad Gateway: <html>"}, accountRoute,
			"Error: the server answered 502 Bad Gateway\nNext: try again in a moment; if it keeps failing, send the request id to support."},
		{"login session gone", sdk.APIError{Status: 400, Code: "invalid_request", Message: "Session already consumed"}, loginRoute,
			"Error: Session already consumed\nNext: run `reftrack login` again."},
		{"refused input", sdk.APIError{Status: 400, Code: "invalid_request", Message: "Invalid event_type: refund. Valid: click, lead, sale", RequestID: "r3"}, keyRoute,
			"Error: Invalid event_type: refund. Valid: click, lead, sale\n(request id r3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := explain(&tc.err, tc.kind)
			if got := u.Render(); got != tc.want {
				t.Errorf("rendered\n%s\nwant\n%s", got, tc.want)
			}
			var apiErr *sdk.APIError
			if !errors.As(u, &apiErr) || apiErr != &tc.err {
				t.Error("the user's error does not unwrap to the APIError")
			}
		})
	}
}

// No answer, and an answer that is not the service's (a proxy whose upstream is down), each say what to
// do next. No reftrack server here: the test's client, which holds every answer to the spec, would
// refuse the proxy's.
func TestCLIWithoutTheService(t *testing.T) {
	t.Parallel()
	closed := closedAddress(t)
	errOut, err := runAlone(t, "status", "--api-key", "rt_test", "--server", "http://"+closed)
	if err == nil || !strings.HasPrefix(errOut, "Error: cannot reach http://"+closed+": ") ||
		!strings.HasSuffix(errOut, "\nNext: check --server (or REFTRACK_BASE_URL), or start a local server with `make run`.") {
		t.Errorf("no server: %v %q", err, errOut)
	}

	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: closed})
	rp.ErrorLog = log.New(io.Discard, "", 0)
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	errOut, err = runAlone(t, "status", "--api-key", "rt_test", "--server", proxy.URL)
	if want := "Error: the server answered 502 Bad Gateway\nNext: try again in a moment; if it keeps failing, send the request id to support."; err == nil || errOut != want {
		t.Errorf("proxy without upstream: %v %q, want %q", err, errOut, want)
	}
}

// runAlone runs one command with a plain HTTP client and returns what it printed on standard error.
func runAlone(t *testing.T, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	cmd := newApp(strings.NewReader(""), &out, &errOut).root()
	cmd.SetArgs(append([]string{"--config-dir", t.TempDir()}, args...))
	err := cmd.ExecuteContext(context.Background())
	var ue *userError
	if errors.As(err, &ue) {
		errOut.WriteString(ue.Render())
	}
	return errOut.String(), err
}

// closedAddress is a local address where nothing listens.
func closedAddress(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
