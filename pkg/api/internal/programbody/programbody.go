// Package programbody reads the fields of a new program from a request body, for the two routes that
// make one (POST /api/v1/cli/init and POST /api/v1/workspaces/{advertiserId}/programs), so that both
// refuse the same input with the same messages. The ranges, the domain and the origins are checked by
// programs.Create, in one place for every route that makes or changes a program.
package programbody

import (
	"fmt"
	"strings"

	"github.com/reftrack/reftrack/pkg/api/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/programs"
)

// MaxAllowedOrigins is the spec's maxItems of allowed_origins.
const MaxAllowedOrigins = 50

// Body is a new program's members, from either route's generated body (a member the route's body does
// not have stays absent).
type Body struct {
	Name, Domain, CommissionType, CommissionRate, DurationMonths jsonbody.Value
	// Cookie is the cookie window's member, named CookieField: cli/init keeps the original CLI's
	// cookie_duration.
	Cookie      jsonbody.Value
	CookieField string
	// LeadAuth and AllowedOrigins are settings only the dashboard's route takes.
	LeadAuth, AllowedOrigins jsonbody.Value
	// NameAtMost200 holds the name to 200 characters, as PATCH does.
	NameAtMost200 bool
}

// The refusals of the settings a program change reads too (manage's UpdateProgram).
var (
	ErrLeadAuth       = apierr.Invalid("lead_auth must be server_required or browser_allowed")
	ErrTooManyOrigins = apierr.Invalid(fmt.Sprintf("allowed_origins must list at most %d origins", MaxAllowedOrigins))
)

// New reads a new program's fields from b, in the order their refusals are answered.
func New(b Body) (programs.New, error) {
	name, _ := b.Name.Str()
	domain, _ := b.Domain.Str()
	ctype, _ := b.CommissionType.Str()
	name = strings.TrimSpace(name)
	if name == "" || strings.TrimSpace(domain) == "" || ctype == "" || !b.CommissionRate.Sent() {
		return programs.New{}, apierr.Invalid("Missing required fields: name, domain, commission_type, commission_rate")
	}
	var r jsonbody.Reader
	r.Check(!b.NameAtMost200 || jsonbody.Runes(1, 200)(name), apierr.Invalid("name must be a string of 1 to 200 characters"))
	r.Check(commission.Valid(ctype), &programs.CommissionTypeError{Type: ctype})
	rate, _ := r.Number(b.CommissionRate, programs.ErrRateNotPositive) // a string is refused, as the interface says
	n := programs.New{Name: name, Domain: domain, CommissionType: ctype, CommissionRate: rate}
	n.CookieWindowDays = jsonbody.Ptr(r.Int(b.Cookie, &programs.WindowError{Field: b.CookieField},
		func(days int64) bool { return programs.CheckWindow(b.CookieField, days) == nil }))
	n.DurationMonths = jsonbody.Ptr(r.Int(b.DurationMonths, programs.ErrDurationMonths)) // 0, the original CLI's "lifetime", is lifetime
	n.LeadAuth, _ = r.String(b.LeadAuth, ErrLeadAuth, jsonbody.OneOf(programs.LeadAuthServerRequired, programs.LeadAuthBrowserAllowed))
	if origins, ok := r.Strings(b.AllowedOrigins, programs.ErrOrigin); ok && r.Check(len(origins) <= MaxAllowedOrigins, ErrTooManyOrigins) {
		n.AllowedOrigins = origins
	}
	return n, r.Err()
}
