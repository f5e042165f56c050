// Package programbody reads the fields of a new program from a request body, for the two routes that
// make one (POST /api/v1/cli/init and POST /api/v1/workspaces/{advertiserId}/programs), so that both
// refuse the same input with the same messages. The ranges, the domain and the origins are checked by
// programs.Create, in one place for every route that makes or changes a program.
package programbody

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reftrack/reftrack/pkg/api/internal/jsonbody"
	"github.com/reftrack/reftrack/pkg/apierr"
	"github.com/reftrack/reftrack/pkg/commission"
	"github.com/reftrack/reftrack/pkg/programs"
)

// MaxAllowedOrigins is the spec's maxItems of allowed_origins.
const MaxAllowedOrigins = 50

// Fields are the optional fields a route reads beyond name, domain, commission_type, commission_rate and
// duration_months.
type Fields struct {
	// CookieField names the cookie window's field: cli/init keeps the original CLI's cookie_duration.
	CookieField string
	// Settings reads lead_auth and allowed_origins, and holds the name to 200 characters, as PATCH does.
	Settings bool
}

// New reads a new program's fields from body.
func New(body jsonbody.Object, f Fields) (programs.New, error) {
	name, _, _ := body.Str("name")
	domain, _, _ := body.Str("domain")
	ctype, _, _ := body.Str("commission_type")
	_, ratePresent := body["commission_rate"]
	if strings.TrimSpace(name) == "" || strings.TrimSpace(domain) == "" || ctype == "" || !ratePresent {
		return programs.New{}, apierr.Invalid("Missing required fields: name, domain, commission_type, commission_rate")
	}
	if f.Settings && utf8.RuneCountInString(strings.TrimSpace(name)) > 200 {
		return programs.New{}, apierr.Invalid("name must be a string of 1 to 200 characters")
	}
	if !commission.Valid(ctype) {
		return programs.New{}, &programs.CommissionTypeError{Type: ctype}
	}
	rate, ok := body.Number("commission_rate")
	if !ok {
		return programs.New{}, programs.ErrRateNotPositive // a string is refused, as the interface says
	}
	n := programs.New{Name: strings.TrimSpace(name), Domain: domain, CommissionType: ctype, CommissionRate: rate}
	if v, present, ok := body.SaturatedInt(f.CookieField); present {
		if !ok || programs.CheckWindow(f.CookieField, v) != nil {
			return programs.New{}, &programs.WindowError{Field: f.CookieField}
		}
		n.CookieWindowDays = &v
	}
	if v, present, ok := body.SaturatedInt("duration_months"); present {
		if !ok {
			return programs.New{}, programs.ErrDurationMonths
		}
		n.DurationMonths = &v // 0, the original CLI's "lifetime", is lifetime
	}
	if !f.Settings {
		return n, nil
	}
	if v, present, ok := body.Str("lead_auth"); present {
		if !ok || (v != programs.LeadAuthServerRequired && v != programs.LeadAuthBrowserAllowed) {
			return programs.New{}, apierr.Invalid("lead_auth must be server_required or browser_allowed")
		}
		n.LeadAuth = v
	}
	if raw, present := body["allowed_origins"]; present {
		var list []string
		if json.Unmarshal(raw, &list) != nil || list == nil {
			return programs.New{}, programs.ErrOrigin
		}
		if len(list) > MaxAllowedOrigins {
			return programs.New{}, apierr.Invalid(fmt.Sprintf("allowed_origins must list at most %d origins", MaxAllowedOrigins))
		}
		n.AllowedOrigins = list
	}
	return n, nil
}
