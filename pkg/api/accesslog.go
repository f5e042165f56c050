package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/reftrack/reftrack/pkg/metrics"
)

// accessLog writes one structured line per request and counts it in the metrics.
func accessLog(logger *slog.Logger, m *metrics.Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				// Let the error handler write the response now, so the line below logs the real status.
				c.Error(err)
			}
			req, res := c.Request(), c.Response()
			m.Request(c.Path(), req.Method, res.Status, time.Since(start))
			level := slog.LevelInfo
			if res.Status >= 500 && res.Status != http.StatusNotImplemented {
				level = slog.LevelError
			}
			if !logger.Enabled(req.Context(), level) {
				return nil
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
