package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The request bodies whose handlers check them member by member (x-reftrack-validation: handler): a
// member sent with a value of any JSON type gets its documented answer, never a JSON decoding error;
// a null member counts as absent, and so does a member whose name differs in case (names are exact,
// unknown members ignored); the members are checked in the documented order.

// valuesOfEachType are what each member is sent as: a string, an integer, a fraction, a boolean, an
// object and an array.
var valuesOfEachType = []string{`"s"`, `7`, `1.5`, `true`, `{}`, `[]`}

// bodyRoute is a route whose handler checks its body, and what each member's values answer.
type bodyRoute struct {
	name, method, path string
	headers            []string
	// base is a body of the right types that is refused after every member was read, so that a member
	// of another type is refused for its type; final is that answer.
	base, final string
	// members maps each member's path (dotted; an array index as a number) to what its values of
	// valuesOfEachType answer, keyed by those values separated by spaces; a value not listed answers
	// final (the member takes it).
	members map[string]map[string]string
	// order is members in the order their refusals are answered.
	order []string
	// bodies are other bodies and their answers.
	bodies map[string]string
}

// bodyAnswer is a response as "status message" (the error's message; the status alone on a 2xx).
func bodyAnswer(t *testing.T, res *apitest.Response) string {
	t.Helper()
	if res.Status < 300 {
		return strconv.Itoa(res.Status)
	}
	e, _ := res.JSON(t)["error"].(map[string]any)
	return fmt.Sprintf("%d %v", res.Status, e["message"])
}

// editMember is body (JSON) with the member at path set to value (JSON), or, with rename, removed and
// sent under its name in upper case instead.
func editMember(t *testing.T, body, path, value string, rename bool) string {
	t.Helper()
	root := decodeNumbers(t, body)
	keys := strings.Split(path, ".")
	node := root
	for i, k := range keys {
		last := i == len(keys)-1
		switch n := node.(type) {
		case map[string]any:
			switch {
			case last && rename:
				delete(n, k)
				n[strings.ToUpper(k)] = json.RawMessage(value)
			case last:
				n[k] = json.RawMessage(value)
			}
			node = n[k]
		case []any:
			idx, err := strconv.Atoi(k)
			if err != nil || idx >= len(n) || (last && rename) {
				t.Fatalf("path %s: %s is not an index of the base", path, k)
			}
			if last {
				n[idx] = json.RawMessage(value)
			}
			node = n[idx]
		default:
			t.Fatalf("path %s: the base has no %s", path, k)
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func decodeNumbers(t *testing.T, body string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return v
}

// memberOf is the JSON the body holds at path.
func memberOf(t *testing.T, body, path string) string {
	t.Helper()
	node := decodeNumbers(t, body)
	for _, k := range strings.Split(path, ".") {
		switch n := node.(type) {
		case map[string]any:
			node = n[k]
		case []any:
			idx, _ := strconv.Atoi(k)
			node = n[idx]
		}
	}
	out, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// expected is what the member at path answers when sent as value.
func (r bodyRoute) expected(path, value string) string {
	for values, want := range r.members[path] {
		if slices.Contains(strings.Fields(values), value) {
			return want
		}
	}
	return r.final
}

// refused is a value the member at path does not take: the last of valuesOfEachType, whose objects
// and arrays no member takes where a string is expected, so that it is refused for its type.
func (r bodyRoute) refused(path string) (string, bool) {
	for _, v := range slices.Backward(valuesOfEachType) {
		if r.expected(path, v) != r.final {
			return v, true
		}
	}
	return "", false
}

// bodySender sends bodies to routes, each request in a rate-limit window of its own.
type bodySender struct {
	env   *apitest.Env
	clock *apitest.Clock
}

func (s bodySender) answer(t *testing.T, r bodyRoute, body string) string {
	t.Helper()
	s.clock.Advance(time.Minute)
	return bodyAnswer(t, s.env.Do(r.method, r.path, body, r.headers...))
}

func (s bodySender) check(t *testing.T, r bodyRoute) {
	if got := s.answer(t, r, r.base); got != r.final {
		t.Fatalf("the base answers %q, want %q", got, r.final)
	}
	for _, path := range slices.Sorted(maps.Keys(r.members)) {
		for _, v := range valuesOfEachType {
			if got, want := s.answer(t, r, editMember(t, r.base, path, v, false)), r.expected(path, v); got != want {
				t.Errorf("%s = %s answers %q, want %q", path, v, got, want)
			}
		}
		if strings.ContainsAny(path[len(path)-1:], "0123456789") {
			continue // an array's item has no name, and a null item is not an absent one
		}
		// Null counts as absent, and so does a member whose name is not exactly the member's, whatever it holds.
		absent := s.answer(t, r, editMember(t, r.base, path, "null", false))
		if v, ok := r.refused(path); ok {
			if got := s.answer(t, r, editMember(t, r.base, path, v, true)); got != absent {
				t.Errorf("%s = %s under an upper-case name answers %q, want %q as when it is null", path, v, got, absent)
			}
		}
	}
	// The order: every member of order sent wrong, then put right one at a time.
	body := r.base
	for _, path := range r.order {
		v, ok := r.refused(path)
		if !ok {
			t.Fatalf("%s takes every value sent: it cannot be in the order", path)
		}
		body = editMember(t, body, path, v, false)
	}
	for _, path := range r.order {
		v, _ := r.refused(path)
		if got, want := s.answer(t, r, body), r.expected(path, v); got != want {
			t.Errorf("order: %s and every member after it wrong answers %q, want %q", path, got, want)
		}
		body = editMember(t, body, path, memberOf(t, r.base, path), false)
	}
	for _, b := range slices.Sorted(maps.Keys(r.bodies)) {
		if got := s.answer(t, r, b); got != r.bodies[b] {
			t.Errorf("%s answers %q, want %q", b, got, r.bodies[b])
		}
	}
}

// compact is a JSON text without insignificant space.
func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// notObjects are bodies that are JSON but not an object.
var notObjects = []string{`[1]`, `"x"`, `5`, `true`, `null`}

func withNotObjects(bodies map[string]string) map[string]string {
	for _, b := range notObjects {
		bodies[b] = "400 Request body must be a JSON object"
	}
	return bodies
}

func TestBodyMembersOfEveryType(t *testing.T) {
	t.Parallel()
	clock := apitest.NewClock(time.Now())
	env := apitest.Start(t, apitest.Options{Clock: clock.Now})
	r := env.Seed(seed.Options{})
	if r.ProgramID == 7 || r.AdvertiserID == 7 {
		t.Fatal("the ids must differ from the integer the members are sent as")
	}
	key, account := apitest.Bearer(r.APIKey), apitest.Bearer(r.AccountToken)
	pid, aid := itoa(r.ProgramID), itoa(r.AdvertiserID)
	recent := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	long := strings.Repeat("n", 201)
	const (
		notString  = `7 1.5 true {} []`
		notBool    = `"s" 7 1.5 {} []`
		notInteger = `"s" 1.5 true {} []`
		notNumber  = `"s" true {} []`
		anyValue   = `"s" 7 1.5 true {} []`
	)
	additionalData := map[string]map[string]string{
		"additional_data":            {`"s" 7 1.5 true []`: "400 additional_data must be an object"},
		"additional_data.program_id": {notInteger: "400 additional_data.program_id must be a program id (a positive integer)"},
		"additional_data.test_mode":  {notBool: "400 additional_data.test_mode must be a boolean"},
	}
	with := func(m map[string]map[string]string) map[string]map[string]string {
		out := maps.Clone(additionalData)
		maps.Copy(out, m)
		return out
	}
	const missingProgramFields = "400 Missing required fields: name, domain, commission_type, commission_rate"
	programMembers := func(cookie string) map[string]map[string]string {
		return map[string]map[string]string{
			"name":            {notString: missingProgramFields},
			"domain":          {notString: missingProgramFields, `"s"`: "201"},
			"commission_type": {notString: missingProgramFields, `"s"`: "400 Invalid commission_type: s. Valid: percent, fixed, recurring_percent, recurring_fixed"},
			"commission_rate": {notNumber: "400 commission_rate must be a positive number"},
			cookie:            {notInteger: "400 " + cookie + " must be between 1 and 3650"},
			"duration_months": {notInteger: "400 duration_months must be a whole number of months from 0 (lifetime) to 1200"},
		}
	}
	createMembers := programMembers("cookie_window_days")
	maps.Copy(createMembers, map[string]map[string]string{
		"lead_auth":         {anyValue: "400 lead_auth must be server_required or browser_allowed"},
		"allowed_origins":   {`"s" 7 1.5 true {}`: "400 allowed_origins entries must be origins such as https://shop.example.com"},
		"allowed_origins.0": {notString: "400 allowed_origins entries must be origins such as https://shop.example.com"},
	})
	initMembers := programMembers("cookie_duration")
	initMembers["advertiser_id"] = map[string]string{anyValue: "403 advertiser_id does not match the authenticated account"}
	commissionType := func(v string) string {
		return "400 Invalid commission_type: " + v + ". Valid: percent, fixed, recurring_percent, recurring_fixed"
	}
	currency := func(v string) string { return "422 currency " + v + " is not supported" }
	eventType := func(v string) string { return "400 Invalid event_type: " + v + ". Valid: click, lead, sale" }

	routes := []bodyRoute{
		{
			name: "click", method: http.MethodPost, path: "/api/v1/track/click",
			base: compact(t, `{"affiliate_url": "https://shop.example.com/?aff=nosuchlink", "additional_data": {"test_mode": false, "program_id": `+pid+`},
				"page_url": "u", "page_title": "t", "referrer_url": "r", "session_id": "s", "user_agent": "a", "screen_resolution": "1x1",
				"viewport_size": "1x1", "language": "en", "timezone": "UTC", "existing_click_id": "c"}`),
			final: "400 Referral link not found",
			members: with(map[string]map[string]string{
				"affiliate_url":     {anyValue: "400 Invalid affiliate_url"},
				"page_url":          {notString: "400 page_url must be a string"},
				"page_title":        {notString: "400 page_title must be a string"},
				"referrer_url":      {notString: "400 referrer_url must be a string"},
				"session_id":        {notString: "400 session_id must be a string"},
				"user_agent":        {notString: "400 user_agent must be a string"},
				"screen_resolution": {notString: "400 screen_resolution must be a string"},
				"viewport_size":     {notString: "400 viewport_size must be a string"},
				"language":          {notString: "400 language must be a string"},
				"timezone":          {notString: "400 timezone must be a string"},
				"existing_click_id": {},
			}),
			order: []string{"affiliate_url", "additional_data", "page_url", "page_title", "referrer_url", "session_id", "screen_resolution",
				"viewport_size", "language", "timezone", "user_agent"},
			bodies: withNotObjects(map[string]string{
				``: "400 affiliate_url is required",
				`{"affiliate_url":"https://shop.example.com/?aff=nosuchlink","additional_data":{"test_mode":true,"program_id":"` + pid + `"}}`: "400 Referral link not found",
				`{"affiliate_url":"https://shop.example.com/?aff=nosuchlink","additional_data":{"test_mode":true,"program_id":"0"}}`:           "400 additional_data.program_id must be a program id (a positive integer)",
			}),
		},
		{
			name: "lead", method: http.MethodPost, path: "/api/v1/track/lead", headers: key,
			base: compact(t, `{"click_id": "nosuchclick", "customer_key": "nosuchcustomer", "email": "a@example.com",
				"additional_data": {"test_mode": false, "program_id": `+pid+`}}`),
			final: "400 Customer not found. Provide a valid click_id or customer_key.",
			members: with(map[string]map[string]string{
				"click_id":     {notString: "400 click_id must be a string"},
				"customer_key": {notString: "400 customer_key must be a string"},
				"email":        {notString: "400 email must be a string"},
			}),
			order: []string{"click_id", "customer_key", "additional_data", "email"},
			bodies: withNotObjects(map[string]string{
				``: "400 click_id or customer_key is required",
				`{"customer_key":"nosuch","additional_data":{"test_mode":true,"program_id":"` + pid + `"}}`: "400 Customer not found. Provide a valid click_id or customer_key.",
				`{"customer_key":"nosuch","additional_data":{"test_mode":true,"program_id":"987654321"}}`:   "403 program_id does not match the API key",
			}),
		},
		{
			name: "sale", method: http.MethodPost, path: "/api/v1/track/sale", headers: key,
			base: compact(t, `{"transaction_id": "t1", "amount_cents": 100, "customer_key": "nosuch", "click_id": "nosuch", "currency": "usd",
				"occurred_at": "`+recent+`", "provider": "stripe", "provider_payment_id": "pi_1", "livemode": true, "sale_type": "payment",
				"is_recurring": false, "event_name": "e", "subscription_id": "sub", "subscription_interval": "month",
				"additional_data": {"test_mode": false, "program_id": `+pid+`}}`),
			final: "400 Customer not found. Provide customer_key or click_id.",
			members: with(map[string]map[string]string{
				"transaction_id":      {notString: "400 transaction_id is required and must be a string"},
				"amount_cents":        {notInteger: "400 amount_cents is required and must be a positive integer"},
				"occurred_at":         {anyValue: "400 occurred_at must be an ISO 8601 time within the last 30 days"},
				"provider":            {anyValue: "400 provider must be one of: stripe, paddle, lemonsqueezy, chargebee, recurly, braintree, paypal, adyen, square, shopify, app_store, google_play, manual, other"},
				"provider_payment_id": {notString: "400 provider_payment_id must be a string of 1 to 255 characters"},
				"livemode":            {notBool: "400 livemode must be a boolean"},
				"currency": {`"s"`: currency("s"), `7`: currency("7"), `1.5`: currency("1.5"), `true`: currency("true"), `{}`: currency("{}"),
					`[]`: currency("[]")},
				"sale_type":             {notString: "400 sale_type must be a string of at most 255 characters"},
				"event_name":            {notString: "400 event_name must be a string of at most 255 characters"},
				"subscription_id":       {notString: "400 subscription_id must be a string of at most 255 characters"},
				"subscription_interval": {notString: "400 subscription_interval must be a string of at most 255 characters"},
				"is_recurring":          {notBool: "400 is_recurring must be a boolean"},
				"customer_key":          {notString: "400 customer_key must be a string"},
				"click_id":              {notString: "400 click_id must be a string"},
			}),
			order: []string{"additional_data", "transaction_id", "amount_cents", "occurred_at", "provider", "provider_payment_id", "livemode",
				"currency", "sale_type", "event_name", "subscription_id", "subscription_interval", "is_recurring", "customer_key", "click_id"},
			bodies: withNotObjects(map[string]string{
				``: "400 transaction_id is required and must be a string",
				`{"amount_cents":100,"customer_key":"nosuch","additional_data":{"test_mode":true,"program_id":"` + pid + `"}}`: "400 Customer not found. Provide customer_key or click_id.",
				`{"amount_cents":100,"customer_key":"nosuch","currency":"{\"a\":1}"}`:                                          `400 transaction_id is required and must be a string`,
				`{"transaction_id":"t","amount_cents":100,"customer_key":"nosuch","currency":{"a":[1, 2.50]}}`:                 `422 currency {"a":[1, 2.50]} is not supported`,
				`{"transaction_id":"t","amount_cents":1e2,"customer_key":"nosuch"}`:                                            "400 amount_cents is required and must be a positive integer",
				`{"transaction_id":"t","amount_cents":99999999999999999999,"customer_key":"nosuch"}`:                           "400 amount_cents must be at most 1000000000000",
			}),
		},
		{
			name: "refund", method: http.MethodPost, path: "/api/v1/track/refund", headers: key,
			base:  `{"transaction_id":"nosuch","reason":"refund","refund_reason":"r","refund_amount_cents":100}`,
			final: "404 Sale not found for transaction_id",
			members: map[string]map[string]string{
				"transaction_id":      {notString: "400 transaction_id is required"},
				"reason":              {anyValue: "400 reason must be refund or chargeback"},
				"refund_reason":       {notString: "400 refund_reason must be a string of at most 2000 characters"},
				"refund_amount_cents": {notInteger: "400 refund_amount_cents must be a positive integer"},
			},
			order: []string{"transaction_id", "reason", "refund_reason", "refund_amount_cents"},
			bodies: withNotObjects(map[string]string{
				``: "400 transaction_id is required",
				`{"transaction_id":"nosuch","refund_amount_cents":-99999999999999999999}`: "400 refund_amount_cents must be a positive integer",
				`{"transaction_id":"nosuch","refund_amount_cents":99999999999999999999}`:  "400 refund_amount_cents must be at most 1000000000000",
			}),
		},
		{
			name: "cli auth callback", method: http.MethodPost, path: "/api/v1/cli/auth/callback",
			base:  `{"state":"nosuch","id_token":"x"}`,
			final: "404 Session not found or already used",
			members: map[string]map[string]string{
				"state":    {notString: "400 Missing required fields: state, id_token"},
				"id_token": {notString: "400 Missing required fields: state, id_token"},
			},
			bodies: withNotObjects(map[string]string{``: "400 Missing required fields: state, id_token"}),
		},
		{
			name: "cli init", method: http.MethodPost, path: "/api/v1/cli/init", headers: account,
			base: compact(t, `{"name": "N", "domain": "not a domain", "commission_type": "percent", "commission_rate": 10,
				"advertiser_id": `+aid+`, "cookie_duration": 30, "duration_months": 0}`),
			final:   "400 domain must be a host name such as shop.example.com",
			members: initMembers,
			order:   []string{"advertiser_id", "name", "commission_rate", "cookie_duration", "duration_months"},
			bodies: withNotObjects(map[string]string{
				``: missingProgramFields,
				`{"name":"N","domain":"d d","commission_type":"fixed","commission_rate":5,"advertiser_id":"` + aid + `"}`:          "400 domain must be a host name such as shop.example.com",
				`{"name":"N","domain":"d d","commission_type":"fixed","commission_rate":5,"advertiser_id":"-` + aid + `"}`:         "403 advertiser_id does not match the authenticated account",
				`{"name":" ","domain":"d d","commission_type":"fixed","commission_rate":5}`:                                        missingProgramFields,
				`{"name":"N","domain":"d d","commission_type":"fixed","commission_rate":5,"cookie_duration":99999999999999999999}`: "400 cookie_duration must be between 1 and 3650",
			}),
		},
		{
			name: "cli test event", method: http.MethodPost, path: "/api/v1/cli/test-event", headers: key,
			base:  `{"event_type":"bogus","type":"notchain","program_id":` + pid + `}`,
			final: "400 Invalid event_type: bogus. Valid: click, lead, sale",
			members: map[string]map[string]string{
				"event_type": {`"s"`: eventType("s"), `7`: eventType("7"), `1.5`: eventType("1.5"), `true`: eventType("true"), `{}`: eventType("{}"),
					`[]`: eventType("[]")},
				"type":       {},
				"program_id": {anyValue: "403 program_id does not match the API key"},
			},
			order: []string{"program_id", "event_type"},
			bodies: withNotObjects(map[string]string{
				``:                  eventType(""),
				`{"event_type":""}`: eventType(`""`),
				`{"event_type":"bogus","program_id":"` + pid + `"}`: eventType("bogus"),
				`{"event_type":"bogus","program_id":"0"}`:           "403 program_id does not match the API key",
			}),
		},
		{
			name: "create program", method: http.MethodPost, path: "/api/v1/workspaces/" + aid + "/programs", headers: account,
			base: compact(t, `{"name": "N", "domain": "not a domain", "commission_type": "percent", "commission_rate": 10, "cookie_window_days": 30,
				"duration_months": 0, "lead_auth": "browser_allowed", "allowed_origins": ["https://a.example.com"]}`),
			final:   "400 domain must be a host name such as shop.example.com",
			members: createMembers,
			order:   []string{"name", "commission_rate", "cookie_window_days", "duration_months", "lead_auth", "allowed_origins"},
			bodies: withNotObjects(map[string]string{
				``: missingProgramFields,
				`{"name":"` + long + `","domain":"d d","commission_type":"fixed","commission_rate":5}`: "400 name must be a string of 1 to 200 characters",
			}),
		},
		{
			name: "update program", method: http.MethodPatch, path: "/api/v1/programs/" + pid, headers: account,
			base: compact(t, `{"name": "N", "domain": "not a domain", "allowed_origins": ["https://a.example.com"], "lead_auth": "browser_allowed",
				"cookie_window_days": 30, "attribution_window_days": 30, "commission_type": "percent", "commission_rate": 10, "duration_months": 0,
				"hold_days": 10, "commission_approval": "manual", "payout_minimum_cents": 0, "enrollment": "open", "partner_approval": "manual",
				"partner_link_codes": true}`),
			final: "400 domain must be a host name such as shop.example.com",
			members: map[string]map[string]string{
				"name":                    {notString: "400 name must be a string of 1 to 200 characters"},
				"domain":                  {`"s"`: "200"},
				"allowed_origins":         {`"s" 7 1.5 true {}`: "400 allowed_origins entries must be origins such as https://shop.example.com"},
				"allowed_origins.0":       {notString: "400 allowed_origins entries must be origins such as https://shop.example.com"},
				"lead_auth":               {anyValue: "400 lead_auth must be server_required or browser_allowed"},
				"cookie_window_days":      {notInteger: "400 cookie_window_days must be between 1 and 3650"},
				"attribution_window_days": {notInteger: "400 attribution_window_days must be between 1 and 3650"},
				"commission_type": {`"s"`: commissionType("s"), `7`: commissionType("7"), `1.5`: commissionType("1.5"), `true`: commissionType("true"),
					`{}`: commissionType("{}"), `[]`: commissionType("[]")},
				"commission_rate":      {notNumber: "400 commission_rate must be a positive number"},
				"duration_months":      {notInteger: "400 duration_months must be a whole number of months from 0 (lifetime) to 1200"},
				"hold_days":            {notInteger: "400 hold_days must be between 0 and 365"},
				"commission_approval":  {notString: "400 commission_approval must be auto or manual"},
				"payout_minimum_cents": {notInteger: "400 payout_minimum_cents must be between 0 and 1000000000"},
				"enrollment":           {notString: "400 enrollment must be invite_only or open"},
				"partner_approval":     {notString: "400 partner_approval must be manual or auto"},
				"partner_link_codes":   {notBool: "400 partner_link_codes must be true or false"},
			},
			order: []string{"name", "allowed_origins", "lead_auth", "cookie_window_days", "attribution_window_days", "commission_type",
				"commission_rate", "duration_months", "hold_days", "commission_approval", "payout_minimum_cents", "enrollment", "partner_approval",
				"partner_link_codes"},
			bodies: withNotObjects(map[string]string{
				`{"unknown":1}`:           "200",
				`{"name":"` + long + `"}`: "400 name must be a string of 1 to 200 characters",
				`{"allowed_origins":[` + strings.Repeat(`"https://a.example.com",`, 50) + `"https://b.example.com"]}`: "400 allowed_origins must list at most 50 origins",
			}),
		},
		{
			name: "invitation", method: http.MethodPost, path: "/api/v1/programs/" + pid + "/invitations", headers: account,
			base:  `{"email":"a@example.com","name":"` + long + `","message":"m"}`,
			final: "400 name must be 1 to 200 characters",
			members: map[string]map[string]string{
				"email":   {anyValue: "400 email must be an email address"},
				"message": {notString: "400 message must be at most 2000 characters"},
			},
			order: []string{"email", "message"},
			bodies: withNotObjects(map[string]string{
				``: "400 Request body must have either email or invitations",
				`{"email":"a@example.com","invitations":[]}`: "400 Request body must have either email or invitations",
				`{"email":"a@example.com","name":""}`:        "400 name must be 1 to 200 characters",
			}),
		},
		{
			name: "invitation name", method: http.MethodPost, path: "/api/v1/programs/" + pid + "/invitations", headers: account,
			base:    `{"email":"c@example.com","name":"N","message":"` + strings.Repeat("m", 2001) + `"}`,
			final:   "400 message must be at most 2000 characters",
			members: map[string]map[string]string{"name": {notString: "400 name must be 1 to 200 characters"}},
		},
		{
			name: "invitations", method: http.MethodPost, path: "/api/v1/programs/" + pid + "/invitations", headers: account,
			base:  `{"invitations":[{"email":"b@example.com","name":"` + long + `","message":"m"}]}`,
			final: "400 invitations[0].name must be 1 to 200 characters",
			members: map[string]map[string]string{
				"invitations":           {anyValue: "400 invitations must hold 1 to 50 invitations"},
				"invitations.0":         {anyValue: "400 invitations[0].email must be an email address"},
				"invitations.0.email":   {anyValue: "400 invitations[0].email must be an email address"},
				"invitations.0.message": {notString: "400 invitations[0].message must be at most 2000 characters"},
			},
			order: []string{"invitations.0.email", "invitations.0.message"},
			bodies: map[string]string{
				`{"invitations":[{"email":"b@example.com"},{"email":"b@example.com","name":7}]}`: "400 invitations[1].name must be 1 to 200 characters",
			},
		},
	}
	send := bodySender{env: env, clock: clock}
	t.Run("routes", func(t *testing.T) {
		for _, rt := range routes {
			t.Run(rt.name, func(t *testing.T) {
				t.Parallel()
				send.check(t, rt)
			})
		}
	})
	if n := env.Count(`SELECT count(*) FROM clicks`) + env.Count(`SELECT count(*) FROM leads`) + env.Count(`SELECT count(*) FROM sales`); n != 0 {
		t.Errorf("%d clicks, leads and sales recorded by refused requests", n)
	}
}

// A body that is JSON but not an object is refused where the handler reads it: after the credential
// (program-key and account routes), after the account's workspace and the member's access (cli/init,
// management routes), but on the lead route before its optional key is looked up.
func TestBodyNotAnObjectAfterAccess(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r, other := env.Seed(seed.Options{}), env.Seed(seed.Options{})
	stranger, badKey := apitest.Bearer(other.AccountToken), apitest.Bearer("rt_"+strings.Repeat("x", 40))
	lonely := cliLogin(t, env, "lonely@example.com")["token"].(string)
	if _, err := env.DB.Exec(`DELETE FROM workspace_members WHERE email = 'lonely@example.com'`); err != nil {
		t.Fatal(err)
	}
	pid := itoa(r.ProgramID)
	for _, tc := range []struct {
		method, path string
		headers      []string
		want         string
	}{
		{http.MethodPost, "/api/v1/track/sale", badKey, "401 Invalid API token"},
		{http.MethodPost, "/api/v1/track/refund", badKey, "401 Invalid API token"},
		{http.MethodPost, "/api/v1/cli/test-event", badKey, "401 Invalid API token. No program matches this key: it may have been regenerated. " +
			"Ask a workspace owner of the program to regenerate the key in Settings → API keys and use the new one; creating a new program does not help."},
		{http.MethodPost, "/api/v1/track/lead", badKey, "400 Request body must be a JSON object"},
		{http.MethodPost, "/api/v1/cli/init", apitest.Bearer(lonely), "403 No advertiser found for this account — run the login command again"},
		{http.MethodPost, "/api/v1/workspaces/" + itoa(r.AdvertiserID) + "/programs", stranger, "403 You are not a member of this workspace"},
		{http.MethodPatch, "/api/v1/programs/" + pid, stranger, "403 You are not a member of this program's workspace"},
		{http.MethodPost, "/api/v1/programs/" + pid + "/invitations", stranger, "403 You are not a member of this program's workspace"},
	} {
		for _, body := range notObjects {
			if got := bodyAnswer(t, env.Do(tc.method, tc.path, body, tc.headers...)); got != tc.want {
				t.Errorf("%s %s %s: %q, want %q", tc.method, tc.path, body, got, tc.want)
			}
		}
	}
	// The development issuer's id_token endpoint checks its body too.
	for _, body := range notObjects {
		if got := bodyAnswer(t, env.Do(http.MethodPost, "/dev/oidc/id-token", body)); got != "400 Request body must be a JSON object" {
			t.Errorf("id-token %s: %q", body, got)
		}
	}
}
