package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// accessLog writes one structured line per request.
func accessLog(logger *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				// Let the error handler write the response now, so the line below logs the real status.
				c.Error(err)
			}
			req, res := c.Request(), c.Response()
			level := slog.LevelInfo
			if res.Status >= 500 && res.Status != http.StatusNotImplemented {
				level = slog.LevelError
			}
			logger.LogAttrs(req.Context(), level, "request",
				slog.String("request_id", RequestID(req.Context())),
				slog.String("method", req.Method),
				slog.String("path", req.URL.Path),
				slog.String("route", c.Path()),
				slog.Int("status", res.Status),
				slog.Int64("bytes", res.Size),
				slog.Duration("duration", time.Since(start)),
				slog.String("remote_ip", c.RealIP()),
			)
			return nil
		}
	}
}
