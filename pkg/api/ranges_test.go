package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The ranges of docs/rules.md#bad-input-abuse-and-faults, each boundary just inside and just outside,
// with their exact messages; a refusal stores nothing.

const (
	msgPositive    = "commission_rate must be a positive number"
	msgPercentMax  = "commission_rate must be at most 100 for percent commissions"
	msgFixedMax    = "commission_rate must be at most 1000000 for fixed commissions"
	msgDecimals    = "commission_rate must have at most 4 decimal places"
	msgDomain      = "domain must be a host name such as shop.example.com"
	msgOrigins     = "allowed_origins entries must be origins such as https://shop.example.com"
	msgCookie      = "cookie_window_days must be between 1 and 3650"
	msgAttribution = "attribution_window_days must be between 1 and 3650"
	msgDuration    = "duration_months must be a whole number of months from 0 (lifetime) to 1200"
	msgHold        = "hold_days must be between 0 and 365"
	msgApproval    = "commission_approval must be auto or manual"
	msgMinimum     = "payout_minimum_cents must be between 0 and 1000000000"
)

// rangeCase is a request body (raw JSON, so that numbers reach the server as written) and the 400 message
// it gets, "" when it is accepted.
type rangeCase struct {
	name, body, message string
}

// initBody is a cli/init body with the given members after name and domain (type and rate included).
func initBody(domain, rest string) string {
	return `{"name":"Ranges","domain":` + domain + `,` + rest + `}`
}

func TestCliInitRanges(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	auth := apitest.Bearer(r.AccountToken)
	const dom = `"shop.example.com"`
	for _, tc := range []rangeCase{
		// commission_rate: percent types.
		{"percent 100", initBody(dom, `"commission_type":"percent","commission_rate":100`), ""},
		{"percent 100.0001", initBody(dom, `"commission_type":"percent","commission_rate":100.0001`), msgPercentMax},
		{"recurring percent 100", initBody(dom, `"commission_type":"recurring_percent","commission_rate":100`), ""},
		{"recurring percent 100.0001", initBody(dom, `"commission_type":"recurring_percent","commission_rate":100.0001`), msgPercentMax},
		{"percent 150", initBody(dom, `"commission_type":"percent","commission_rate":150`), msgPercentMax},
		{"percent 1e308", initBody(dom, `"commission_type":"percent","commission_rate":1e308`), msgPercentMax},
		// commission_rate: fixed types, major units.
		{"fixed 1000000", initBody(dom, `"commission_type":"fixed","commission_rate":1000000`), ""},
		{"fixed 1000000.0001", initBody(dom, `"commission_type":"fixed","commission_rate":1000000.0001`), msgFixedMax},
		{"recurring fixed 1000000", initBody(dom, `"commission_type":"recurring_fixed","commission_rate":1000000`), ""},
		{"recurring fixed 1000001", initBody(dom, `"commission_type":"recurring_fixed","commission_rate":1000001`), msgFixedMax},
		{"fixed 9999999", initBody(dom, `"commission_type":"fixed","commission_rate":9999999`), msgFixedMax},
		{"fixed 1e15", initBody(dom, `"commission_type":"fixed","commission_rate":1e15`), msgFixedMax},
		{"fixed 1e308", initBody(dom, `"commission_type":"fixed","commission_rate":1e308`), msgFixedMax},
		// commission_rate: lower bound and decimal places.
		{"0.0001", initBody(dom, `"commission_type":"percent","commission_rate":0.0001`), ""},
		{"0.00001", initBody(dom, `"commission_type":"percent","commission_rate":0.00001`), msgDecimals},
		{"0.0000001", initBody(dom, `"commission_type":"percent","commission_rate":0.0000001`), msgDecimals},
		{"12.34567", initBody(dom, `"commission_type":"fixed","commission_rate":12.34567`), msgDecimals},
		{"0", initBody(dom, `"commission_type":"percent","commission_rate":0`), msgPositive},
		{"-1", initBody(dom, `"commission_type":"percent","commission_rate":-1`), msgPositive},
		{"string", initBody(dom, `"commission_type":"percent","commission_rate":"25"`), msgPositive},
		// domain.
		{"pasted URL", initBody(`"https://Pasted.example.com/"`, `"commission_type":"percent","commission_rate":5`), ""},
		{"not a domain", initBody(`"not a domain"`, `"commission_type":"percent","commission_rate":5`), msgDomain},
		{"path", initBody(`"https://x.com/path"`, `"commission_type":"percent","commission_rate":5`), msgDomain},
		{"port", initBody(`"x.com:8080"`, `"commission_type":"percent","commission_rate":5`), msgDomain},
		{"query", initBody(`"x.com?a=1"`, `"commission_type":"percent","commission_rate":5`), msgDomain},
		{"spaces", initBody(`" x.com"`, `"commission_type":"percent","commission_rate":5`), msgDomain},
		// cookie_duration (the original CLI's cookie_window_days).
		{"cookie 1", initBody(dom, `"commission_type":"percent","commission_rate":5,"cookie_duration":1`), ""},
		{"cookie 3650", initBody(dom, `"commission_type":"percent","commission_rate":5,"cookie_duration":3650`), ""},
		{"cookie 0", initBody(dom, `"commission_type":"percent","commission_rate":5,"cookie_duration":0`), "cookie_duration must be between 1 and 3650"},
		{"cookie 3651", initBody(dom, `"commission_type":"percent","commission_rate":5,"cookie_duration":3651`), "cookie_duration must be between 1 and 3650"},
		{"cookie huge", initBody(dom, `"commission_type":"percent","commission_rate":5,"cookie_duration":99999999999999999999`), "cookie_duration must be between 1 and 3650"},
		// duration_months: 0 is lifetime.
		{"duration 1200", initBody(dom, `"commission_type":"recurring_percent","commission_rate":5,"duration_months":1200`), ""},
		{"duration 1201", initBody(dom, `"commission_type":"recurring_percent","commission_rate":5,"duration_months":1201`), msgDuration},
		{"duration -1", initBody(dom, `"commission_type":"recurring_percent","commission_rate":5,"duration_months":-1`), msgDuration},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := env.Count(`SELECT count(*) FROM programs`)
			res := env.Do(http.MethodPost, "/api/v1/cli/init", tc.body, auth...)
			after := env.Count(`SELECT count(*) FROM programs`)
			if tc.message != "" {
				platformError(t, res, http.StatusBadRequest, "BadRequestError", tc.message)
				if after != before {
					t.Errorf("a refused init stored a program (%d → %d)", before, after)
				}
				return
			}
			if res.Status != http.StatusCreated || after != before+1 {
				t.Errorf("%d %s; programs %d → %d", res.Status, res.Body, before, after)
			}
		})
	}
	// What was accepted is stored as normalised, exactly.
	for q, want := range map[string]int{
		`SELECT count(*) FROM programs WHERE commission_type = 'percent' AND commission_rate = 100`:           1,
		`SELECT count(*) FROM programs WHERE commission_type = 'fixed' AND commission_rate = 1000000`:         1,
		`SELECT count(*) FROM programs WHERE commission_rate = 0.0001`:                                        1,
		`SELECT count(*) FROM programs WHERE domain = 'pasted.example.com'`:                                   1,
		`SELECT count(*) FROM programs WHERE cookie_window_days = 3650`:                                       1,
		`SELECT count(*) FROM programs WHERE commission_duration_months = 1200`:                               1,
		`SELECT count(*) FROM programs WHERE domain <> 'shop.example.com' AND domain <> 'pasted.example.com'`: 0,
	} {
		if n := env.Count(q); n != want {
			t.Errorf("%s: %d, want %d", q, n, want)
		}
	}
}

func TestUpdateProgramRanges(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{}) // percent, 20
	fixed := env.Seed(seed.Options{CommissionType: "fixed", CommissionRate: "500"})
	path := "/api/v1/programs/" + itoa(r.ProgramID)
	auth := apitest.Bearer(r.AccountToken)
	snapshot := func(id int64) string {
		t.Helper()
		var s string
		if err := env.DB.Get(&s, `SELECT row_to_json(p)::text FROM programs p WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []rangeCase{
		{"percent 100", `{"commission_rate":100}`, ""},
		{"percent 100.0001", `{"commission_rate":100.0001}`, msgPercentMax},
		{"percent 150", `{"commission_rate":150}`, msgPercentMax},
		{"percent 1e15", `{"commission_rate":1e15}`, msgPercentMax},
		{"percent 1e308", `{"commission_rate":1e308}`, msgPercentMax},
		{"fixed 1000000", `{"commission_type":"fixed","commission_rate":1000000}`, ""},
		{"fixed 1000000.0001", `{"commission_type":"fixed","commission_rate":1000000.0001}`, msgFixedMax},
		{"fixed 9999999", `{"commission_type":"recurring_fixed","commission_rate":9999999}`, msgFixedMax},
		{"type alone, stored rate too big", `{"commission_type":"percent"}`, msgPercentMax}, // 1000000 from above
		{"back to percent", `{"commission_type":"recurring_percent","commission_rate":0.0001}`, ""},
		{"0.00001", `{"commission_rate":0.00001}`, msgDecimals},
		{"0.0000001", `{"commission_rate":0.0000001}`, msgDecimals},
		{"0", `{"commission_rate":0}`, msgPositive},
		{"-5", `{"commission_rate":-5}`, msgPositive},
		{"string rate", `{"commission_rate":"5"}`, msgPositive},
		{"cookie 1", `{"cookie_window_days":1}`, ""},
		{"cookie 3650", `{"cookie_window_days":3650}`, ""},
		{"cookie 0", `{"cookie_window_days":0}`, msgCookie},
		{"cookie 3651", `{"cookie_window_days":3651}`, msgCookie},
		{"cookie string", `{"cookie_window_days":"30"}`, msgCookie},
		{"attribution 1", `{"attribution_window_days":1}`, ""},
		{"attribution 3650", `{"attribution_window_days":3650}`, ""},
		{"attribution 0", `{"attribution_window_days":0}`, msgAttribution},
		{"attribution 3651", `{"attribution_window_days":3651}`, msgAttribution},
		{"attribution huge", `{"attribution_window_days":99999999999999999999}`, msgAttribution},
		{"domain pasted", `{"domain":"https://New.Example.com/"}`, ""},
		{"domain not a domain", `{"domain":"not a domain"}`, msgDomain},
		{"domain path", `{"domain":"https://x.com/path"}`, msgDomain},
		{"domain port", `{"domain":"x.com:443"}`, msgDomain},
		{"domain number", `{"domain":5}`, msgDomain},
		{"origins", `{"allowed_origins":["https://a.example.com","http://localhost:3000/"]}`, ""},
		{"origin path", `{"allowed_origins":["https://a.example.com","https://x.com/path"]}`, msgOrigins},
		{"origin no scheme", `{"allowed_origins":["localhost:3000"]}`, msgOrigins},
		{"origin port", `{"allowed_origins":["https://a.example.com:99999"]}`, msgOrigins},
		{"origins not a list", `{"allowed_origins":"https://a.example.com"}`, msgOrigins},
		{"duration 1200", `{"duration_months":1200}`, ""},
		{"duration 1201", `{"duration_months":1201}`, msgDuration},
		{"duration -1", `{"duration_months":-1}`, msgDuration},
		{"duration 0 is lifetime", `{"duration_months":0}`, ""},
		// The ledger's settings.
		{"hold 0", `{"hold_days":0}`, ""},
		{"hold 365", `{"hold_days":365}`, ""},
		{"hold -1", `{"hold_days":-1}`, msgHold},
		{"hold 366", `{"hold_days":366}`, msgHold},
		{"hold huge", `{"hold_days":99999999999999999999}`, msgHold},
		{"hold fraction", `{"hold_days":1.5}`, msgHold},
		{"hold string", `{"hold_days":"30"}`, msgHold},
		{"approval manual", `{"commission_approval":"manual"}`, ""},
		{"approval sometimes", `{"commission_approval":"sometimes"}`, msgApproval},
		{"approval upper case", `{"commission_approval":"AUTO"}`, msgApproval},
		{"approval empty", `{"commission_approval":""}`, msgApproval},
		{"approval number", `{"commission_approval":1}`, msgApproval},
		{"minimum 0", `{"payout_minimum_cents":0}`, ""},
		{"minimum 10^9", `{"payout_minimum_cents":1000000000}`, ""},
		{"minimum -1", `{"payout_minimum_cents":-1}`, msgMinimum},
		{"minimum 10^9+1", `{"payout_minimum_cents":1000000001}`, msgMinimum},
		{"minimum huge", `{"payout_minimum_cents":-99999999999999999999}`, msgMinimum},
		{"minimum float", `{"payout_minimum_cents":10.5}`, msgMinimum},
		{"good hold, bad minimum", `{"hold_days":7,"payout_minimum_cents":-5}`, msgMinimum},
		// One bad field refuses the whole change.
		{"good name, bad window", `{"name":"Not stored","cookie_window_days":0}`, msgCookie},
		{"good rate, bad domain", `{"commission_rate":5,"domain":"a b"}`, msgDomain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(r.ProgramID)
			res := env.Do(http.MethodPatch, path, tc.body, auth...)
			if tc.message == "" {
				if res.Status != http.StatusOK {
					t.Errorf("%d %s", res.Status, res.Body)
				}
				return
			}
			platformError(t, res, http.StatusBadRequest, "BadRequestError", tc.message)
			if after := snapshot(r.ProgramID); after != before {
				t.Errorf("a refused change was stored:\n%s\n→\n%s", before, after)
			}
		})
	}
	p := env.Do(http.MethodGet, path, nil, auth...).JSON(t)["data"].(map[string]any)
	if p["commission_type"] != "recurring_percent" || p["commission_rate"] != 0.0001 || p["cookie_window_days"] != 3650.0 ||
		p["attribution_window_days"] != 3650.0 || p["domain"] != "new.example.com" || p["duration_months"] != nil ||
		p["name"] == "Not stored" || strings.Join(toStrings(p["allowed_origins"]), " ") != "https://a.example.com http://localhost:3000" ||
		p["hold_days"] != 365.0 || p["commission_approval"] != "manual" || p["payout_minimum_cents"] != 1e9 {
		t.Errorf("program = %v", p)
	}
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND hold_days = 365 AND commission_approval = 'manual' AND payout_minimum_cents = 1000000000`,
		r.ProgramID); n != 1 {
		t.Error("the ledger's settings were not stored")
	}
	// Another program keeps the defaults.
	if p := env.Do(http.MethodGet, "/api/v1/programs/"+itoa(fixed.ProgramID), nil, apitest.Bearer(fixed.AccountToken)...).JSON(t)["data"].(map[string]any); p["hold_days"] != 30.0 ||
		p["commission_approval"] != "auto" || p["payout_minimum_cents"] != 0.0 {
		t.Errorf("defaults = %v", p)
	}

	// The rate is checked against the type the program ends up with: fixed 500 cannot become percent.
	fixedPath := "/api/v1/programs/" + itoa(fixed.ProgramID)
	before := snapshot(fixed.ProgramID)
	platformError(t, env.Do(http.MethodPatch, fixedPath, `{"commission_type":"percent"}`, apitest.Bearer(fixed.AccountToken)...),
		http.StatusBadRequest, "BadRequestError", msgPercentMax)
	if snapshot(fixed.ProgramID) != before {
		t.Error("refused type change stored")
	}
}

// The other fields of a program change are checked by the handler too, with their own messages.
func TestUpdateProgramFieldTypes(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	path := "/api/v1/programs/" + itoa(r.ProgramID)
	auth := apitest.Bearer(r.AccountToken)
	for body, msg := range map[string]string{
		`{}`:                             "Request body must change at least one of: name, domain, allowed_origins, lead_auth, cookie_window_days, attribution_window_days, commission_type, commission_rate, duration_months, hold_days, commission_approval, payout_minimum_cents, enrollment, partner_approval, partner_link_codes, currencies, default_currency",
		`{"name":null}`:                  "Request body must change at least one of: name, domain, allowed_origins, lead_auth, cookie_window_days, attribution_window_days, commission_type, commission_rate, duration_months, hold_days, commission_approval, payout_minimum_cents, enrollment, partner_approval, partner_link_codes, currencies, default_currency",
		`[1]`:                            "Request body must be a JSON object",
		`{"name":""}`:                    "name must be a string of 1 to 200 characters",
		`{"name":7}`:                     "name must be a string of 1 to 200 characters",
		`{"lead_auth":"sometimes"}`:      "lead_auth must be server_required or browser_allowed",
		`{"commission_type":"tiered"}`:   "Invalid commission_type: tiered. Valid: percent, fixed, recurring_percent, recurring_fixed",
		`{"commission_type":3}`:          "Invalid commission_type: 3. Valid: percent, fixed, recurring_percent, recurring_fixed",
		`{"duration_months":"lifetime"}`: msgDuration,
		`{"allowed_origins":[` + strings.Repeat(`"https://a.example.com",`, 50) + `"https://b.example.com"]}`: "allowed_origins must list at most 50 origins",
	} {
		platformError(t, env.Do(http.MethodPatch, path, body, auth...), http.StatusBadRequest, "BadRequestError", msg)
	}
	// Unknown members are ignored (the interface's rule); the name limits are inclusive.
	res := env.Do(http.MethodPatch, path, `{"name":"`+strings.Repeat("é", 200)+`","unknown":1}`, auth...)
	if res.Status != http.StatusOK || res.JSON(t)["data"].(map[string]any)["name"] != strings.Repeat("é", 200) {
		t.Errorf("%d %s", res.Status, res.Body)
	}
	// Access is checked first: a stranger learns nothing about the body's problems.
	other := env.Seed(seed.Options{})
	platformError(t, env.Do(http.MethodPatch, path, `{"commission_rate":1e308}`, apitest.Bearer(other.AccountToken)...),
		http.StatusForbidden, "ForbiddenError", "You are not a member of this program's workspace")
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// duration_months 0, the original CLI's "lifetime", is lifetime on cli/init and PATCH alike: stored as
// NULL and shown as null.
func TestDurationMonthsZeroIsLifetime(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	auth := apitest.Bearer(r.AccountToken)
	res := env.Do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "Life", "domain": "life.example.com",
		"commission_type": "recurring_percent", "commission_rate": 10, "duration_months": 0}, auth...)
	if res.Status != http.StatusCreated {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	id := res.JSON(t)["data"].(map[string]any)["program_id"].(string)
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND commission_duration_months IS NULL`, id); n != 1 {
		t.Error("duration_months 0 not stored as lifetime")
	}
	path := "/api/v1/programs/" + id
	if p := env.Do(http.MethodGet, path, nil, auth...).JSON(t)["data"].(map[string]any); p["duration_months"] != nil {
		t.Errorf("duration_months = %v, want null", p["duration_months"])
	}
	// PATCH: 12 months, then 0 back to lifetime.
	if p := env.Do(http.MethodPatch, path, map[string]any{"duration_months": 12}, auth...).JSON(t)["data"].(map[string]any); p["duration_months"] != 12.0 {
		t.Errorf("duration_months = %v, want 12", p["duration_months"])
	}
	res = env.Do(http.MethodPatch, path, map[string]any{"duration_months": 0}, auth...)
	if p := res.JSON(t)["data"].(map[string]any); res.Status != http.StatusOK || p["duration_months"] != nil {
		t.Errorf("%d: duration_months = %v, want null", res.Status, p["duration_months"])
	}
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND commission_duration_months IS NULL`, id); n != 1 {
		t.Error("PATCH duration_months 0 not stored as lifetime")
	}
}

func TestAmountRanges(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	customerWithLead(t, env, r, "big")
	// Just outside: 400, nothing recorded.
	for body, msg := range map[string]string{
		`{"transaction_id":"big_1","customer_key":"big","amount_cents":1000000000001}`:        "amount_cents must be at most 1000000000000",
		`{"transaction_id":"big_1","customer_key":"big","amount_cents":99999999999999999999}`: "amount_cents must be at most 1000000000000",
		`{"transaction_id":"big_1","customer_key":"big","amount_cents":0}`:                    "amount_cents is required and must be a positive integer",
	} {
		codedError(t, sale(env, r.APIKey, body), 400, "BadRequestError", "invalid_request", msg)
	}
	if n := env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Fatalf("%d sales after refusals", n)
	}
	// Just inside: 10^12 cents is recorded with its exact commission (20%).
	res := sale(env, r.APIKey, `{"transaction_id":"big_1","customer_key":"big","amount_cents":1000000000000}`)
	if res.Status != http.StatusOK || res.JSON(t)["commission"].(map[string]any)["amount_cents"] != 200000000000.0 {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	// refund_amount_cents: just outside, then just inside (the whole sale).
	for body, msg := range map[string]string{
		`{"transaction_id":"big_1","refund_amount_cents":1000000000001}`:        "refund_amount_cents must be at most 1000000000000",
		`{"transaction_id":"big_1","refund_amount_cents":99999999999999999999}`: "refund_amount_cents must be at most 1000000000000",
		`{"transaction_id":"big_1","refund_amount_cents":0}`:                    "refund_amount_cents must be a positive integer",
	} {
		codedError(t, refund(env, r.APIKey, body), 400, "BadRequestError", "invalid_request", msg)
	}
	if n := env.Count(`SELECT count(*) FROM refunds`); n != 0 {
		t.Fatalf("%d refunds after refusals", n)
	}
	res = refund(env, r.APIKey, `{"transaction_id":"big_1","refund_amount_cents":1000000000000}`)
	if body := res.JSON(t); res.Status != http.StatusOK || body["status"] != "reversed" || body["refunded_amount_cents"] != 1e12 {
		t.Errorf("%d %s", res.Status, res.Body)
	}
}
