package api_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// FuzzPortal sends the partner portal's inputs: the bodies of a link with one's own code and of payout
// details, the stats' and the commissions' query strings (as the seeded partner, signed in), and the forms
// of an application and of an invitation's acceptance (as the people they are for). The checks are the
// other targets' (fuzz_test.go): no 5xx, an answer that fits the spec, the platform envelope on the JSON
// routes and an HTML page on the pages. Placeholders besides startFuzz's: {{csrf}} the session's CSRF
// token.
func FuzzPortal(f *testing.F) {
	e := startFuzz(f, seed.Options{})
	account := apitest.Bearer(e.seed.AccountToken)
	program := "/api/v1/programs/" + itoa(e.seed.ProgramID)
	if res := e.Do(http.MethodPatch, program, map[string]any{"enrollment": "open"}, account...); res.Status != http.StatusOK {
		f.Fatalf("open the program: %d %s", res.Status, res.Body)
	}
	slug, _ := e.Do(http.MethodGet, program, nil, account...).JSON(f)["data"].(map[string]any)["slug"].(string)
	if res := e.Do(http.MethodPost, program+"/invitations", map[string]any{"email": "fuzz-invitee@example.com"}, account...); res.Status != http.StatusCreated {
		f.Fatalf("invite: %d %s", res.Status, res.Body)
	}
	if err := e.Mail.SendAll(f.Context()); err != nil {
		f.Fatal(err)
	}
	var invitation string
	for _, m := range e.Mailbox.Messages() {
		if l := regexp.MustCompile(`/partners/invitations/([0-9A-Za-z]{32})`).FindStringSubmatch(m.Text); m.To == "fuzz-invitee@example.com" && l != nil {
			invitation = l[1]
		}
	}
	if invitation == "" {
		f.Fatal("no invitation mailed")
	}
	sessions := map[string]string{ // by route: the partner session it is sent with
		"partner":   fuzzPortalSignIn(f, e.Env, seed.PartnerEmail(e.seed.AccountEmail)),
		"applicant": fuzzPortalSignIn(f, e.Env, "fuzz-applicant@example.com"),
		"invitee":   fuzzPortalSignIn(f, e.Env, "fuzz-invitee@example.com"),
	}
	portal := "/api/v1/partner/programs/" + itoa(e.seed.ProgramID)
	routes := map[string]struct {
		method, path, session string
		form, json            bool // the body is a form, JSON; neither: it is the query
	}{
		"POST links":         {http.MethodPost, portal + "/links", "partner", false, true},
		"PUT payout-details": {http.MethodPut, portal + "/payout-details", "partner", false, true},
		"GET stats":          {http.MethodGet, portal + "/stats", "partner", false, false},
		"GET commissions":    {http.MethodGet, portal + "/commissions", "partner", false, false},
		"POST apply":         {http.MethodPost, "/p/" + slug, "applicant", true, false},
		"POST accept":        {http.MethodPost, "/partners/invitations/" + invitation, "invitee", true, false},
	}

	for _, s := range jsonSeeds(`{"code":"fuzz-{{n}}"}`) {
		f.Add("POST links", s.body, s.field, s.value)
	}
	for _, v := range []string{"ab", "A-B", strings.Repeat("a", 32), strings.Repeat("a", 33), strings.Repeat("a", 65), "ümlaut", "fuzz-taken", "a_b",
		"abc\n", "123", "---", "null", "42", "{}"} {
		f.Add("POST links", `{"code":"x"}`, "code", v)
	}
	for _, s := range jsonSeeds(`{"method":"paypal","paypal_email":"fuzz@example.com"}`, `{"method":"bank_transfer","bank_details":"IBAN DE89 3704"}`) {
		f.Add("PUT payout-details", s.body, s.field, s.value)
	}
	for _, c := range []struct{ field, value string }{{"method", "wire"}, {"method", "PAYPAL"}, {"method", "null"}, {"paypal_email", "Fuzz <fuzz@example.com>"},
		{"paypal_email", "fuzz@localhost"}, {"paypal_email", strings.Repeat("a", 330) + "@example.com"}, {"bank_details", strings.Repeat("é", 1001)},
		{"bank_details", strings.Repeat("x", 4001)}, {"bank_details", "  "}, {"paypal_email", "null"}} {
		f.Add("PUT payout-details", `{"method":"bank_transfer","bank_details":"IBAN"}`, c.field, c.value)
		f.Add("PUT payout-details", `{"method":"paypal","paypal_email":"fuzz@example.com"}`, c.field, c.value)
	}
	queries := []string{"", "%00", "a%00b=1", "%ff", "%zz", "%", "%e2%82", "a;b", manyFields(20000), manyFields(999), noise(3000), "\xff", "\x00"}
	for _, q := range append([]string{"days=7", "days=30", "days=90", "days=5", "days=", "days=7&days=30", "days=1e1", "days=99999999999999999999",
		"days=-7", "days=%00", "days=%ff", "days=7.0"}, queries...) {
		f.Add("GET stats", q, "", "")
	}
	for _, q := range append(append([]string{"status=pending", "status=paid&limit=1", "status=bogus", "limit=0", "limit=101", "limit=1e3",
		"status=pending&status=paid"}, cursorSeeds...), queries...) {
		f.Add("GET commissions", q, "", "")
	}
	for _, route := range []string{"POST apply", "POST accept"} {
		for _, body := range []string{"csrf_token={{csrf}}", "csrf_token={{csrf}}&message=Hello&website=https%3A%2F%2Ffuzz.example.com",
			"csrf_token={{csrf}}&website=javascript%3Aalert(1)", "csrf_token={{csrf}}&message=" + strings.Repeat("%C3%A9", 2001),
			"csrf_token={{csrf}}&website=" + strings.Repeat("a", 3000), "csrf_token={{csrf}}&message=%00", "csrf_token={{csrf}}&message=%ff",
			"csrf_token=x", "", "csrf_token=%zz", "%", "csrf_token={{csrf}}&" + manyFields(20000), "csrf_token={{csrf}}&csrf_token=x",
			strings.Repeat("x", 70000)} {
			f.Add(route, body, "", "")
		}
		for _, field := range []string{"message", "website", "csrf_token"} {
			for _, v := range hostileValues {
				f.Add(route, "csrf_token={{csrf}}", field, v)
			}
		}
	}

	f.Fuzz(func(t *testing.T, route, body, field, value string) {
		r, ok := routes[route]
		if !ok {
			return
		}
		token := sessions[r.session]
		fill := func(s string) string { return strings.ReplaceAll(e.fill(s), "{{csrf}}", dashboard.CSRFToken(token)) }
		creds := []string{"Cookie", partnerCookie + "=" + token, dashboard.CSRFHeader, dashboard.CSRFToken(token)}
		var req *http.Request
		switch {
		case r.json:
			req = e.post(t, r.path, "application/json", setField(fill(body), field, fill(value)), creds...)
			req.Method = r.method
		case r.form:
			form := fill(body)
			if field != "" {
				form += "&" + url.QueryEscape(field) + "=" + url.QueryEscape(fill(value))
			}
			req = e.post(t, r.path, "application/x-www-form-urlencoded", form, creds[:2]...)
		default:
			var err error
			if req, err = http.NewRequest(r.method, e.URL+r.path, nil); err != nil {
				t.Fatal(err)
			}
			req.URL.RawQuery = queryText(fill(body))
			req.Header.Set(creds[0], creds[1])
		}
		e.exchange(t, req, r.form)
	})
}

// fuzzPortalSignIn signs email in to the partner portal (GET /partners/login, the development issuer's
// form) and returns the session's cookie.
func fuzzPortalSignIn(tb testing.TB, env *apitest.Env, email string) string {
	tb.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	c := &http.Client{Jar: jar, Transport: env.Client.Transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Get(env.URL + "/partners/login")
	if err != nil {
		tb.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusFound {
		tb.Fatalf("partner login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, err = c.PostForm(env.URL+"/login", url.Values{"state": {loc.Query().Get("state")}, "email": {email}})
	if err != nil {
		tb.Fatal(err)
	}
	res.Body.Close()
	u, _ := url.Parse(env.URL)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == partnerCookie && res.StatusCode == http.StatusSeeOther {
			return ck.Value
		}
	}
	tb.Fatalf("partner sign-in as %s: %d", email, res.StatusCode)
	return ""
}
