package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// unlimited is a rate-limit store under which no request is ever refused: hostile sweeps and fuzzing
// send far more than a minute's budget, and must reach the body checks.
type unlimited struct{}

func (unlimited) Increment(context.Context, string, time.Time) (int64, error) { return 1, nil }
func (unlimited) Decrement(context.Context, string, time.Time) error          { return nil }
func (unlimited) Count(context.Context, string, time.Time) (int64, error)     { return 0, nil }

// hostileRequest is one request of the sweep.
type hostileRequest struct {
	name, method, path, contentType string
	body                            string
	auth                            any // the operation's x-reftrack-auth
}

// Every operation of the spec, sent what a hostile client sends (NUL characters, invalid UTF-8 and
// broken escapes in queries and forms, path segments that name nothing, garbled Content-Types, malformed multipart bodies, too many
// fields, deep JSON): no answer is a 5xx, and every answer fits the spec (apitest checks each one).
func TestHostileInputNever5xx(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{LimitStore: unlimited{}})
	r := env.Seed(seed.Options{})
	if _, err := payments.Connect(t.Context(), env.DB, r.ProgramID, payments.ProviderStripe, whsec); err != nil {
		t.Fatal(err)
	}
	// A commission and a payout of the program, for the ledger's routes.
	customerWithLead(t, env, r, "hostile")
	commissionID := sale(env, r.APIKey, map[string]any{"transaction_id": "hostile-1", "amount_cents": 1000, "customer_key": "hostile"}).JSON(t)["commission_id"].(float64)
	account := apitest.Bearer(r.AccountToken)
	env.Do(http.MethodPost, fmt.Sprintf("/api/v1/commissions/%v/approve", commissionID), map[string]any{"release_hold": true}, account...)
	var payoutID float64
	if res := env.Do(http.MethodPost, "/api/v1/programs/"+itoa(r.ProgramID)+"/payouts", nil, account...).JSON(t)["data"].([]any); len(res) == 1 {
		payoutID = res[0].(map[string]any)["id"].(float64)
	} else {
		t.Fatalf("payouts: %v", res)
	}
	// A webhook endpoint (nothing listens on its port) and a test delivery to it, for the webhooks' routes.
	endpoint := env.Do(http.MethodPost, "/api/v1/programs/"+itoa(r.ProgramID)+"/webhook-endpoints", map[string]any{"url": "http://127.0.0.1:9/h"},
		account...).JSON(t)["data"].(map[string]any)["id"]
	delivery := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/webhook-endpoints/%v/test", endpoint), map[string]any{"event_type": "sale.created"},
		account...).JSON(t)["data"].(map[string]any)["id"]
	params := map[string]string{"programId": itoa(r.ProgramID), "linkId": itoa(r.LinkID), "advertiserId": itoa(r.AdvertiserID), "asset": "app.js",
		"commissionId": fmt.Sprint(commissionID), "payoutId": fmt.Sprint(payoutID), "endpointId": fmt.Sprint(endpoint),
		"deliveryId": fmt.Sprint(delivery), "slug": "no-such-program", "token": strings.Repeat("x", 32), "partnerId": itoa(r.PartnerID),
		"invitationId": "1"}
	var reqs []hostileRequest
	// The long queries and forms, built once for every route (built per route, under the race detector,
	// they were a tenth of the package's time).
	many := manyFieldInputs{huge: manyFields(20000), large: manyFields(2000)}
	fill := func(path string) string {
		for name, v := range params {
			path = strings.ReplaceAll(path, "{"+name+"}", v)
		}
		return path
	}
	for path, item := range env.Doc.Paths.Map() {
		for method, op := range item.Operations() {
			reqs = append(reqs, hostileRequests(method, fill(path), op, many)...)
			// Each path parameter with a segment that names nothing, the others as above.
			for name := range params {
				if !strings.Contains(path, "{"+name+"}") {
					continue
				}
				for _, seg := range []string{"%00", "%ff", "%41%00", noise(256)} {
					reqs = append(reqs, hostileRequest{name: "path " + name + " " + truncate(seg, 10), method: method,
						path: fill(strings.ReplaceAll(path, "{"+name+"}", seg)), auth: op.Extensions["x-reftrack-auth"]})
				}
			}
		}
	}
	sort.Slice(reqs, func(i, j int) bool {
		return reqs[i].path+reqs[i].method+reqs[i].name < reqs[j].path+reqs[j].method+reqs[j].name
	})
	for _, h := range reqs {
		var body any
		if h.body != "" || h.contentType != "" {
			body = h.body
		}
		// The credential the route takes, so that the request gets past authentication.
		headers := []string{"Stripe-Signature", "t=1,v1=00"}
		if h.auth == "account" || h.auth == "account-or-session" {
			headers = append(headers, apitest.Bearer(r.AccountToken)...)
		} else {
			headers = append(headers, apitest.Bearer(r.APIKey)...)
		}
		if h.contentType != "" {
			headers = append(headers, "Content-Type", h.contentType)
		}
		res := env.Do(h.method, h.path, body, headers...)
		if res.Status >= 500 {
			t.Errorf("%s %s (%s): %d %s", h.method, truncate(h.path, 80), h.name, res.Status, truncate(string(res.Body), 300))
		}
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// manyFields is a query or form with n fields.
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('&')
		}
		fmt.Fprintf(&b, "f%d=1", i)
	}
	return b.String()
}

// nulMembers is a JSON body with the members the routes read, each holding a NUL character.
const nulMembers = `{"name":"a\u0000","state":"\u0000","email":"a\u0000@x.com","affiliate_url":"https://x.com/?aff=\u0000","transaction_id":"t\u0000","customer_key":"c\u0000","click_id":"\u0000","domain":"x\u0000.com","id":"evt_\u0000","type":"checkout.session.completed\u0000","id_token":"\u0000","reason":"\u0000","refund_reason":"\u0000","amount_cents":100,"commission_type":"percent","commission_rate":10,"role":"admin\u0000","webhook_secret":"whsec_\u0000","provider":"stripe","short_link":"s\u0000","partner_id":1,"partner_name":"\u0000","enabled":true,"external_reference":"\u0000","ids":[1],"currency":"USD"}`

// manyFieldInputs are a query or form of 20000 fields (huge) and of 2000 (large).
type manyFieldInputs struct{ huge, large string }

func hostileRequests(method, path string, op *openapi3.Operation, many manyFieldInputs) []hostileRequest {
	var out []hostileRequest
	add := func(name, path, ct, body string) {
		out = append(out, hostileRequest{name: name, method: method, path: path, contentType: ct, body: body, auth: op.Extensions["x-reftrack-auth"]})
	}
	// Queries: every declared parameter with NUL, invalid UTF-8 and broken escapes, then too many fields.
	for _, v := range []string{"%00", "a%00b", "%ff", "%fe%ff", "%zz", "%", "%e2%82", "a;b", noise(3000)} {
		raw := []string{}
		for _, p := range op.Parameters {
			if p.Value.In == "query" {
				raw = append(raw, url.QueryEscape(p.Value.Name)+"="+v)
			}
		}
		raw = append(raw, "extra="+v, v+"=1")
		add("query "+truncate(v, 10), path+"?"+strings.Join(raw, "&"), "", "")
	}
	add("query 20000 fields", path+"?"+many.huge, "", "")
	if method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions {
		return out
	}
	// Bodies.
	deep := strings.Repeat("[", 40) + strings.Repeat("]", 40)
	for _, b := range []struct{ name, ct, body string }{
		{"json NUL members", "application/json", nulMembers},
		{"json long members", "application/json", strings.ReplaceAll(nulMembers, `\u0000`, noise(3000))},
		{"json NUL key", "application/json", `{"a\u0000b":"x"}`},
		{"json deep 40", "application/json", `{"a":` + deep + `}`},
		{"json deep object", "application/json", strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)},
		{"json invalid utf8", "application/json", "{\"name\":\"\xff\xfe\",\"email\":\"\xff@x.com\",\"state\":\"\xff\"}"},
		{"multipart broken", "multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"state\"\r\n\r\nabc"},
		{"multipart no boundary", "multipart/form-data", "--xyz\r\n\r\n"},
		{"multipart garbage", "multipart/form-data; boundary=", "\x00\x01garbage"},
		{"multipart NUL", "multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"state\"\r\n\r\na\x00b\r\n--xyz--\r\n"},
		{"garbled content type", "application/x-www-form-urlencoded; charset=%%%;;", "state=%zz"},
		{"garbled content type 2", ";;;=", "state=a"},
		{"garbled content type 3", "text/plain; charset", "{}"},
		{"form NUL", "application/x-www-form-urlencoded", "state=a%00b&email=a%00@x.com&name=%00&csrf_token=%00&client_id=%00&redirect_uri=%00&code=%00&grant_type=%00&code_verifier=%00"},
		{"form invalid utf8", "application/x-www-form-urlencoded", "state=%ff&email=%ff%fe@x.com&name=%ff&csrf_token=%ff&client_id=%ff"},
		{"form broken escape", "application/x-www-form-urlencoded", "state=%zz&email=%"},
		{"form 20000 fields", "application/x-www-form-urlencoded", many.huge},
		{"form 2000 fields", "application/x-www-form-urlencoded", many.large},
	} {
		add(b.name, path, b.ct, b.body)
	}
	return out
}

// Text PostgreSQL cannot store, and JSON nested too deeply, are refused before any handler with the
// messages of docs/rules.md#bad-input-abuse-and-faults, naming the field; nothing is stored.
func TestUnstorableTextRefused(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{LimitStore: unlimited{}})
	r := env.Seed(seed.Options{})
	if _, err := payments.Connect(t.Context(), env.DB, r.ProgramID, payments.ProviderStripe, whsec); err != nil {
		t.Fatal(err)
	}
	key, account := apitest.Bearer(r.APIKey), apitest.Bearer(r.AccountToken)
	sale := func(extra string) string {
		return `{"transaction_id":"t_1","amount_cents":100,"customer_key":"c"` + extra + `}`
	}
	event := `{"id":"evt_1","type":"checkout.session.completed","data":{"object":{"id":"cs_1","metadata":{"svc_click_id":"a\u0000"}}}}`
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(event), Secret: whsec})
	longEvent := `{"id":"evt_` + noise(3000) + `","type":"customer.created","data":{"object":{"id":"cus_1"}}}`
	longSigned := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(longEvent), Secret: whsec})
	tests := []struct {
		name, method, path, body string
		headers                  []string
		message                  string
	}{
		{"sale", http.MethodPost, "/api/v1/track/sale", `{"transaction_id":"t_\u0000","amount_cents":100,"customer_key":"c"}`, key,
			"transaction_id must not contain NUL characters"},
		{"sale nested", http.MethodPost, "/api/v1/track/sale", sale(`,"additional_data":{"test_mode":true,"note":["ok","\u0000"]}`), key,
			"additional_data.note[1] must not contain NUL characters"},
		{"sale member name", http.MethodPost, "/api/v1/track/sale", sale(`,"x\u0000y":1`), key, `x\u0000y must not contain NUL characters`},
		{"sale 33 deep", http.MethodPost, "/api/v1/track/sale", sale(`,"additional_data":` + nested(32)), key, "Request body is nested too deeply"},
		{"sale 40 deep", http.MethodPost, "/api/v1/track/sale", sale(`,"x":` + nested(40)), key, "Request body is nested too deeply"},
		{"refund", http.MethodPost, "/api/v1/track/refund", `{"transaction_id":"t_1","refund_reason":"\u0000"}`, key,
			"refund_reason must not contain NUL characters"},
		{"lead", http.MethodPost, "/api/v1/track/lead", `{"customer_key":"k\u0000"}`, key, "customer_key must not contain NUL characters"},
		{"click", http.MethodPost, "/api/v1/track/click", `{"affiliate_url":"` + r.AffiliateURL + `","page_title":"\u0000"}`, nil,
			"page_title must not contain NUL characters"},
		{"partner", http.MethodPost, "/api/v1/programs/" + itoa(r.ProgramID) + "/partners", `{"name":"P\u0000","email":"p@example.com"}`, account,
			"name must not contain NUL characters"},
		{"cli init", http.MethodPost, "/api/v1/cli/init", `{"name":"N","domain":"x\u0000.com","commission_type":"percent","commission_rate":5}`, account,
			"domain must not contain NUL characters"},
		{"program", http.MethodPatch, "/api/v1/programs/" + itoa(r.ProgramID), `{"allowed_origins":["https://a.example.com","\u0000"]}`, account,
			"allowed_origins[1] must not contain NUL characters"},
		{"callback", http.MethodPost, "/api/v1/cli/auth/callback", `{"state":"\u0000","id_token":"x"}`, nil, "state must not contain NUL characters"},
		{"webhook", http.MethodPost, "/api/v1/webhooks/stripe/" + itoa(r.ProgramID), event, []string{"Stripe-Signature", signed.Header},
			"data.object.metadata.svc_click_id must not contain NUL characters"},
		{"poll NUL", http.MethodGet, "/api/v1/cli/auth/poll?state=a%00", "", nil, "state must not contain NUL characters"},
		{"poll UTF-8", http.MethodGet, "/api/v1/cli/auth/poll?state=%ff", "", nil, "state must be valid UTF-8"},
		{"poll escape", http.MethodGet, "/api/v1/cli/auth/poll?state=%zz", "", nil, `Invalid query parameter state: invalid %-escape "%zz"`},
		{"events query", http.MethodGet, "/api/tracking/events/" + itoa(r.ProgramID) + "?dateFrom=%00", "", account, "dateFrom must not contain NUL characters"},
		// The ledger's routes.
		{"reject", http.MethodPost, "/api/v1/commissions/1/reject", `{"reason":"no\u0000"}`, account, "reason must not contain NUL characters"},
		{"paid", http.MethodPost, "/api/v1/payouts/1/paid", `{"external_reference":"\u0000"}`, account, "external_reference must not contain NUL characters"},
		{"failed", http.MethodPost, "/api/v1/payouts/1/failed", `{"reason":"\u0000"}`, account, "reason must not contain NUL characters"},
		{"payouts currency", http.MethodPost, "/api/v1/programs/" + itoa(r.ProgramID) + "/payouts", `{"currency":"US\u0000"}`, account,
			"currency must not contain NUL characters"},
		{"bulk approve nested", http.MethodPost, "/api/v1/programs/" + itoa(r.ProgramID) + "/commissions/approve", `{"ids":[1],"note":["\u0000"]}`, account,
			"note[0] must not contain NUL characters"},
		{"commissions cursor", http.MethodGet, "/api/v1/programs/" + itoa(r.ProgramID) + "/commissions?cursor=a%00", "", account,
			"cursor must not contain NUL characters"},
		{"commissions created_from", http.MethodGet, "/api/v1/programs/" + itoa(r.ProgramID) + "/commissions?created_from=%ff", "", account,
			"created_from must be valid UTF-8"},
		{"payouts status", http.MethodGet, "/api/v1/programs/" + itoa(r.ProgramID) + "/payouts?status=%00", "", account,
			"status must not contain NUL characters"},
		{"export format", http.MethodGet, "/api/v1/programs/" + itoa(r.ProgramID) + "/payouts.csv?format=%zz", "", account,
			`Invalid query parameter format: invalid %-escape "%zz"`},
		{"query fields", http.MethodGet, "/api/v1/cli/auth/poll?" + manyFields(20000), "", nil, "Invalid query string: more than 1000 parameters"},
		// Indexed text longer than an index entry may be.
		{"lead key", http.MethodPost, "/api/v1/track/lead", `{"customer_key":"` + noise(256) + `"}`, key, "customer_key must be a string of at most 255 characters"},
		{"sale key", http.MethodPost, "/api/v1/track/sale", `{"transaction_id":"t_1","amount_cents":100,"customer_key":"` + noise(3000) + `"}`, key,
			"customer_key must be a string of at most 255 characters"},
		// Optional members of the wrong type: the spec promises their types, so they are refused, never dropped.
		{"click metadata type", http.MethodPost, "/api/v1/track/click", `{"affiliate_url":"` + r.AffiliateURL + `","session_id":1e400}`, nil,
			"session_id must be a string"},
		{"click additional_data type", http.MethodPost, "/api/v1/track/click", `{"affiliate_url":"` + r.AffiliateURL + `","additional_data":"x"}`, nil,
			"additional_data must be an object"},
		{"lead email type", http.MethodPost, "/api/v1/track/lead", `{"customer_key":"k","email":5}`, key, "email must be a string"},
		{"lead test_mode type", http.MethodPost, "/api/v1/track/lead", `{"customer_key":"k","additional_data":{"test_mode":"yes"}}`, key,
			"additional_data.test_mode must be a boolean"},
		{"sale program_id type", http.MethodPost, "/api/v1/track/sale", sale(`,"additional_data":{"program_id":"x"}`), key,
			"additional_data.program_id must be a program id (a positive integer)"},
		{"sale customer_key type", http.MethodPost, "/api/v1/track/sale", `{"transaction_id":"t_1","amount_cents":100,"customer_key":7}`, key,
			"customer_key must be a string"},
		// JSON Schema's "email" is ASCII (RFC 5321); an internationalised address is not one.
		{"partner email", http.MethodPost, "/api/v1/programs/" + itoa(r.ProgramID) + "/partners", `{"name":"P","email":"\ufffd@x.com"}`, account,
			"Invalid request body: email: must be an email address such as ana@example.com"},
		{"webhook event id", http.MethodPost, "/api/v1/webhooks/stripe/" + itoa(r.ProgramID), longEvent, []string{"Stripe-Signature", longSigned.Header},
			"Invalid Stripe event: id is longer than 255 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			res := env.Do(tt.method, tt.path, body, tt.headers...)
			if res.Status != http.StatusBadRequest {
				t.Fatalf("status = %d, body %s", res.Status, res.Body)
			}
			if e, _ := res.JSON(t)["error"].(map[string]any); e["message"] != tt.message {
				t.Errorf("message = %q, want %q", e["message"], tt.message)
			}
		})
	}
	// 32 levels are allowed.
	if res := env.Do(http.MethodPost, "/api/v1/track/sale", sale(`,"x":`+nested(31)), key...); res.Status == http.StatusBadRequest &&
		strings.Contains(string(res.Body), "nested") {
		t.Errorf("32 levels refused: %s", res.Body)
	}
	if n := env.Count(`SELECT (SELECT count(*) FROM sales) + (SELECT count(*) FROM leads) + (SELECT count(*) FROM processor_events) +
		(SELECT count(*) FROM programs WHERE id <> $1)`, r.ProgramID); n != 0 {
		t.Errorf("%d rows stored", n)
	}
}

// The pages a browser opens answer malformed input with an HTML page, the development issuer's token
// endpoint with an OAuth error.
func TestMalformedFormsAndQueriesOnPages(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{LimitStore: unlimited{}})
	const form = "application/x-www-form-urlencoded"
	state := startLogin(t, env)["state"].(string)
	pageTests := []struct {
		name, method, path, contentType, body string
		status                                int
		message                               string
	}{
		{"state NUL", http.MethodGet, "/login?state=%00", "", "", 400, "state must not contain NUL characters"},
		{"state UTF-8", http.MethodGet, "/login?state=%ff", "", "", 400, "state must be valid UTF-8"},
		{"state escape", http.MethodGet, "/login?state=%zz", "", "", 400, `Invalid query parameter state: invalid %-escape &#34;%zz&#34;`},
		{"callback", http.MethodGet, "/login/callback?code=%00", "", "", 400, "code must not contain NUL characters"},
		{"authorize", http.MethodGet, "/dev/oidc/authorize?redirect_uri=%ff", "", "", 400, "redirect_uri must be valid UTF-8"},
		{"multipart", http.MethodPost, "/login", "multipart/form-data; boundary=x", "--x\r\n\r\n", 400, "Content-Type must be " + form},
		{"garbled type", http.MethodPost, "/login", ";;;=", "state=x", 400, "Content-Type must be " + form},
		{"form NUL", http.MethodPost, "/login", form, "state=x&email=a%00@x.com", 400, "email must not contain NUL characters"},
		{"form escape", http.MethodPost, "/dev/oidc/authorize", form, "state=%zz", 400, `Invalid form field state: invalid %-escape &#34;%zz&#34;`},
		{"form fields", http.MethodPost, "/dashboard/logout", form, manyFields(2000), 400, "Invalid form body: more than 1000 fields"},
		{"form too large", http.MethodPost, "/dashboard/logout", form, manyFields(20000), 413, "Request body is larger than the limit of 64 KiB"},
		{"email too long", http.MethodPost, "/login", form, "state=" + state + "&email=" + noise(250) + "@example.com", 400, "Enter a valid email address."},
	}
	for _, tt := range pageTests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" || tt.contentType != "" {
				body = tt.body
			}
			var headers []string
			if tt.contentType != "" {
				headers = []string{"Content-Type", tt.contentType}
			}
			res := env.Do(tt.method, tt.path, body, headers...)
			if res.Status != tt.status || !page(res) || !strings.Contains(string(res.Body), tt.message) {
				t.Errorf("%d %s: %s", res.Status, res.Header.Get("Content-Type"), res.Body)
			}
		})
	}
	for _, tt := range []struct {
		body, description string
		status            int
	}{
		{"grant_type=%00", "grant_type must not contain NUL characters", 400},
		{manyFields(2000), "Invalid form body: more than 1000 fields", 400},
		{manyFields(20000), "Request body is larger than the limit of 64 KiB", 413},
	} {
		res := env.Do(http.MethodPost, "/dev/oidc/token", tt.body, "Content-Type", form)
		want := map[string]any{"error": "invalid_request", "error_description": tt.description}
		if res.Status != tt.status || !cmp.Equal(res.JSON(t), want) {
			t.Errorf("token %.40s: %d %s", tt.body, res.Status, res.Body)
		}
	}
}

// HTTP lets headers carry bytes that are not UTF-8; where a handler stores a header (the click's
// User-Agent) they are stored as U+FFFD rather than failing the request.
func TestHeaderTextNotUTF8(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{LimitStore: unlimited{}})
	r := env.Seed(seed.Options{Origins: []string{"https://shop.example.com"}})
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "Mozilla/5.0 \xff\xfe")
	if res.Status != http.StatusOK {
		t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND user_agent = $2`, res.JSON(t)["click_id"], "Mozilla/5.0 \uFFFD"); n != 1 { // a run of invalid bytes is one U+FFFD
		t.Error("User-Agent not stored with U+FFFD")
	}
	platformError(t, env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "Origin", "https://shop.example.com\xff"),
		http.StatusForbidden, "ForbiddenError", "Origin https://shop.example.com\uFFFD is not allowed for this program")
}
