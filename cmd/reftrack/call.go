package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/reftrack/reftrack/gen/client"
	"github.com/reftrack/reftrack/sdk"
)

// routeKind is the credential a route takes; it decides the next step told after a refusal (a 401 on an
// account route means log in again, on a key route the key is wrong, and logging in does not help).
type routeKind int

const (
	accountRoute routeKind = iota // account login token
	keyRoute                      // program API key
	loginRoute                    // no credential
)

// endpoint is where a request goes and with which credential.
type endpoint struct {
	server, token string
	kind          routeKind
}

// call sends one request through the generated client (send picks the operation) and decodes a 2xx
// answer into a T. Every other answer becomes the SDK's *sdk.APIError, told to the user once by explain;
// no answer at all is a networkError. Both come back as a *userError that unwraps to the cause.
func call[T any](a *app, to endpoint, send func(*client.Client) (*http.Response, error)) (*T, error) {
	body, res, err := exchange(a, to, send)
	if err != nil {
		return nil, err
	}
	var out T
	if err := json.Unmarshal(body, &out); err != nil {
		// A 2xx this client cannot read (a proxy's page, say): said like any answer that is not the service's.
		return nil, explain(&sdk.APIError{Status: res.StatusCode, Code: sdk.CodeUnexpectedResponse,
			RequestID: res.Header.Get("X-Request-ID")}, to.kind)
	}
	return &out, nil
}

// callBytes is call for an answer that is not JSON (a CSV file): a 2xx answer's body as sent.
func callBytes(a *app, to endpoint, send func(*client.Client) (*http.Response, error)) ([]byte, error) {
	body, _, err := exchange(a, to, send)
	return body, err
}

// exchange sends the request and reads a 2xx answer's body; any other answer, or none, is the user's
// error (see call).
func exchange(a *app, to endpoint, send func(*client.Client) (*http.Response, error)) ([]byte, *http.Response, error) {
	c, err := client.NewClient(to.server, client.WithHTTPClient(a.httpClient),
		client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
			r.Header.Set("User-Agent", "reftrack-cli/0.1.0 ("+runtime.GOOS+")")
			if to.token != "" {
				r.Header.Set("Authorization", "Bearer "+to.token)
			}
			return nil
		}))
	if err != nil {
		return nil, nil, err // only an option can fail, and ours do not
	}
	res, err := send(c)
	if err != nil {
		return nil, nil, networkError(to.server, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, networkError(to.server, err)
	}
	if apiErr := sdk.ErrorFromResponse(res, body); apiErr != nil {
		return nil, nil, explain(apiErr, to.kind)
	}
	return body, res, nil
}

// userError is a failure told to a person: what happened and what to do next.
type userError struct {
	Message   string
	Next      string
	RequestID string
	cause     error // the *sdk.APIError or network error behind it, if any
}

func (e *userError) Error() string { return e.Message }

func (e *userError) Unwrap() error { return e.cause }

// Render is the text printed on standard error.
func (e *userError) Render() string {
	s := "Error: " + e.Message
	if e.RequestID != "" && !strings.Contains(e.Message, e.RequestID) {
		s += "\n(request id " + e.RequestID + ")"
	}
	if e.Next != "" {
		s += "\nNext: " + e.Next
	}
	return s
}

// explain tells the user an error answer: the server's message, its request id, and the next step for
// the kind of route.
func explain(e *sdk.APIError, kind routeKind) *userError {
	u := &userError{Message: e.Message, RequestID: e.RequestID, cause: e}
	if id, ok := e.Details["request_id"].(string); ok {
		u.RequestID = id // the 5xx of the routes that name it in the body
	}
	if e.Code == sdk.CodeUnexpectedResponse {
		u.Message = fmt.Sprintf("the server answered %d %s", e.Status, http.StatusText(e.Status))
	}
	switch {
	case e.Code == "api_key_rotation_required":
		u.Next = e.Hint + " Owners run `reftrack keys regenerate`."
	case e.Status == http.StatusUnauthorized && kind == keyRoute:
		u.Next = "the program's API key is not valid: a workspace owner runs `reftrack keys regenerate` (creating a new program does not help)."
	case e.Status == http.StatusUnauthorized:
		u.Next = "run `reftrack login`."
	case e.Code == "account_suspended" || e.Details["code"] == "ACCOUNT_BLOCKED":
		u.Next = "your account is suspended; contact support (logging in again does not help)."
	case e.Status == http.StatusForbidden:
		u.Next = "check the program: `reftrack programs` lists yours."
	case e.Status == http.StatusTooManyRequests:
		u.Next = fmt.Sprintf("wait %d seconds and try again.", max(int(e.RetryAfter/time.Second), 1))
	case e.Status >= 500:
		u.Next = "try again in a moment; if it keeps failing, send the request id to support."
	case e.Status == http.StatusBadRequest && kind == loginRoute:
		u.Next = "run `reftrack login` again."
	}
	return u
}

// networkError is a request that got no answer.
func networkError(server string, err error) error {
	return &userError{Message: "cannot reach " + server + ": " + err.Error(),
		Next: "check --server (or REFTRACK_BASE_URL), or start a local server with `make run`.", cause: err}
}

// refused is a value refused before sending, in the words the server would answer it with.
func refused(message string) error { return &userError{Message: message} }

// withNext gives an error told to the user the next step next picks for its cause (an error answer, or
// none for no answer at all), when explain gave it none. next answers "" to leave it without one.
func withNext(err error, next func(apiErr *sdk.APIError) string) error {
	var u *userError
	if !errors.As(err, &u) || u.Next != "" {
		return err
	}
	var apiErr *sdk.APIError
	errors.As(u.cause, &apiErr)
	u.Next = next(apiErr)
	return err
}
