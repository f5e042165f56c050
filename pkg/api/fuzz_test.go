package api_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reftrack/reftrack/pkg/demoshop"
	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/sdk"
)

// Fuzz targets of the routes that take what outsiders type or send. Each starts one server on a seeded
// database, with rate limits that never refuse, and asserts for every input: no 5xx, and an answer that
// fits the spec (status, headers, and for errors the route's envelope: platform, typed, or an HTML page).
// `go test` runs the seeds below and the corpus in testdata/fuzz/<target>; `make fuzz` explores.
//
// Inputs name the seeded fixtures with placeholders, so that a corpus file stays meaningful from one
// database to the next: {{aff}} the referral URL, {{click}} a click id, {{customer}} a customer with a
// lead, {{txn}} a recorded sale, {{program}} the program id, {{state}} a pending login session, {{now}}
// the Unix time, {{n}} a number new to each input (so that a transaction or event id is new, and the
// input is processed rather than answered as a duplicate); the ledger's targets add {{commission}} (the
// sale's commission, in a payout), {{open}} (a pending commission) and {{payout}} (that payout).

// nested is a JSON value nested n levels deep.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// hostileValues are the values each member of a seed body is tried with: strings PostgreSQL cannot store
// (NUL; invalid UTF-8, which JSON encoding turns into U+FFFD), an empty one, a long one that does not
// compress (an index entry of it would pass the size limit), JSON nested too deeply, and a number beyond
// every range.
var hostileValues = []string{"a\x00b", "\xff\xfe", "", noise(3000), nested(40), "1e400"}

// noise is n letters and digits that do not compress, the same each time.
func noise(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(15, 15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// setField is body (a JSON object, else body as it is) with the member at path (dot-separated, objects
// made on the way) set to value: value itself when it is JSON, else value as a JSON string. It lets the
// fuzzer change one member's value freely, bytes and all, while the body stays JSON.
func setField(body, path, value string) string {
	if path == "" {
		return body
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return body
	}
	var v any = value
	if json.Valid([]byte(value)) {
		v = json.RawMessage(value)
	}
	keys := strings.Split(path, ".")
	cur := obj
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[keys[len(keys)-1]] = v
	b, err := json.Marshal(obj)
	if err != nil {
		return body
	}
	return string(b)
}

// jsonInput is one input of a JSON route's target: a body, and a member to set in it.
type jsonInput struct{ body, field, value string }

// jsonSeeds are the seeds of a JSON route: each valid body, each of its members with every hostile value,
// a NUL in a member name and nesting at the limit, then bodies that are not objects or not JSON.
func jsonSeeds(valid ...string) []jsonInput {
	var seeds []jsonInput
	for _, body := range valid {
		seeds = append(seeds, jsonInput{body: body})
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			panic(fmt.Sprintf("seed %s: %v", body, err))
		}
		fields := make([]string, 0, len(m))
		for field := range m {
			fields = append(fields, field)
		}
		slices.Sort(fields)
		for _, field := range fields {
			for _, v := range hostileValues {
				seeds = append(seeds, jsonInput{body, field, v})
			}
		}
		seeds = append(seeds, jsonInput{body, "a\x00b", "1"}, jsonInput{body, "deep", nested(31)})
	}
	for _, body := range []string{"", "null", "[]", "{}", `"\u0000"`, "123", "{", `{"a":1} {}`, nested(33), nested(10000),
		strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40), "\xff\xfe", `{"a":"\xff"}`} {
		seeds = append(seeds, jsonInput{body: body})
	}
	return seeds
}

// fuzzEnv is one fuzz target's server and its fixtures.
type fuzzEnv struct {
	*apitest.Env
	seed      seed.Result
	fixtures  *strings.Replacer
	pairs     []string // the fixtures' placeholders and values
	clickID   string
	customer  string
	txn       string
	stateOpen string
	n         atomic.Int64 // {{n}}: a number new to each input, for ids that must not repeat
}

// startFuzz starts the target's server with a seeded program and its fixtures: a click, a customer with
// a lead, a recorded sale (paid by the Stripe payment pi_fuzz_1), a pending login session and a Stripe
// connection.
func startFuzz(f *testing.F, opts seed.Options) *fuzzEnv {
	f.Helper()
	env := apitest.Start(f, apitest.Options{LimitStore: unlimited{}})
	e := &fuzzEnv{Env: env, seed: env.Seed(opts), customer: "fuzz-customer", txn: "fuzz-txn-1"}
	if _, err := payments.Connect(f.Context(), env.DB, e.seed.ProgramID, payments.ProviderStripe, whsec); err != nil {
		f.Fatal(err)
	}
	key := apitest.Bearer(e.seed.APIKey)
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": e.seed.AffiliateURL}, "User-Agent", "Mozilla/5.0 Firefox/132.0")
	e.clickID, _ = res.JSON(f)["click_id"].(string)
	if res := env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": e.clickID, "customer_key": e.customer}, key...); res.Status != http.StatusOK {
		f.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": e.txn, "amount_cents": 10000, "customer_key": e.customer,
		"provider": "stripe", "provider_payment_id": "pi_fuzz_1"}, key...); res.Status != http.StatusOK {
		f.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	res = env.Do(http.MethodPost, "/api/v1/cli/auth/start", nil)
	e.stateOpen, _ = res.JSON(f)["data"].(map[string]any)["state"].(string)
	e.fixture("{{aff}}", e.seed.AffiliateURL, "{{click}}", e.clickID, "{{customer}}", e.customer,
		"{{txn}}", e.txn, "{{program}}", itoa(e.seed.ProgramID), "{{state}}", e.stateOpen)
	return e
}

// fixture adds placeholders and their values (pairs) to the fixtures.
func (e *fuzzEnv) fixture(pairs ...string) {
	e.pairs = append(e.pairs, pairs...)
	e.fixtures = strings.NewReplacer(e.pairs...)
}

// fill replaces the placeholders of an input.
func (e *fuzzEnv) fill(s string) string {
	s = strings.ReplaceAll(e.fixtures.Replace(s), "{{now}}", fmt.Sprint(time.Now().Unix()))
	return strings.ReplaceAll(s, "{{n}}", fmt.Sprint(e.n.Add(1)))
}

// headerValue is s as a header value a client can send (control characters, which net/http refuses to
// send at all, become spaces).
func headerValue(s string) string {
	return strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// page reports whether the answer is an HTML page.
func page(res *apitest.Response) bool {
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	return mt == "text/html"
}

// exchange sends req and checks the answer: below 500, fitting the spec, and an error in the expected
// form — an HTML page on the pages, else a JSON object whose "error" is an object with a message (the
// platform or the typed envelope, which the spec check tells apart).
func (e *fuzzEnv) exchange(t *testing.T, req *http.Request, pages bool) *apitest.Response {
	t.Helper()
	e.Logs.Reset() // one input's log, shown if it fails (inputs run one at a time in a process)
	res, mismatch := e.Exchange(req)
	if res == nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, mismatch)
	}
	if res.Status >= 500 {
		t.Fatalf("%s %s answered %d: %s\nserver log:\n%s", req.Method, req.URL, res.Status, res.Body, e.Logs.String())
	}
	if mismatch != nil {
		t.Fatalf("answer does not fit the spec: %v", mismatch)
	}
	if res.Status < 400 {
		return res
	}
	if pages {
		if !page(res) {
			t.Fatalf("%s %s answered %d with %q, want an HTML page: %s", req.Method, req.URL, res.Status, res.Header.Get("Content-Type"), res.Body)
		}
		return res
	}
	var body struct {
		Error *struct {
			Message *string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil || body.Error == nil || body.Error.Message == nil {
		t.Fatalf("%s %s answered %d without an error envelope: %s", req.Method, req.URL, res.Status, res.Body)
	}
	return res
}

// post builds a POST of body with Content-Type contentType ("" for none) and headers (name, value pairs).
func (e *fuzzEnv) post(t *testing.T, path, contentType, body string, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", headerValue(contentType))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headerValue(headers[i+1]))
	}
	return req
}

func addAll(f *testing.F, seeds []jsonInput) {
	for _, s := range seeds {
		f.Add(s.body, s.field, s.value)
	}
}

// addRaw adds seeds given as whole bodies.
func addRaw(f *testing.F, bodies ...string) {
	for _, b := range bodies {
		f.Add(b, "", "")
	}
}

func FuzzClick(f *testing.F) {
	e := startFuzz(f, seed.Options{LeadAuth: "browser_allowed", Origins: []string{"https://shop.example.com"}})
	const ua, origin = "Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0", "https://shop.example.com"
	for _, s := range jsonSeeds(`{"affiliate_url":"{{aff}}"}`,
		`{"affiliate_url":"{{aff}}","page_url":"https://shop.example.com/p","page_title":"Shop","referrer_url":"https://news.example.com/",`+
			`"session_id":"sess-1","screen_resolution":"1920x1080","viewport_size":"1280x720","language":"de-DE","timezone":"Europe/Berlin","user_agent":"Mozilla/5.0"}`,
		`{"affiliate_url":"{{aff}}","additional_data":{"test_mode":true,"program_id":"{{program}}"}}`) {
		f.Add(s.body, s.field, s.value, ua, origin)
	}
	for _, h := range []string{"Mozilla/5.0 \xff\xfe", "\xff", strings.Repeat("A", 8000), ""} {
		f.Add(`{"affiliate_url":"{{aff}}"}`, "", "", h, origin)
		f.Add(`{"affiliate_url":"{{aff}}"}`, "", "", ua, "https://shop.example.com"+h)
	}
	f.Add(`{"affiliate_url":"{{aff}}"}`, "affiliate_url", "https://shop.example.com/?aff=nosuchlink", ua, origin)
	f.Fuzz(func(t *testing.T, body, field, value, userAgent, origin string) {
		req := e.post(t, "/api/v1/track/click", "application/json", setField(e.fill(body), field, value), "User-Agent", userAgent, "Origin", origin)
		e.exchange(t, req, false)
	})
}

func FuzzLead(f *testing.F) {
	e := startFuzz(f, seed.Options{LeadAuth: "browser_allowed", Origins: []string{"https://shop.example.com"}})
	for _, s := range jsonSeeds(`{"click_id":"{{click}}","customer_key":"lead-1","email":"ada@example.com"}`,
		`{"customer_key":"{{customer}}"}`, `{"click_id":"{{click}}","additional_data":{"test_mode":true,"program_id":"{{program}}"}}`) {
		f.Add(s.body, s.field, s.value, true)
		f.Add(s.body, s.field, s.value, false)
	}
	f.Add(`{"click_id":"{{click}}"}`, "additional_data.program_id", "99999999999999999999", false)
	f.Fuzz(func(t *testing.T, body, field, value string, server bool) {
		headers := []string{"Origin", "https://shop.example.com"}
		if server {
			headers = apitest.Bearer(e.seed.APIKey)
		}
		e.exchange(t, e.post(t, "/api/v1/track/lead", "application/json", setField(e.fill(body), field, value), headers...), false)
	})
}

// fuzzJSON fuzzes a JSON route at path with method and headers; inputs are (body, field, value).
func (e *fuzzEnv) fuzzJSON(f *testing.F, method, path string, headers ...string) {
	f.Fuzz(func(t *testing.T, body, field, value string) {
		req := e.post(t, path, "application/json", setField(e.fill(body), field, value), headers...)
		req.Method = method
		e.exchange(t, req, false)
	})
}

func FuzzSale(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	addAll(f, jsonSeeds(`{"transaction_id":"in_fz_1_{{n}}","amount_cents":4900,"currency":"USD","customer_key":"{{customer}}"}`,
		`{"transaction_id":"in_fz_2_{{n}}","amount_cents":4900,"currency":"eur","click_id":"{{click}}","provider":"stripe","provider_payment_id":"pi_1",`+
			`"livemode":true,"sale_type":"payment","event_name":"Purchase","subscription_id":"sub_1","subscription_interval":"month","is_recurring":true,`+
			`"occurred_at":"2020-01-01T00:00:00Z"}`,
		`{"amount_cents":100,"customer_key":"{{customer}}","additional_data":{"test_mode":true}}`))
	const body = `{"transaction_id":"in_fz_3_{{n}}","amount_cents":100,"customer_key":"{{customer}}"}`
	for _, v := range []string{"1e3", "-1", "0", "99999999999999999999999", `"100"`, "1000000000000", "9223372036854775807"} {
		f.Add(body, "amount_cents", v)
	}
	f.Add(body, "occurred_at", "9999-12-31T23:59:59Z")
	f.Add(body, "currency", "{}")
	f.Add(body, "currency", `"GBP"`)
	f.Add(body, "currency", `"gbq"`)
	f.Add(body, "currency", `"BHD"`)
	f.Add(body, "customer_key", "nobody")
	f.Add(`{"transaction_id":"in_fz_4_{{n}}","amount_cents":100,"click_id":"{{click}}"}`, "customer_key", noise(3000))
	f.Add(body, "amount_cents", "1000000000001")
	f.Add(body, "amount_cents", "999999999999999")
	e.fuzzJSON(f, http.MethodPost, "/api/v1/track/sale", apitest.Bearer(e.seed.APIKey)...)
}

func FuzzRefund(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	addAll(f, jsonSeeds(`{"transaction_id":"{{txn}}","refund_amount_cents":100,"reason":"refund","refund_reason":"asked nicely"}`,
		`{"transaction_id":"{{txn}}","reason":"chargeback"}`))
	for _, v := range []string{"0", "1e400", "9223372036854775807", "-9223372036854775808", "1.5"} {
		f.Add(`{"transaction_id":"{{txn}}"}`, "refund_amount_cents", v)
	}
	f.Add(`{"transaction_id":"{{txn}}"}`, "transaction_id", "nosuchsale")
	f.Add(`{"transaction_id":"{{txn}}"}`, "refund_amount_cents", "1000000000001")
	e.fuzzJSON(f, http.MethodPost, "/api/v1/track/refund", apitest.Bearer(e.seed.APIKey)...)
}

func FuzzCliInit(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	const body = `{"name":"Fuzz shop","domain":"fuzz.example.com","commission_type":"percent","commission_rate":25,"cookie_duration":30,"duration_months":12}`
	addAll(f, jsonSeeds(body,
		`{"name":"Fuzz fixed","domain":"https://fuzz.example.com/","commission_type":"recurring_fixed","commission_rate":9.99,"advertiser_id":"1"}`))
	for _, v := range []string{"-1", `"25"`, "0", "1e400", "99999999999999999999"} {
		f.Add(body, "commission_rate", v)
	}
	f.Add(body, "cookie_duration", "1e9")
	f.Add(body, "advertiser_id", "99999999999999999999")
	f.Add(body, "commission_type", "bogus")
	for _, rate := range []string{"1e15", "1e308", "0.0000001", "150"} {
		f.Add(body, "commission_rate", rate)
		f.Add(body, "domain", "not a domain")
	}
	e.fuzzJSON(f, http.MethodPost, "/api/v1/cli/init", apitest.Bearer(e.seed.AccountToken)...)
}

func FuzzCreateProgram(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	const body = `{"name":"Fuzz shop","domain":"fuzz.example.com","commission_type":"percent","commission_rate":25,"cookie_window_days":30,` +
		`"duration_months":12,"lead_auth":"browser_allowed","allowed_origins":["https://fuzz.example.com"]}`
	addAll(f, jsonSeeds(body, `{"name":"Fuzz fixed","domain":"https://fuzz.example.com/","commission_type":"recurring_fixed","commission_rate":9.99}`))
	for _, v := range []string{"-1", `"25"`, "0", "1e400", "99999999999999999999", "150"} {
		f.Add(body, "commission_rate", v)
	}
	for _, v := range []string{`["https://a.example.com\u0000"]`, `["\xff"]`, `[` + nested(40) + `]`, `"https://a.example.com"`, `[1]`} {
		f.Add(body, "allowed_origins", v)
	}
	f.Add(body, "cookie_window_days", "1e9")
	f.Add(body, "lead_auth", `"always"`)
	f.Add(body, "name", `"`+strings.Repeat("n", 201)+`"`)
	f.Add(body, "domain", `"not a domain"`)
	e.fuzzJSON(f, http.MethodPost, "/api/v1/workspaces/"+itoa(e.seed.AdvertiserID)+"/programs", apitest.Bearer(e.seed.AccountToken)...)
}

func FuzzUpdateProgram(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	const body = `{"name":"Renamed","domain":"shop.example.com","lead_auth":"browser_allowed","cookie_window_days":30,` +
		`"attribution_window_days":60,"commission_type":"percent","commission_rate":15}`
	addAll(f, jsonSeeds(body, `{"allowed_origins":["https://shop.example.com","https://www.shop.example.com"]}`))
	for _, v := range []string{`["https://a.example.com\u0000"]`, `["\xff"]`, `[` + nested(40) + `]`, `["https://x.example.com:99999"]`} {
		f.Add(`{"name":"x"}`, "allowed_origins", v)
	}
	f.Add(`{"name":"x"}`, "commission_rate", "-0")
	f.Add(`{"name":"x"}`, "cookie_window_days", "1e400")
	for _, v := range []string{`["USD","GBP"]`, `["GBP"]`, `["usd"]`, `[]`, `[null]`, `["\u0000"]`, `"USD"`, `[1,2]`} {
		f.Add(`{"default_currency":"GBP"}`, "currencies", v)
	}
	f.Add(`{"currencies":["USD","JPY"]}`, "default_currency", `"JPY"`)
	f.Add(`{"currencies":["USD","JPY"]}`, "default_currency", `"jpy"`)
	f.Add(`{"name":"x"}`, "name", "")
	for _, rate := range []string{"1e15", "1e308", "0.0000001", "1e400"} {
		f.Add(`{"name":"x"}`, "commission_rate", rate)
	}
	e.fuzzJSON(f, http.MethodPatch, "/api/v1/programs/"+itoa(e.seed.ProgramID), apitest.Bearer(e.seed.AccountToken)...)
}

// stripeEvent is a Stripe event envelope around object, as JSON with placeholders.
func stripeEvent(id, typ string, object map[string]any) string {
	b, err := json.Marshal(map[string]any{"id": id, "object": "event", "api_version": "2025-03-31.basil", "created": 1767225600,
		"data": map[string]any{"object": object}, "livemode": true, "pending_webhooks": 1, "type": typ})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func FuzzStripeWebhook(f *testing.F) { fuzzStripeWebhook(f, "/api/v1/webhooks/stripe/") }

// FuzzStripeWebhookAlias is the same at the path the original product's CLI registers.
func FuzzStripeWebhookAlias(f *testing.F) { fuzzStripeWebhook(f, "/webhooks/stripe/") }

func fuzzStripeWebhook(f *testing.F, prefix string) {
	e := startFuzz(f, seed.Options{})
	meta := map[string]any{"svc_click_id": "{{click}}", "svc_customer_key": "{{customer}}", "program_id": "{{program}}"}
	checkout := stripeEvent("evt_fz_1_{{n}}", "checkout.session.completed", checkoutSession("cs_fz_1_{{n}}", "payment", 4900, meta, true))
	refunded := stripeEvent("evt_fz_5_{{n}}", "charge.refunded", chargeRefunded("pi_fuzz_1", 10000, 5000))
	addRaw(f, checkout,
		stripeEvent("evt_fz_2_{{n}}", "checkout.session.completed", checkoutSession("cs_fz_2_{{n}}", "subscription", 1900, meta, true)),
		stripeEvent("evt_fz_3_{{n}}", "invoice.paid", invoiceBasil("in_fz_3_{{n}}", 1900, "subscription_cycle", meta)),
		stripeEvent("evt_fz_4_{{n}}", "invoice.payment_succeeded", invoiceLegacy("in_fz_4_{{n}}", 1900, "subscription_create", meta)),
		refunded,
		stripeEvent("evt_fz_6_{{n}}", "charge.dispute.created", disputeCreated("pi_fuzz_1", 1000)),
		stripeEvent("evt_fz_7_{{n}}", "customer.created", map[string]any{"id": "cus_1", "object": "customer"}),
		`{"id":"evt_fz_8_{{n}}","type":"charge.refunded","data":null}`, `{"object":"event"}`, "", "[]", "{", "\xff",
		`{"id":"evt_fz_9_{{n}}","type":"checkout.session.completed","data":{"object":`+nested(40)+`}}`)
	// The event's and its object's members that the processing reads, each with every hostile value.
	for _, field := range []string{"id", "type", "livemode", "data.object.id", "data.object.amount_total", "data.object.currency",
		"data.object.mode", "data.object.payment_intent", "data.object.customer", "data.object.metadata",
		"data.object.metadata.svc_click_id", "data.object.metadata.svc_customer_key", "data.object.metadata.program_id", "data.object.metadata.a\x00b"} {
		for _, v := range hostileValues {
			f.Add(checkout, field, v)
		}
	}
	for _, field := range []string{"data.object.amount", "data.object.amount_refunded", "data.object.payment_intent"} {
		for _, v := range append([]string{"-5", "1e15"}, hostileValues...) {
			f.Add(refunded, field, v)
		}
	}
	f.Add(checkout, "data.object.amount_total", "-5")
	for _, v := range []string{"1000000000000000", "-100000000000000", "0", "4102444800"} {
		f.Add(checkout, "created", v)
	}
	f.Add(stripeEvent("evt_fz_10_{{n}}", "invoice.paid", invoiceBasil("in_fz_10_{{n}}", 1900, "subscription_cycle", meta)), "data.object.status_transitions.paid_at", "-100000000000000")
	f.Add(stripeEvent("evt_fz_11_{{n}}", "charge.dispute.created", disputeCreated("pi_fuzz_1", 1000)), "data.object.id", noise(3000))
	f.Add(checkout, "data.object.amount_total", "1000000000001")
	path := prefix + itoa(e.seed.ProgramID)
	f.Fuzz(func(t *testing.T, payload, field, value string) {
		body := setField(e.fill(payload), field, value)
		// Signed with the program's secret, as Stripe signs, so that the payload reaches the parsing.
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(body), Secret: whsec})
		e.exchange(t, e.post(t, path, "application/json", body, "Stripe-Signature", signed.Header), false)
	})
}

// queryText is s as the raw query of a request line: bytes a URL cannot carry as they are (controls,
// spaces, '#', non-ASCII) are %-escaped, everything else (including broken escapes) is kept.
func queryText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '#' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func FuzzCliAuthPoll(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	for _, q := range []string{"state={{state}}", "state=", "", "state=nosuchstate", "state=%00", "state=a%00b", "state=%ff", "state=%fe%ff",
		"state=%zz", "state=%", "state=%e2%82", "state=a;b", "%zz=1&state={{state}}", "state={{state}}&state=%00", "state=" + strings.Repeat("s", 5000),
		manyFields(20000), manyFields(999) + "&state={{state}}", "state=\xff", "state=\x00"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, query string) {
		req, err := http.NewRequest(http.MethodGet, e.URL+"/api/v1/cli/auth/poll", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = queryText(e.fill(query))
		e.exchange(t, req, false)
	})
}

func FuzzLoginSubmit(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	const form = "application/x-www-form-urlencoded"
	valid := url.Values{"state": {"{{state}}"}, "email": {"fuzz@example.com"}, "name": {"Fuzz"}}.Encode()
	for _, s := range []struct{ contentType, body string }{
		{form, valid}, {form, "state={{state}}&email=not-an-email"}, {form, "state=nosuchstate&email=ada@example.com"}, {form, ""}, {"", valid},
		{form, "state=%00&email=ada@example.com"}, {form, "state={{state}}&email=ada%00@example.com"}, {form, "state={{state}}&email=ada@example.com&name=%00"},
		{form, "state=%ff&email=ada@example.com"}, {form, "state={{state}}&email=%ff@example.com&name=%fe%ff"}, {form, "st%00ate=x"},
		{form, "state=%zz"}, {form, "state=%"}, {form, "state=a;b"}, {form, manyFields(20000)}, {form, manyFields(999)},
		{form + "; charset=utf-8", valid}, {form + "; charset=%%%;;", valid}, {";;;=", valid}, {"text/plain; charset", valid},
		{"multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"state\"\r\n\r\nabc"},
		{"multipart/form-data", "--xyz\r\n\r\n"}, {"multipart/form-data; boundary=", "\x00\x01garbage"},
		{"multipart/form-data; boundary=xyz", "--xyz\r\nContent-Disposition: form-data; name=\"state\"\r\n\r\na\x00b\r\n--xyz--\r\n"},
		{"application/json", `{"state":"{{state}}","email":"ada@example.com"}`}, {form, strings.Repeat("x", 70000)},
	} {
		f.Add(s.contentType, s.body)
	}
	f.Fuzz(func(t *testing.T, contentType, body string) {
		e.exchange(t, e.post(t, "/login", contentType, e.fill(body)), true)
	})
}

// FuzzDemoShop sends the demo shop's routes (development mode's) every cookie: no 5xx, answers as
// specified. Its program has a click (the svc_click_id a browser would carry) and a signed-up customer.
func FuzzDemoShop(f *testing.F) {
	shop := &demoshop.Shop{}
	env := apitest.Start(f, apitest.Options{LimitStore: unlimited{}, Demo: shop})
	e := &fuzzEnv{Env: env, seed: env.Seed(seed.Options{})}
	shop.DB, shop.ProgramID, shop.Brand = env.DB.DB, e.seed.ProgramID, sdk.New(e.seed.APIKey, sdk.WithBaseURL(env.URL))
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": e.seed.AffiliateURL}, "User-Agent", "Mozilla/5.0 Firefox/132.0")
	click, _ := res.JSON(f)["click_id"].(string)
	for _, route := range []string{"GET /demo/session", "POST /demo/signup", "POST /demo/buy"} {
		f.Add(route, click, "")
		f.Add(route, "", "demo-customer-000000000000")
		f.Add(route, click, "demo-customer-")
		for _, v := range hostileValues {
			f.Add(route, v, v)
		}
	}
	f.Fuzz(func(t *testing.T, route, clickCookie, customerCookie string) {
		method, path, ok := strings.Cut(route, " ")
		if !ok || (method != http.MethodGet && method != http.MethodPost) || !strings.HasPrefix(path, "/demo/") || strings.ContainsAny(path, "?# ") {
			return
		}
		req, err := http.NewRequest(method, e.URL+path, nil)
		if err != nil {
			return
		}
		req.Header.Set("Cookie", headerValue("svc_click_id="+clickCookie+"; demo_customer="+customerCookie))
		e.exchange(t, req, false)
	})
}
