// Package tracking is the HTTP area of the tracking routes: clicks and leads from browsers and brand
// backends, sales and refunds from brand backends, the program key's readiness, and the CORS preflights
// of the browser routes. Handlers read the request, make one domain call and answer; refusals the
// domain returns are worded by the HTTP layer's error table.
package tracking

import (
	"log/slog"
	"time"

	"github.com/jmoiron/sqlx"

	gen "github.com/reftrack/reftrack/gen/server"
	"github.com/reftrack/reftrack/pkg/api/internal/auth"
	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
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

// The refusals of optional text members of another JSON type: the spec promises a string there, and a
// value of another type would otherwise be dropped without a word. Made once, like every refusal of
// these routes (the hot paths).
var (
	errClickIDNotString     = notString("click_id")
	errCustomerKeyNotString = notString("customer_key")
)

func notString(member string) *apierr.Error { return apierr.Invalid(member + " must be a string") }

var (
	errAdditionalData = apierr.Invalid("additional_data must be an object")
	errTestMode       = apierr.Invalid("additional_data.test_mode must be a boolean")
	errNamedProgram   = apierr.Invalid("additional_data.program_id must be a program id (a positive integer)")
)

// additionalData reads additional_data, which the click, lead and sale bodies share: whether the event is
// a test, and the program it names.
func additionalData(r *jsonbody.Reader, o jsonbody.Object[gen.AdditionalData]) (test bool, programID *int64) {
	ad, present, ok := o.Fields()
	if !present || !r.Check(ok, errAdditionalData) {
		return false, nil
	}
	test, _ = r.Bool(ad.TestMode, errTestMode)
	return test, jsonbody.Ptr(r.ID(ad.ProgramId, errNamedProgram))
}
