package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"

	"github.com/labstack/echo/v4"
)

const headerRequestID = "X-Request-ID"

type requestIDKey struct{}

// RequestID is the id of the request ctx belongs to ("" outside a request).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// A client's own request id is kept when it is short and plain; anything else is replaced, so that ids
// are safe to log and to echo back.
var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// requestID gives every request an id, puts it in the request context and on the response. The header is
// written just before the status line, so it wins over anything a handler set and reaches error
// responses too.
func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(headerRequestID)
		if !saneRequestID.MatchString(id) {
			id = newRequestID()
		}
		c.SetRequest(c.Request().WithContext(context.WithValue(c.Request().Context(), requestIDKey{}, id)))
		res := c.Response()
		res.Before(func() {
			if omitsRequestID(c.Path(), res.Status) {
				res.Header().Del(headerRequestID)
				return
			}
			res.Header().Set(headerRequestID, id)
		})
		return next(c)
	}
}

// omitsRequestID is the interface's one exception: GET /api/v1/cli/status answers 200, 401 and 429
// without X-Request-ID (its other statuses carry one).
func omitsRequestID(route string, status int) bool {
	if route != "/api/v1/cli/status" {
		return false
	}
	switch status {
	case http.StatusOK, http.StatusUnauthorized, http.StatusTooManyRequests:
		return true
	}
	return false
}
