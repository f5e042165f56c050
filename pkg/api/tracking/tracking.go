// Package tracking is the HTTP area of the tracking routes: clicks and leads from browsers and brand
// backends, sales and refunds from brand backends, the program key's readiness, and the CORS preflights
// of the browser routes. Handlers read the request, make one domain call and answer; refusals the
// domain returns are worded by the HTTP layer's error table.
package tracking

import (
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/origins"
	"github.com/reftrack/reftrack/pkg/platform/metrics"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/useragent"
)

// Tracking implements the tracking operations of the strict server interface.
type Tracking struct {
	DB      *sqlx.DB
	Log     *slog.Logger
	Now     func() time.Time
	Auth    *auth.Authenticator
	Clicks  *clicks.Recorder
	Leads   *leads.Recorder
	Sales   *sales.Recorder
	Refunds *sales.RefundRecorder
	// DNS looks the program's domain verification record up (readiness requests).
	DNS     programs.TXTResolver
	Devices *useragent.Parser
	Metrics *metrics.Metrics
	Origins *origins.Cache
}
