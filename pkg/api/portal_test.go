package api_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/dashboard"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The partner portal (docs/rules.md#partners), through the real server: every answer is checked against the
// spec by apitest. A partner person signs in at /partners with the development issuer's form, as a browser
// does, and reads their programs' data from /api/v1/partner/….

// The portal's cookies and the refusals its routes share, word for word.
const (
	partnerCookie      = "reftrack_partner"
	partnerLoginCookie = "reftrack_partner_login"

	portalSignInFirst  = "Sign in to the partner portal first: open /partners"
	portalNoProgram    = "Program not found"
	portalCSRF         = "Missing or invalid CSRF token — reload the page"
	portalInvited      = "Your invitation to this program is not accepted yet: open the link in the invitation mail"
	portalPending      = "Your application to this program is waiting for the brand's approval"
	portalRejected     = "Your application to this program was not accepted"
	portalBanned       = "You are banned from this program"
	portalDetailsWrong = "payout details: method must be paypal (with paypal_email) or bank_transfer (with bank_details, 1 to 1000 characters)"
)

// portalWorld is one server, on a clock the test moves and without rate limits (a test signs in more
// people than a minute of the login bucket allows), and the brands and partner people a test sets up.
type portalWorld struct {
	t     *testing.T
	env   *apitest.Env
	clock *apitest.Clock
}

func newPortalWorld(t *testing.T) *portalWorld {
	t.Helper()
	clock := apitest.NewClock(time.Now())
	return &portalWorld{t: t, env: apitest.Start(t, apitest.Options{Clock: clock.Now, LimitStore: unlimited{}}), clock: clock}
}

// brand seeds a program of a workspace of its own with settings (a PATCH body) over a long attribution
// window and no hold, so that sales are paid out at once.
func (w *portalWorld) brand(settings map[string]any) *ledgerFixture {
	w.t.Helper()
	r := w.env.Seed(seed.Options{})
	f := &ledgerFixture{t: w.t, env: w.env, clock: w.clock, r: r, owner: apitest.Bearer(r.AccountToken), base: "/api/v1/programs/" + itoa(r.ProgramID)}
	body := map[string]any{"attribution_window_days": 3650, "hold_days": 0}
	maps.Copy(body, settings)
	f.data(f.do(http.MethodPatch, f.base, body), http.StatusOK)
	return f
}

// sibling is another program of f's workspace (made by cli init as f's owner).
func (w *portalWorld) sibling(f *ledgerFixture) *ledgerFixture {
	w.t.Helper()
	d := f.data(f.do(http.MethodPost, "/api/v1/cli/init", map[string]any{"name": "Sibling shop", "domain": "sibling.example.com",
		"commission_type": "percent", "commission_rate": 10, "advertiser_id": f.r.AdvertiserID}), http.StatusCreated)
	g := *f
	id, err := strconv.ParseInt(d["program_id"].(string), 10, 64)
	if err != nil {
		w.t.Fatal(err)
	}
	g.r.ProgramID, g.r.APIKey = id, d["api_key"].(string)
	g.base = "/api/v1/programs/" + itoa(g.r.ProgramID)
	return &g
}

// slug is the program's slug, the address of its public page (/p/{slug}).
func portalSlug(f *ledgerFixture) string {
	f.t.Helper()
	return f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK)["slug"].(string)
}

// portalPath is a /api/v1/partner route of a program.
func portalPath(programID int64, rest string) string {
	return fmt.Sprintf("/api/v1/partner/programs/%d/%s", programID, rest)
}

// portalSale records a click, a lead (with email, unless "") and a sale of amountCents USD through
// affiliateURL in f's program, for the customer key.
func portalSale(t *testing.T, f *ledgerFixture, affiliateURL, customerKey, email string, amountCents int64) {
	t.Helper()
	res := f.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": affiliateURL}, "User-Agent", "ua-"+customerKey)
	if res.Status != http.StatusOK {
		t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	body := map[string]any{"click_id": res.JSON(t)["click_id"], "customer_key": customerKey}
	if email != "" {
		body["email"] = email
	}
	if res := lead(f.env, body, apitest.Bearer(f.r.APIKey)...); res.Status != http.StatusOK {
		t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	// The transaction id (which the partner sees) does not repeat the customer's key.
	txn := fmt.Sprintf("txn-%08x", crc32.ChecksumIEEE([]byte(customerKey)))
	if res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": txn, "amount_cents": amountCents, "currency": "USD",
		"customer_key": customerKey}); res.Status != http.StatusOK {
		t.Fatalf("sale: %d %s", res.Status, res.Body)
	}
}

// partnerSession is a browser signed in to the partner portal as one person.
type partnerSession struct {
	w     *portalWorld
	b     *browserLike
	email string
	token string // the reftrack_partner cookie
}

// startPartnerLogin opens /partners/login (with return_to unless it is "") in b, checks the redirect to
// the login page and the cookie that binds the sign-in to b, and returns the login session's state.
func startPartnerLogin(t *testing.T, b *browserLike, returnTo string) string {
	t.Helper()
	path := "/partners/login"
	if returnTo != "" {
		path += "?return_to=" + url.QueryEscape(returnTo)
	}
	res, _ := b.get(path)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil || loc.Path != "/login" || loc.Query().Get("state") == "" {
		t.Fatalf("partner login: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if set := res.Header.Get("Set-Cookie"); !strings.HasPrefix(set, partnerLoginCookie+"=") || !strings.Contains(set, "HttpOnly") ||
		!strings.Contains(set, "SameSite=Lax") || !strings.Contains(set, "Max-Age=300") || strings.Contains(set, "Secure") {
		t.Errorf("partner login cookie: %s", set)
	}
	return loc.Query().Get("state")
}

// finishPartnerLogin signs the login session of state in as email with the development issuer's form
// (POST /login) in b, checks the redirect to want and the session cookie, and returns the cookie.
func finishPartnerLogin(t *testing.T, b *browserLike, state, email, want string) string {
	t.Helper()
	res, page := b.post("/login", url.Values{"state": {state}, "email": {email}, "name": {"Pat Partner"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Fatalf("partner sign-in as %s: %d %s, want 303 to %s: %s", email, res.StatusCode, res.Header.Get("Location"), want, page)
	}
	if set := res.Header.Get("Set-Cookie"); !strings.HasPrefix(set, partnerCookie+"=") || !strings.Contains(set, "HttpOnly") ||
		!strings.Contains(set, "SameSite=Lax") || !strings.Contains(set, "Max-Age=604800") || strings.Contains(set, "Secure") {
		t.Errorf("partner session cookie: %s", set)
	}
	token := b.cookie(partnerCookie)
	if token == "" {
		t.Fatal("no partner session cookie in the jar")
	}
	return token
}

// signIn signs email in to the portal in a browser of its own.
func (w *portalWorld) signIn(email string) *partnerSession {
	w.t.Helper()
	b := newBrowserLike(w.t, w.env)
	token := finishPartnerLogin(w.t, b, startPartnerLogin(w.t, b, ""), email, "/partners")
	return &partnerSession{w: w, b: b, email: email, token: token}
}

// credentials are the headers the portal page's calls carry: the session's cookie and the page's CSRF
// token.
func (s *partnerSession) credentials() []string {
	return []string{"Cookie", partnerCookie + "=" + s.token, dashboard.CSRFHeader, dashboard.CSRFToken(s.token)}
}

// do sends a portal API request with the session's credentials.
func (s *partnerSession) do(method, path string, body any) *apitest.Response {
	s.w.t.Helper()
	return s.w.env.Do(method, path, body, s.credentials()...)
}

// data is the data (an object, or nil for null) of a 200 to GET path.
func (s *partnerSession) data(path string) map[string]any {
	s.w.t.Helper()
	res := s.do(http.MethodGet, path, nil)
	if res.Status != http.StatusOK {
		s.w.t.Fatalf("GET %s as %s: %d %s", path, s.email, res.Status, res.Body)
	}
	d, _ := res.JSON(s.w.t)["data"].(map[string]any)
	return d
}

// list is the data (a list) of a 200 to GET path.
func (s *partnerSession) list(path string) []map[string]any {
	s.w.t.Helper()
	res := s.do(http.MethodGet, path, nil)
	if res.Status != http.StatusOK {
		s.w.t.Fatalf("GET %s as %s: %d %s", path, s.email, res.Status, res.Body)
	}
	var body struct{ Data []map[string]any }
	res.Decode(s.w.t, &body)
	if body.Data == nil {
		s.w.t.Fatalf("GET %s: data is not a list: %s", path, res.Body)
	}
	return body.Data
}

// programs are the person's programs as /api/v1/partner/me shows them.
func (s *partnerSession) programs() []map[string]any {
	s.w.t.Helper()
	var out []map[string]any
	for _, p := range s.data("/api/v1/partner/me")["programs"].([]any) {
		out = append(out, p.(map[string]any))
	}
	return out
}

// form posts a page's form with the session's CSRF token (csrf false: without it), not following redirects.
func (s *partnerSession) form(path string, form url.Values, csrf bool) (*http.Response, string) {
	s.w.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if csrf {
		form.Set("csrf_token", dashboard.CSRFToken(s.token))
	}
	return s.b.post(path, form)
}

// page sends a page request with creds (header pairs) and without following redirects.
func (w *portalWorld) page(method, path string, form url.Values, creds ...string) (*http.Response, string) {
	w.t.Helper()
	var req *http.Request
	var err error
	if form != nil {
		req, err = http.NewRequest(method, w.env.URL+path, strings.NewReader(form.Encode()))
	} else {
		req, err = http.NewRequest(method, w.env.URL+path, nil)
	}
	if err != nil {
		w.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(creds); i += 2 {
		req.Header.Set(creds[i], creds[i+1])
	}
	res, err := noRedirects(w.env).Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	return res, readAll(w.t, res)
}

// portalErrorNames are the platform envelope's error names by status.
var portalErrorNames = map[int]string{400: "BadRequestError", 401: "UnauthorizedError", 403: "ForbiddenError", 404: "NotFoundError", 409: "ConflictError"}

// portalRefused checks a refusal in the platform envelope (status, the status's name and code, message,
// data null), reporting with Errorf so that a matrix goes on.
func portalRefused(t *testing.T, what string, res *apitest.Response, status int, message string) {
	t.Helper()
	if res.Status != status {
		t.Errorf("%s: %d, want %d %q: %s", what, res.Status, status, message, res.Body)
		return
	}
	var body struct {
		Data  json.RawMessage `json:"data"`
		Error struct {
			Status              int
			Name, Message, Code string
		} `json:"error"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Errorf("%s: %v: %s", what, err, res.Body)
		return
	}
	e := body.Error
	if string(body.Data) != "null" || e.Status != status || e.Name != portalErrorNames[status] || e.Message != message ||
		!slices.Contains(platformCodes[status], e.Code) {
		t.Errorf("%s: %s, want %d %s %q", what, res.Body, status, portalErrorNames[status], message)
	}
}

// pageRefused checks an HTML page's status and that it says message.
func pageRefused(t *testing.T, what string, res *http.Response, page string, status int, message string) {
	t.Helper()
	if res.StatusCode != status || !strings.Contains(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(page, message) {
		t.Errorf("%s: %d %s, want %d with %q: %s", what, res.StatusCode, res.Header.Get("Content-Type"), status, message, page)
	}
}

// portalRoutes are the program's /api/v1/partner routes, each with a body that would succeed for an
// approved partner (a new link code each time) and the status of that success.
func portalRoutes() []struct {
	method, rest string
	body         func() any
	ok           int
} {
	n := 0
	return []struct {
		method, rest string
		body         func() any
		ok           int
	}{
		{http.MethodGet, "links", nil, http.StatusOK},
		{http.MethodPost, "links", func() any { n++; return map[string]any{"code": fmt.Sprintf("matrix-%d", n)} }, http.StatusCreated},
		{http.MethodGet, "stats?days=7", nil, http.StatusOK},
		{http.MethodGet, "commissions", nil, http.StatusOK},
		{http.MethodGet, "balances", nil, http.StatusOK},
		{http.MethodGet, "payouts", nil, http.StatusOK},
		{http.MethodGet, "payouts.csv", nil, http.StatusOK},
		{http.MethodGet, "payout-details", nil, http.StatusOK},
		{http.MethodPut, "payout-details", func() any { return map[string]any{"method": "paypal", "paypal_email": "ann.pay@example.com"} }, http.StatusOK},
	}
}

// Every /api/v1/partner route and the portal page, for every kind of caller: the approved partner who
// owns the data, a partner of another brand's program, partners of the program who are banned, invited,
// applied or rejected, a member of the brand (by login token and by dashboard session), and nobody.
// Then the data of two approved partners of one program (and of one person in two workspaces) never
// mixes.
func TestPortalTenantMatrix(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	a, b := w.brand(map[string]any{"enrollment": "open"}), w.brand(nil)
	annID, annURL := a.partner("Ann", "ann@example.com")
	benID, benURL := a.partner("Ben", "ben@example.com")
	danID, _ := a.partner("Dan", "dan@example.com")
	bobID, _ := b.partner("Bob", "bob@example.com")
	annAtB, annAtBURL := b.partner("Ann at B", "Ann@Example.com") // the same person in another workspace
	a.data(a.do(http.MethodPost, a.base+"/partners/"+itoa(danID)+"/ban", map[string]any{"reason": "Cookie stuffing"}), http.StatusOK)
	a.list(a.do(http.MethodPost, a.base+"/invitations", map[string]any{"email": "ivy@example.com"}), http.StatusCreated)
	portalSale(t, a, annURL, "ann-customer", "carla@shop.example", 5000)
	portalSale(t, a, benURL, "ben-customer", "", 7000)
	portalSale(t, b, annAtBURL, "ann-at-b-customer", "dora@shop.example", 3000)
	payoutOf := map[[2]int64]any{} // by program and partner
	for _, f := range []*ledgerFixture{a, b} {
		for _, p := range f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated) {
			payoutOf[[2]int64{f.r.ProgramID, int64(p["partner_id"].(float64))}] = p["id"]
		}
	}

	ann, ben, bob, dan, ivy := w.signIn("ann@example.com"), w.signIn("ben@example.com"), w.signIn("bob@example.com"),
		w.signIn("dan@example.com"), w.signIn("ivy@example.com")
	pia, rex := w.signIn("pia@example.com"), w.signIn("rex@example.com")
	slug := portalSlug(a)
	for _, s := range []*partnerSession{pia, rex} {
		if res, page := s.form("/p/"+slug, nil, true); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s applies: %d %s", s.email, res.StatusCode, page)
		}
	}
	rexID := int64(rex.programs()[0]["partner_id"].(float64))
	a.data(a.do(http.MethodPost, a.base+"/partners/"+itoa(rexID)+"/reject", map[string]any{"reason": "Not a fit"}), http.StatusOK)
	member := newBrowserLike(t, w.env)
	member.signIn(a.r.AccountEmail)
	session := member.cookie(dashboard.SessionCookie)

	principals := []struct {
		name  string
		creds []string
		// status and message are what program A's routes answer (status 0: each route's success).
		status  int
		message string
	}{
		{"approved partner", ann.credentials(), 0, ""},
		{"partner of another brand's program only", bob.credentials(), http.StatusNotFound, portalNoProgram},
		{"banned partner", dan.credentials(), http.StatusForbidden, portalBanned},
		{"invited partner", ivy.credentials(), http.StatusForbidden, portalInvited},
		{"applied partner", pia.credentials(), http.StatusForbidden, portalPending},
		{"rejected partner", rex.credentials(), http.StatusForbidden, portalRejected},
		{"brand member's login token", a.owner, http.StatusUnauthorized, portalSignInFirst},
		{"brand member's dashboard session", []string{"Cookie", dashboard.SessionCookie + "=" + session, dashboard.CSRFHeader,
			dashboard.CSRFToken(session)}, http.StatusUnauthorized, portalSignInFirst},
		{"brand member with both", append(slices.Clone(a.owner), "Cookie", dashboard.SessionCookie+"="+session), http.StatusUnauthorized, portalSignInFirst},
		{"nobody", nil, http.StatusUnauthorized, portalSignInFirst},
	}
	links := w.env.Count(`SELECT count(*) FROM referral_links`)
	unknown := b.r.ProgramID + 1_000_000
	for _, p := range principals {
		for _, r := range portalRoutes() {
			var body any
			if r.body != nil {
				body = r.body()
			}
			what := fmt.Sprintf("%s: %s %s", p.name, r.method, r.rest)
			res := w.env.Do(r.method, portalPath(a.r.ProgramID, r.rest), body, p.creds...)
			if p.status == 0 {
				if res.Status != r.ok {
					t.Errorf("%s: %d, want %d: %s", what, res.Status, r.ok, res.Body)
				}
			} else {
				portalRefused(t, what, res, p.status, p.message)
			}
			// A program that does not exist answers as one that is not theirs.
			want, message := http.StatusNotFound, portalNoProgram
			if p.status == http.StatusUnauthorized {
				want, message = p.status, p.message
			}
			if r.body != nil {
				body = r.body()
			}
			portalRefused(t, what+" of an unknown program", w.env.Do(r.method, portalPath(unknown, r.rest), body, p.creds...), want, message)
		}
		me := w.env.Do(http.MethodGet, "/api/v1/partner/me", nil, p.creds...)
		res, page := w.page(http.MethodGet, "/partners", nil, p.creds...)
		if p.status == http.StatusUnauthorized {
			portalRefused(t, p.name+": me", me, p.status, p.message)
			if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/partners/login" {
				t.Errorf("%s: portal page %d %s, want 302 to /partners/login", p.name, res.StatusCode, res.Header.Get("Location"))
			}
			continue
		}
		if me.Status != http.StatusOK {
			t.Errorf("%s: me %d %s", p.name, me.Status, me.Body)
		}
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `<meta name="csrf-token"`) {
			t.Errorf("%s: portal page %d %s", p.name, res.StatusCode, page)
		}
	}
	// The approved partner's link in program A is the only one made.
	if n := w.env.Count(`SELECT count(*) FROM referral_links`); n != links+1 {
		t.Errorf("%d links made by the matrix, want 1 (the approved partner's)", n-links)
	}
	if n := w.env.Count(`SELECT count(*) FROM referral_links WHERE short_link = 'matrix-1' AND program_id = $1 AND partner_id = $2`, a.r.ProgramID, annID); n != 1 {
		t.Error("the approved partner's link is not hers in program A")
	}
	var withDetails []int64
	if err := w.env.DB.Select(&withDetails, `SELECT id FROM partners WHERE payout_method IS NOT NULL`); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withDetails, []int64{annID}) {
		t.Errorf("partners with payout details %v, want only Ann's record in A's workspace (%d)", withDetails, annID)
	}

	// Changes need the page's CSRF token: none, another session's, something else. Reads do not.
	for i, creds := range [][]string{
		{"Cookie", partnerCookie + "=" + ann.token},
		{"Cookie", partnerCookie + "=" + ann.token, dashboard.CSRFHeader, dashboard.CSRFToken(ben.token)},
		{"Cookie", partnerCookie + "=" + ann.token, dashboard.CSRFHeader, dashboard.CSRFToken(session)},
		{"Cookie", partnerCookie + "=" + ann.token, dashboard.CSRFHeader, "nonsense"},
	} {
		portalRefused(t, fmt.Sprintf("create link, CSRF case %d", i), w.env.Do(http.MethodPost, portalPath(a.r.ProgramID, "links"),
			map[string]any{"code": "no-csrf"}, creds...), http.StatusForbidden, portalCSRF)
		portalRefused(t, fmt.Sprintf("payout details, CSRF case %d", i), w.env.Do(http.MethodPut, portalPath(a.r.ProgramID, "payout-details"),
			map[string]any{"method": "paypal", "paypal_email": "mallory@example.com"}, creds...), http.StatusForbidden, portalCSRF)
		if res := w.env.Do(http.MethodGet, portalPath(a.r.ProgramID, "links"), nil, creds...); res.Status != http.StatusOK {
			t.Errorf("a read without the CSRF token: %d %s", res.Status, res.Body)
		}
	}

	// Each partner reads their own rows only: Ann and Ben in A, Ann's other record in B, Bob in B.
	own := []struct {
		s                    *partnerSession
		programID, partnerID int64
		// want is how many links, commissions, balances and payouts they have.
		want [4]int
	}{
		{ann, a.r.ProgramID, annID, [4]int{2, 1, 1, 1}},
		{ben, a.r.ProgramID, benID, [4]int{1, 1, 1, 1}},
		{ann, b.r.ProgramID, annAtB, [4]int{1, 1, 1, 1}},
		{bob, b.r.ProgramID, bobID, [4]int{1, 0, 0, 0}},
	}
	for _, o := range own {
		for i, rest := range []string{"links", "commissions", "balances", "payouts"} {
			rows := o.s.list(portalPath(o.programID, rest))
			if len(rows) != o.want[i] {
				t.Errorf("%s in program %d: %d %s, want %d: %v", o.s.email, o.programID, len(rows), rest, o.want[i], rows)
			}
			for _, row := range rows {
				if row["partner_id"] != float64(o.partnerID) || (rest != "balances" && row["program_id"] != float64(o.programID)) {
					t.Errorf("%s in program %d sees a row of %s not theirs: %v", o.s.email, o.programID, rest, row)
				}
			}
		}
		res := o.s.do(http.MethodGet, portalPath(o.programID, "payouts.csv"), nil)
		rows, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
		if res.Status != http.StatusOK || err != nil || len(rows) != 1+o.want[3] ||
			res.Header.Get("Content-Disposition") != fmt.Sprintf("attachment; filename=payouts-%d.csv", o.programID) {
			t.Errorf("%s's payouts CSV in program %d: %d %v %v %s", o.s.email, o.programID, res.Status, res.Header, err, res.Body)
			continue
		}
		for _, row := range rows[1:] {
			if row[0] != fmt.Sprint(payoutOf[[2]int64{o.programID, o.partnerID}]) {
				t.Errorf("%s's payouts CSV in program %d holds payout %s, not theirs", o.s.email, o.programID, row[0])
			}
		}
	}
	if d := ann.data(portalPath(a.r.ProgramID, "payout-details")); d["paypal_email"] != "ann.pay@example.com" {
		t.Errorf("Ann's payout details in A = %v", d)
	}
	for _, c := range []struct {
		s         *partnerSession
		programID int64
	}{{ben, a.r.ProgramID}, {ann, b.r.ProgramID}, {bob, b.r.ProgramID}} {
		if d := c.s.data(portalPath(c.programID, "payout-details")); d != nil {
			t.Errorf("%s's payout details in program %d = %v, want null (Ann gave hers to A's workspace)", c.s.email, c.programID, d)
		}
	}

	// Each person's programs: every workspace's record with their email, with its status.
	type listed struct {
		program, partner int64
		status           string
		reason           any
	}
	for _, c := range []struct {
		s    *partnerSession
		want []listed
	}{
		{ann, []listed{{a.r.ProgramID, annID, "approved", nil}, {b.r.ProgramID, annAtB, "approved", nil}}},
		{ben, []listed{{a.r.ProgramID, benID, "approved", nil}}},
		{bob, []listed{{b.r.ProgramID, bobID, "approved", nil}}},
		{dan, []listed{{a.r.ProgramID, danID, "banned", "Cookie stuffing"}}},
		{ivy, []listed{{a.r.ProgramID, 0, "invited", nil}}},
		{pia, []listed{{a.r.ProgramID, 0, "pending", nil}}},
		{rex, []listed{{a.r.ProgramID, rexID, "rejected", "Not a fit"}}},
	} {
		got := c.s.programs()
		if len(got) != len(c.want) {
			t.Errorf("%s's programs = %v, want %v", c.s.email, got, c.want)
			continue
		}
		for i, p := range got {
			want := c.want[i]
			if p["id"] != float64(want.program) || (want.partner != 0 && p["partner_id"] != float64(want.partner)) || p["status"] != want.status ||
				p["status_reason"] != want.reason {
				t.Errorf("%s's program %d = %v, want %+v", c.s.email, i, p, want)
			}
		}
	}
}

// The portal's sign-in: the way back stays within the portal; a sign-in finishes only in the browser
// that started it; the session lasts 7 days; signing out needs the page's CSRF token; a partner sign-in
// never reaches an account, nor a dashboard sign-in a partner session.
func TestPortalSignIn(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	a := w.brand(nil)
	a.partner("Ann", "ann@example.com")

	// 303 back to return_to, when it is a page of the portal.
	for _, c := range []struct{ returnTo, want string }{
		{"", "/partners"},
		{"/partners", "/partners"},
		{"/partners?program=5", "/partners?program=5"},
		{"/partners/invitations/abc", "/partners/invitations/abc"},
		{"/p/some-shop", "/p/some-shop"},
		{"https://evil.example/partners", "/partners"},
		{"//evil.example", "/partners"},
		{"//evil.example/partners", "/partners"},
		{"/\\evil.example", "/partners"},
		{"/partners\\..\\x", "/partners"},
		{"/p/x\r\nSet-Cookie: a=b", "/partners"},
		{"/dashboard", "/partners"},
		{"/login?state=x", "/partners"},
		{"javascript:alert(1)", "/partners"},
		{"partners", "/partners"},
	} {
		b := newBrowserLike(t, w.env)
		finishPartnerLogin(t, b, startPartnerLogin(t, b, c.returnTo), "ann@example.com", c.want)
	}

	// 400: finished in another browser, one with no cookie of the sign-in or with its own sign-in's.
	starter := newBrowserLike(t, w.env)
	state := startPartnerLogin(t, starter, "")
	other := newBrowserLike(t, w.env)
	startPartnerLogin(t, other, "")
	for name, b := range map[string]*browserLike{"no cookie": newBrowserLike(t, w.env), "another sign-in's cookie": other} {
		res, page := b.post("/login", url.Values{"state": {state}, "email": {"mallory@example.com"}})
		pageRefused(t, name, res, page, http.StatusBadRequest, "This sign-in was started in another browser. Open the partner portal again to sign in here.")
		if b.cookie(partnerCookie) != "" || res.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: a refused sign-in set a cookie: %v", name, res.Header)
		}
	}
	if n := w.env.Count(`SELECT count(*) FROM login_sessions WHERE state = $1 AND status = 'pending'`, state); n != 1 {
		t.Fatal("the refused attempts changed the login session")
	}
	if n := w.env.Count(`SELECT count(*) FROM partner_people WHERE email = 'mallory@example.com'`); n != 0 {
		t.Error("the refused attempts made a partner person")
	}

	// A partner sign-in never completes an account login: not by the CLI's callback, nor its poll.
	platformError(t, w.env.Do(http.MethodPost, "/api/v1/cli/auth/callback", map[string]any{"state": state, "id_token": devIDToken(t, w.env, "ann@example.com")}),
		http.StatusNotFound, "NotFoundError", "Session not found or already used")
	platformError(t, w.env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil), http.StatusNotFound, "NotFoundError", "Session not found")
	token := finishPartnerLogin(t, starter, state, "ann@example.com", "/partners")
	platformError(t, w.env.Do(http.MethodGet, "/api/v1/cli/auth/poll?state="+url.QueryEscape(state), nil), http.StatusNotFound, "NotFoundError", "Session not found")
	if n := w.env.Count(`SELECT count(*) FROM accounts WHERE lower(email) = 'ann@example.com'`); n != 0 {
		t.Error("a partner sign-in made an account")
	}
	// Nor twice.
	res, page := starter.post("/login", url.Values{"state": {state}, "email": {"ann@example.com"}})
	pageRefused(t, "replayed", res, page, http.StatusBadRequest, "This login link is unknown or was already used. Open the partner portal again.")
	// The partner session opens the portal only: the dashboard sends it to its own sign-in.
	if res, _ := starter.get("/dashboard"); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/dashboard/login" {
		t.Errorf("dashboard with a partner session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res := w.env.Do(http.MethodGet, "/api/v1/me", nil, "Cookie", partnerCookie+"="+token); res.Status != http.StatusUnauthorized {
		t.Errorf("the dashboard's me with a partner session: %d %s", res.Status, res.Body)
	}

	// A dashboard sign-in never yields a partner session, even in a browser that also started one.
	both := newBrowserLike(t, w.env)
	startPartnerLogin(t, both, "")
	dashState := both.startDashboardLogin()
	res, page = both.post("/login", url.Values{"state": {dashState}, "email": {a.r.AccountEmail}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" || both.cookie(dashboard.SessionCookie) == "" ||
		both.cookie(partnerCookie) != "" {
		t.Errorf("dashboard sign-in: %d %v %s", res.StatusCode, res.Header, page)
	}
	// And a browser holding only the partner sign-in's cookie cannot finish a dashboard sign-in.
	partnerOnly := newBrowserLike(t, w.env)
	startPartnerLogin(t, partnerOnly, "")
	dashState = newBrowserLike(t, w.env).startDashboardLogin()
	res, page = partnerOnly.post("/login", url.Values{"state": {dashState}, "email": {a.r.AccountEmail}})
	pageRefused(t, "dashboard state, partner browser", res, page, http.StatusBadRequest, "This sign-in was started in another browser.")
	if partnerOnly.cookie(dashboard.SessionCookie) != "" || partnerOnly.cookie(partnerCookie) != "" {
		t.Error("a refused dashboard sign-in set a session cookie")
	}

	// Signing out: without the page's CSRF token nothing changes (403), with it the session ends.
	ann := &partnerSession{w: w, b: starter, email: "ann@example.com", token: token}
	for _, form := range []url.Values{{}, {"csrf_token": {"nonsense"}}, {"csrf_token": {dashboard.CSRFToken(both.cookie(dashboard.SessionCookie))}}} {
		res, page := ann.form("/partners/logout", form, false)
		pageRefused(t, "sign-out without the CSRF token", res, page, http.StatusForbidden, "This sign-out did not come from your portal page.")
	}
	if len(ann.programs()) != 1 {
		t.Error("Ann's session does not reach her program after the refused sign-outs")
	}
	res, page = ann.form("/partners/logout", nil, true)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "Your partner portal session has ended.") ||
		!strings.HasPrefix(res.Header.Get("Set-Cookie"), partnerCookie+"=;") || starter.cookie(partnerCookie) != "" {
		t.Errorf("sign-out: %d %v %s", res.StatusCode, res.Header, page)
	}
	portalRefused(t, "a signed-out session", ann.do(http.MethodGet, "/api/v1/partner/me", nil), http.StatusUnauthorized, portalSignInFirst)
	if res, _ := w.page(http.MethodGet, "/partners", nil, ann.credentials()...); res.StatusCode != http.StatusFound {
		t.Errorf("portal page with a signed-out session: %d", res.StatusCode)
	}

	// A session lasts 7 days by the server's clock.
	ann = w.signIn("ann@example.com")
	w.clock.Advance(7*24*time.Hour - time.Minute)
	if len(ann.programs()) != 1 {
		t.Error("a session of 7 days less a minute does not work")
	}
	w.clock.Advance(time.Minute)
	portalRefused(t, "a session of 7 days", ann.do(http.MethodGet, "/api/v1/partner/me", nil), http.StatusUnauthorized, portalSignInFirst)
	portalRefused(t, "a change with an expired session", ann.do(http.MethodPut, portalPath(a.r.ProgramID, "payout-details"),
		map[string]any{"method": "paypal", "paypal_email": "ann@example.com"}), http.StatusUnauthorized, portalSignInFirst)
	if res, _ := w.page(http.MethodGet, "/partners", nil, ann.credentials()...); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/partners/login" {
		t.Errorf("portal page with an expired session: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// portalInvitation invites email to f's program and returns the invitation's id and the token of the
// link its mail carries.
func portalInvitation(t *testing.T, f *ledgerFixture, email string) (any, string) {
	t.Helper()
	inv := f.list(f.do(http.MethodPost, f.base+"/invitations", map[string]any{"email": email}), http.StatusCreated)[0]
	return inv["id"], portalMailedToken(t, f, email)
}

// portalMailedToken sends the outbox's mail and returns the invitation token of the newest mail to email.
func portalMailedToken(t *testing.T, f *ledgerFixture, email string) string {
	t.Helper()
	if err := f.env.Mail.SendAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(regexp.QuoteMeta(f.env.URL+"/partners/invitations/") + `([0-9A-Za-z]{32})\b`)
	for _, m := range f.env.Mailbox.Messages() { // newest first
		if m.To == email {
			if l := link.FindStringSubmatch(m.Text); l != nil {
				return l[1]
			}
			t.Fatalf("the mail to %s has no invitation link:\n%s", email, m.Text)
		}
	}
	t.Fatalf("no mail to %s", email)
	return ""
}

// An invitation's link through the pages: signed out it sends the browser to sign in and back; signed in
// it shows the program and a button; accepting (with the CSRF token) approves the enrollment, once or
// again; another email, an expired, unknown, canceled or superseded link are refused with a page.
func TestPortalInvitations(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	a := w.brand(nil)
	_, token := portalInvitation(t, a, "ivy@example.com")
	path := "/partners/invitations/" + token

	// 302: signed out, to the sign-in, which comes back to the invitation.
	res, _ := w.page(http.MethodGet, path, nil)
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/partners/login?return_to="+url.QueryEscape(path) {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := w.page(http.MethodPost, path, url.Values{"csrf_token": {"x"}}); res.StatusCode != http.StatusFound ||
		res.Header.Get("Location") != "/partners/login?return_to="+url.QueryEscape(path) {
		t.Errorf("accept signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	b := newBrowserLike(t, w.env)
	res, _ = b.get(res.Header.Get("Location"))
	loc, _ := url.Parse(res.Header.Get("Location"))
	ivy := &partnerSession{w: w, b: b, email: "ivy@example.com", token: finishPartnerLogin(t, b, loc.Query().Get("state"), "ivy@example.com", path)}

	// 200: the program, the invited email and a form with the CSRF token.
	res, page := b.get(path)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<form method="post" action="`+path+`">`) ||
		!strings.Contains(page, `value="`+dashboard.CSRFToken(ivy.token)+`"`) || !strings.Contains(page, "invites ivy@example.com") ||
		!strings.Contains(page, "Accept the invitation") {
		t.Fatalf("invitation page: %d %s", res.StatusCode, page)
	}
	portalRefused(t, "invited, before accepting", ivy.do(http.MethodGet, portalPath(a.r.ProgramID, "links"), nil), http.StatusForbidden, portalInvited)

	// 403: without the CSRF token, nothing changes.
	for _, form := range []url.Values{{}, {"csrf_token": {"nonsense"}}} {
		res, page := ivy.form(path, form, false)
		pageRefused(t, "accept without the CSRF token", res, page, http.StatusForbidden, "This form did not come from the invitation&#39;s page.")
	}
	if p := ivy.programs(); len(p) != 1 || p[0]["status"] != "invited" {
		t.Fatalf("after refused accepts: %v", p)
	}

	// 303: accepted, to the program in the portal; again, the same.
	want := "/partners?program=" + itoa(a.r.ProgramID)
	for range 2 {
		if res, page := ivy.form(path, nil, true); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Fatalf("accept: %d %s %s", res.StatusCode, res.Header.Get("Location"), page)
		}
	}
	if p := ivy.programs(); len(p) != 1 || p[0]["status"] != "approved" || p[0]["id"] != float64(a.r.ProgramID) {
		t.Errorf("after accepting: %v", p)
	}
	if res := ivy.do(http.MethodGet, portalPath(a.r.ProgramID, "links"), nil); res.Status != http.StatusOK {
		t.Errorf("an accepted invitation's program: %d %s", res.Status, res.Body)
	}
	if actions := a.audited("invitation:" + fmt.Sprint(a.list(a.do(http.MethodGet, a.base+"/invitations", nil), http.StatusOK)[0]["id"])); !slices.Contains(actions, "invitation.accept") {
		t.Errorf("audit log = %v, want invitation.accept", actions)
	}
	if res, page := b.get(path); res.StatusCode != http.StatusOK || !strings.Contains(page, "You accepted this invitation.") ||
		!strings.Contains(page, `href="`+want+`"`) {
		t.Errorf("accepted invitation's page: %d %s", res.StatusCode, page)
	}

	// 403: accepted by another email, which the page names (and shows no button to).
	_, jayToken := portalInvitation(t, a, "jay@example.com")
	ann := w.signIn("ann@example.com")
	res, page = ann.b.get("/partners/invitations/" + jayToken)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "This invitation was sent to jay@example.com: sign in with that address to accept it.") ||
		strings.Contains(page, "<form") {
		t.Errorf("another email's invitation page: %d %s", res.StatusCode, page)
	}
	res, page = ann.form("/partners/invitations/"+jayToken, nil, true)
	pageRefused(t, "another email", res, page, http.StatusForbidden, "This invitation was sent to jay@example.com: sign in with that address to accept it.")
	// Someone else's accepted invitation says so, without claiming they accepted it.
	res, page = ann.b.get(path)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, "This invitation was accepted.") || strings.Contains(page, "You accepted") ||
		strings.Contains(page, "program="+itoa(a.r.ProgramID)) {
		t.Errorf("another person's accepted invitation: %d %s", res.StatusCode, page)
	}
	if len(ann.programs()) != 0 {
		t.Error("another email's accept enrolled Ann")
	}

	// 404: an unknown link (signed out too), a canceled one, a resent one's previous link.
	for _, s := range []*partnerSession{nil, ann} {
		var creds []string
		if s != nil {
			creds = s.credentials()
		}
		res, page := w.page(http.MethodGet, "/partners/invitations/"+strings.Repeat("x", 32), nil, creds...)
		pageRefused(t, "unknown link", res, page, http.StatusNotFound, "This invitation link is not valid")
	}
	res, page = ann.form("/partners/invitations/nosuchtoken", nil, true)
	pageRefused(t, "accept an unknown link", res, page, http.StatusNotFound, "This invitation link is not valid")
	leaID, leaToken := portalInvitation(t, a, "lea@example.com")
	a.data(a.do(http.MethodDelete, portalInvitationPath(a, leaID), nil), http.StatusOK)
	lea := w.signIn("lea@example.com")
	res, page = lea.b.get("/partners/invitations/" + leaToken)
	pageRefused(t, "canceled link", res, page, http.StatusNotFound, "it was canceled, or sent again with a new link")
	res, page = lea.form("/partners/invitations/"+leaToken, nil, true)
	pageRefused(t, "accept a canceled link", res, page, http.StatusNotFound, "it was canceled, or sent again with a new link")
	if len(lea.programs()) != 0 {
		t.Error("a canceled invitation's person still lists the program")
	}
	maxID, oldToken := portalInvitation(t, a, "max@example.com")
	a.data(a.do(http.MethodPost, portalInvitationPath(a, maxID)+"/resend", nil), http.StatusOK)
	newToken := portalMailedToken(t, a, "max@example.com")
	maxi := w.signIn("max@example.com")
	res, page = maxi.form("/partners/invitations/"+oldToken, nil, true)
	pageRefused(t, "a resent invitation's previous link", res, page, http.StatusNotFound, "This invitation link is not valid")
	if res, page := maxi.form("/partners/invitations/"+newToken, nil, true); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a resent invitation's new link: %d %s", res.StatusCode, page)
	}

	// 410: a link past its 30 days, shown and accepted (signed in again: sessions last 7 days).
	_, kimToken := portalInvitation(t, a, "kim@example.com")
	w.clock.Advance(31 * 24 * time.Hour)
	res, page = w.page(http.MethodGet, "/partners/invitations/"+kimToken, nil)
	pageRefused(t, "expired link, signed out", res, page, http.StatusGone, "This invitation link has expired")
	kim := w.signIn("kim@example.com")
	res, page = kim.b.get("/partners/invitations/" + kimToken)
	pageRefused(t, "expired link", res, page, http.StatusGone, "This invitation link has expired")
	res, page = kim.form("/partners/invitations/"+kimToken, nil, true)
	pageRefused(t, "accept an expired link", res, page, http.StatusGone, "This invitation link has expired")
	if p := kim.programs(); len(p) != 1 || p[0]["status"] != "invited" {
		t.Errorf("after an expired accept: %v", p)
	}
	// An accepted invitation stays accepted past its expiry.
	ivy = w.signIn("ivy@example.com")
	if res, _ := ivy.form(path, nil, true); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Errorf("accepting again after the expiry: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// portalInvitationPath is the path of one of f's program's invitations.
func portalInvitationPath(f *ledgerFixture, id any) string {
	return fmt.Sprintf("%s/invitations/%v", f.base, id)
}

// An open program's page: a sign-in link signed out, a form signed in; an application is pending (manual
// approval) or approved at once (auto); its note and website are checked; an invite-only program has no
// page; a banned or invited person cannot apply.
func TestPortalApplications(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	manual := w.brand(map[string]any{"enrollment": "open"})
	auto := w.brand(map[string]any{"enrollment": "open", "partner_approval": "auto"})
	closed := w.brand(nil)
	manualPage, autoPage, closedPage := "/p/"+portalSlug(manual), "/p/"+portalSlug(auto), "/p/"+portalSlug(closed)

	// 200 signed out: the program's terms and a link to sign in and come back.
	res, page := w.page(http.MethodGet, manualPage, nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `href="/partners/login?return_to=`+url.QueryEscape(manualPage)+`"`) ||
		!strings.Contains(page, "Sign in to apply") || !strings.Contains(page, "(shop.example.com): Pays 20% of a customer&#39;s first sale.") || strings.Contains(page, "<form") {
		t.Fatalf("signed out: %d %s", res.StatusCode, page)
	}
	// 302: an application signed out goes to sign in.
	if res, _ := w.page(http.MethodPost, manualPage, url.Values{"message": {"hi"}}); res.StatusCode != http.StatusFound ||
		res.Header.Get("Location") != "/partners/login?return_to="+url.QueryEscape(manualPage) {
		t.Errorf("apply signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	pia := w.signIn("pia@example.com")
	res, page = pia.b.get(manualPage)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<form method="post" action="`+manualPage+`">`) ||
		!strings.Contains(page, `name="message"`) || !strings.Contains(page, `name="website"`) || !strings.Contains(page, dashboard.CSRFToken(pia.token)) {
		t.Fatalf("signed in: %d %s", res.StatusCode, page)
	}

	// 403 without the CSRF token; 400 for a note or website out of range. Nothing is enrolled.
	res, page = pia.form(manualPage, url.Values{"message": {"hi"}}, false)
	pageRefused(t, "no CSRF token", res, page, http.StatusForbidden, "This form did not come from the program&#39;s page.")
	for _, c := range []struct {
		form    url.Values
		message string
	}{
		{url.Values{"website": {"javascript:alert(1)"}}, "website must be an http or https address."},
		{url.Values{"website": {"ftp://files.example.com"}}, "website must be an http or https address."},
		{url.Values{"website": {"https://"}}, "website must be an http or https address."},
		{url.Values{"website": {"https://" + strings.Repeat("a", 2050) + ".example"}}, "website must be an http or https address."},
		{url.Values{"message": {strings.Repeat("é", 2001)}}, "message must be at most 2000 characters."},
	} {
		res, page := pia.form(manualPage, c.form, true)
		pageRefused(t, fmt.Sprintf("apply with %.40v", c.form), res, page, http.StatusBadRequest, c.message)
	}
	if len(pia.programs()) != 0 {
		t.Fatal("a refused application enrolled")
	}

	// 303: pending, the note and website kept; again, nothing changes.
	for range 2 {
		res, page := pia.form(manualPage, url.Values{"message": {strings.Repeat("é", 2000)}, "website": {" https://pia.example.com/blog "}}, true)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/partners?program="+itoa(manual.r.ProgramID) {
			t.Fatalf("apply: %d %s %s", res.StatusCode, res.Header.Get("Location"), page)
		}
	}
	if p := pia.programs(); len(p) != 1 || p[0]["status"] != "pending" {
		t.Fatalf("applied: %v", p)
	}
	if n := w.env.Count(`SELECT count(*) FROM partner_programs pp JOIN partners pa ON pa.id = pp.partner_id WHERE pp.program_id = $1
		AND pa.email = 'pia@example.com' AND pp.status = 'pending' AND pp.application_website = 'https://pia.example.com/blog'
		AND char_length(pp.application_message) = 2000`, manual.r.ProgramID); n != 1 {
		t.Error("the application is not kept as sent")
	}
	portalRefused(t, "pending", pia.do(http.MethodGet, portalPath(manual.r.ProgramID, "links"), nil), http.StatusForbidden, portalPending)
	// The brand approves: the program opens.
	piaID := int64(pia.programs()[0]["partner_id"].(float64))
	manual.data(manual.do(http.MethodPost, manual.base+"/partners/"+itoa(piaID)+"/approve", nil), http.StatusOK)
	if res := pia.do(http.MethodGet, portalPath(manual.r.ProgramID, "links"), nil); res.Status != http.StatusOK {
		t.Errorf("approved: %d %s", res.Status, res.Body)
	}

	// 303 and approved at once where the program approves automatically.
	if res, page := pia.form(autoPage, nil, true); res.StatusCode != http.StatusSeeOther ||
		res.Header.Get("Location") != "/partners?program="+itoa(auto.r.ProgramID) {
		t.Fatalf("apply (auto): %d %s", res.StatusCode, page)
	}
	if res := pia.do(http.MethodGet, portalPath(auto.r.ProgramID, "links"), nil); res.Status != http.StatusOK {
		t.Errorf("auto-approved: %d %s", res.Status, res.Body)
	}

	// 404: an invite-only program, or none, has no page and takes no application.
	for _, p := range []string{closedPage, "/p/no-such-program"} {
		res, page := w.page(http.MethodGet, p, nil)
		pageRefused(t, p, res, page, http.StatusNotFound, "No program takes applications at this address.")
		res, page = pia.form(p, nil, true)
		pageRefused(t, "apply to "+p, res, page, http.StatusNotFound, "No program takes applications at this address.")
	}
	if len(pia.programs()) != 2 {
		t.Error("an application to an invite-only program enrolled")
	}

	// 409: a banned person, an invited one.
	danID, _ := manual.partner("Dan", "dan@example.com")
	manual.data(manual.do(http.MethodPost, manual.base+"/partners/"+itoa(danID)+"/ban", nil), http.StatusOK)
	dan := w.signIn("dan@example.com")
	res, page = dan.form(manualPage, url.Values{"message": {"Please"}}, true)
	pageRefused(t, "banned", res, page, http.StatusConflict, "You are banned from this program.")
	portalInvitation(t, manual, "ivy@example.com")
	ivy := w.signIn("ivy@example.com")
	res, page = ivy.form(manualPage, nil, true)
	pageRefused(t, "invited", res, page, http.StatusConflict, "You are invited to this program: accept the invitation from its mail.")
	if p := dan.programs(); len(p) != 1 || p[0]["status"] != "banned" {
		t.Errorf("the banned person after applying: %v", p)
	}

	// A rejected person may apply again: pending once more.
	rex := w.signIn("rex@example.com")
	rex.form(manualPage, nil, true)
	rexID := int64(rex.programs()[0]["partner_id"].(float64))
	manual.data(manual.do(http.MethodPost, manual.base+"/partners/"+itoa(rexID)+"/reject", nil), http.StatusOK)
	if res, _ := rex.form(manualPage, nil, true); res.StatusCode != http.StatusSeeOther || rex.programs()[0]["status"] != "pending" {
		t.Errorf("applying again after a rejection: %d %v", res.StatusCode, rex.programs())
	}
}

// The daily stats: 7, 30 or 90 days (30 by default) ending today by the server's clock, counting real
// clicks, settled leads, sales and their commission; any other length is refused.
func TestPortalStats(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	a := w.brand(nil)
	_, annURL := a.partner("Ann", "ann@example.com")
	portalSale(t, a, annURL, "stats-customer", "", 5000) // a click, a lead, a sale: 20% of 50.00 USD
	for _, ua := range []string{"Twitterbot/1.0", "test-click"} {
		body := map[string]any{"affiliate_url": annURL}
		if ua == "test-click" {
			body["additional_data"] = map[string]any{"test_mode": true}
		}
		if res := w.env.Do(http.MethodPost, "/api/v1/track/click", body, "User-Agent", ua); res.Status != http.StatusOK {
			t.Fatalf("click: %d %s", res.Status, res.Body)
		}
	}
	// The events are stamped by the database's clock: the server's moves up to it, so that its today is
	// never before their day (a test that runs across UTC midnight).
	var dbNow time.Time
	if err := w.env.DB.Get(&dbNow, `SELECT now()`); err != nil {
		t.Fatal(err)
	}
	if d := dbNow.Sub(w.clock.Now()); d > 0 {
		w.clock.Advance(d)
	}
	ann := w.signIn("ann@example.com")
	var clickDay, saleDay time.Time
	if err := w.env.DB.Get(&clickDay, `SELECT (click_timestamp AT TIME ZONE 'UTC')::date FROM clicks WHERE user_agent = 'ua-stats-customer'`); err != nil {
		t.Fatal(err)
	}
	if err := w.env.DB.Get(&saleDay, `SELECT (sale_date AT TIME ZONE 'UTC')::date FROM sales`); err != nil {
		t.Fatal(err)
	}
	check := func(query string, days int) {
		t.Helper()
		rows := ann.list(portalPath(a.r.ProgramID, "stats"+query))
		today := w.clock.Now().UTC().Format(time.DateOnly)
		if len(rows) != days || rows[days-1]["day"] != today {
			t.Fatalf("stats%s: %d days ending %v, want %d ending %s", query, len(rows), rows[len(rows)-1]["day"], days, today)
		}
		var clicks, leads, sales float64
		for i, r := range rows {
			day, _ := time.Parse(time.DateOnly, r["day"].(string))
			if want := day.AddDate(0, 0, days-1-i).Format(time.DateOnly); want != today {
				t.Errorf("stats%s: row %d is %v, not %d days before today", query, i, r["day"], days-1-i)
			}
			clicks, leads, sales = clicks+r["clicks"].(float64), leads+r["leads"].(float64), sales+r["sales"].(float64)
			if r["day"] == clickDay.Format(time.DateOnly) && r["clicks"] != 1.0 {
				t.Errorf("stats%s: the click's day %v", query, r)
			}
			if r["day"] == saleDay.Format(time.DateOnly) && (r["sales"] != 1.0 || !slices.Equal(slices.Collect(maps.Keys(r["commissions"].(map[string]any))), []string{"USD"}) ||
				r["commissions"].(map[string]any)["USD"] != 1000.0) {
				t.Errorf("stats%s: the sale's day %v", query, r)
			}
		}
		if clicks != 1 || leads != 1 || sales != 1 {
			t.Errorf("stats%s: %v clicks, %v leads, %v sales, want 1 each (no bot, no test click)", query, clicks, leads, sales)
		}
	}
	check("?days=7", 7)
	check("?days=30", 30)
	check("?days=90", 90)
	check("", 30)
	for _, q := range []string{"days=5", "days=0", "days=-7", "days=365", "days=abc", "days=7.0"} {
		if res := ann.do(http.MethodGet, portalPath(a.r.ProgramID, "stats?"+q), nil); res.Status != http.StatusBadRequest {
			t.Errorf("stats?%s: %d %s", q, res.Status, res.Body)
		}
	}
	// Two days on, the week ends two days later and still holds the events.
	w.clock.Advance(48 * time.Hour)
	check("?days=7", 7)
}

// A partner's own data: link codes (format, taken, the program's switch), commissions with customers
// masked, and payout details sealed at rest, shared by the programs of one workspace.
func TestPortalOwnData(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	a := w.brand(nil)
	annID, annURL := a.partner("Ann", "ann@example.com")
	ann := w.signIn("ann@example.com")
	links := portalPath(a.r.ProgramID, "links")

	// Links: 201 with her own code, 400 out of format, 409 taken (here or in any program), 403 when the
	// program turns codes off.
	l := ann.do(http.MethodPost, links, map[string]any{"code": "ann-reviews"})
	if l.Status != http.StatusCreated {
		t.Fatalf("create link: %d %s", l.Status, l.Body)
	}
	if d := l.JSON(t)["data"].(map[string]any); d["short_link"] != "ann-reviews" || d["partner_id"] != float64(annID) ||
		d["program_id"] != float64(a.r.ProgramID) || d["enabled"] != true || !strings.Contains(d["referral_url"].(string), "aff=ann-reviews") {
		t.Errorf("link = %v", d)
	}
	for _, code := range []string{"ab", strings.Repeat("a", 33), "Ann", "ann_reviews", "ann reviews", "ännchen", "", "a/b"} {
		portalRefused(t, "code "+code, ann.do(http.MethodPost, links, map[string]any{"code": code}), http.StatusBadRequest,
			"code must be 3 to 32 characters of a-z, 0-9 and -")
	}
	if res := ann.do(http.MethodPost, links, map[string]any{"code": "ann-reviews"}); res.Status != http.StatusConflict {
		t.Errorf("a taken code: %d %s", res.Status, res.Body)
	}
	if res := ann.do(http.MethodPost, links, map[string]any{"code": a.r.ShortLink}); res.Status != http.StatusConflict {
		t.Errorf("the seeded partner's code: %d %s", res.Status, res.Body)
	}
	a.data(a.do(http.MethodPatch, a.base, map[string]any{"partner_link_codes": false}), http.StatusOK)
	portalRefused(t, "codes off", ann.do(http.MethodPost, links, map[string]any{"code": "ann-second"}), http.StatusForbidden,
		"This program does not let partners make their own link codes")
	if p := ann.programs(); p[0]["partner_link_codes"] != false {
		t.Errorf("program = %v, want partner_link_codes false", p[0])
	}
	if got := ann.list(links); len(got) != 2 {
		t.Errorf("links = %v, want the brand's and her own", got)
	}

	// Commissions: newest first, the customer masked (email, else key).
	portalSale(t, a, annURL, "cus_ABCDEF42", "", 1000)
	portalSale(t, a, annURL, "plain-customer", "carla.r@shop.example", 2000)
	got := ann.list(portalPath(a.r.ProgramID, "commissions"))
	if len(got) != 2 || got[0]["customer"] != "c***@shop.example" || got[1]["customer"] != "cus_***42" ||
		got[0]["amount_cents"] != 400.0 || got[0]["partner_id"] != float64(annID) {
		t.Errorf("commissions = %v", got)
	}
	if strings.Contains(fmt.Sprint(got), "carla") || strings.Contains(fmt.Sprint(got), "ABCDEF") {
		t.Errorf("commissions show a customer: %v", got)
	}
	if page := ann.list(portalPath(a.r.ProgramID, "commissions?status=approved&limit=1")); len(page) != 1 {
		t.Errorf("a page of one: %v", page)
	}
	if res := ann.do(http.MethodGet, portalPath(a.r.ProgramID, "commissions?status=bogus"), nil); res.Status != http.StatusBadRequest {
		t.Errorf("status=bogus: %d %s", res.Status, res.Body)
	}

	// Payout details: null until given, then as stored (trimmed), sealed at rest.
	details := portalPath(a.r.ProgramID, "payout-details")
	if d := ann.data(details); d != nil {
		t.Errorf("details before any = %v", d)
	}
	res := ann.do(http.MethodPut, details, map[string]any{"method": "paypal", "paypal_email": " ann.pay@example.com "})
	var set struct{ Data map[string]any }
	res.Decode(t, &set)
	if res.Status != http.StatusOK || set.Data["method"] != "paypal" || set.Data["paypal_email"] != "ann.pay@example.com" ||
		set.Data["bank_details"] != nil || set.Data["updated_at"] == nil {
		t.Fatalf("set details: %d %s", res.Status, res.Body)
	}
	if d := ann.data(details); !mapsEqual(d, set.Data) {
		t.Errorf("details = %v, want %v", d, set.Data)
	}
	var stored struct {
		Method string `db:"payout_method"`
		Sealed []byte `db:"payout_details"`
	}
	if err := w.env.DB.Get(&stored, `SELECT payout_method, payout_details FROM partners WHERE id = $1`, annID); err != nil {
		t.Fatal(err)
	}
	if stored.Method != "paypal" || len(stored.Sealed) < 28 || strings.Contains(string(stored.Sealed), "ann.pay") || strings.Contains(string(stored.Sealed), "paypal_email") {
		t.Errorf("stored details are not sealed: %q %q", stored.Method, stored.Sealed)
	}
	if n := w.env.Count(`SELECT count(*) FROM partners WHERE id = $1 AND position(convert_to('ann.pay', 'UTF8') in payout_details) > 0`, annID); n != 0 {
		t.Error("the sealed details contain the email")
	}
	bank := strings.Repeat("é", 1000)
	for _, c := range []struct {
		body map[string]any
		ok   bool
	}{
		{map[string]any{"method": "bank_transfer", "bank_details": bank}, true},
		{map[string]any{"method": "bank_transfer", "bank_details": bank + "x"}, false},
		{map[string]any{"method": "bank_transfer", "bank_details": "  \n "}, false},
		{map[string]any{"method": "bank_transfer"}, false},
		{map[string]any{"method": "paypal"}, false},
		{map[string]any{"method": "paypal", "paypal_email": "Ann <ann@example.com>"}, false},
		{map[string]any{"method": "paypal", "paypal_email": "not an email"}, false},
		{map[string]any{"method": "paypal", "paypal_email": "ann@localhost"}, false},
		{map[string]any{"method": "wire", "bank_details": "IBAN"}, false},
		{map[string]any{"method": ""}, false},
	} {
		res := ann.do(http.MethodPut, details, c.body)
		if c.ok {
			if res.Status != http.StatusOK || res.JSON(t)["data"].(map[string]any)["bank_details"] != bank {
				t.Errorf("%.60v: %d %.200s", c.body, res.Status, res.Body)
			}
			continue
		}
		portalRefused(t, fmt.Sprintf("%.60v", c.body), res, http.StatusBadRequest, portalDetailsWrong)
	}
	if d := ann.data(details); d["method"] != "bank_transfer" || d["bank_details"] != bank || d["paypal_email"] != nil {
		t.Errorf("details after the refusals = %.200v, want the bank transfer", d)
	}

	// The details are on the partner record of the workspace: the same person approved in another program
	// of the same brand sees (and changes) the same details there.
	sib := w.sibling(a)
	sib.data(sib.do(http.MethodPost, sib.base+"/partners", map[string]any{"name": "Ann", "email": "ann@example.com"}), http.StatusCreated)
	if p := ann.programs(); len(p) != 2 || p[0]["partner_id"] != p[1]["partner_id"] {
		t.Fatalf("programs = %v, want two with one partner record", p)
	}
	if d := ann.data(portalPath(sib.r.ProgramID, "payout-details")); d["bank_details"] != bank {
		t.Errorf("the sibling program's details = %.100v, want the workspace's", d)
	}

	// Sealed details belong to their partner record: copied onto another partner's row (by someone who
	// can write the database but has not the key), they do not open there.
	benID, benURL := a.partner("Ben", "ben@example.com")
	if res := ann.do(http.MethodPut, details, map[string]any{"method": "paypal", "paypal_email": "ann.pay@example.com"}); res.Status != http.StatusOK {
		t.Fatalf("set details: %d %s", res.Status, res.Body)
	}
	if _, err := w.env.DB.Exec(`UPDATE partners b SET payout_method = a.payout_method, payout_details = a.payout_details
		FROM partners a WHERE a.id = $1 AND b.id = $2`, annID, benID); err != nil {
		t.Fatal(err)
	}
	ben := w.signIn("ben@example.com")
	if res := ben.do(http.MethodGet, details, nil); res.Status != http.StatusInternalServerError || strings.Contains(string(res.Body), "ann.pay") {
		t.Errorf("Ann's details on Ben's row: %d %.200s", res.Status, res.Body)
	}
	// Nor does the brand's export pay Ben's payout to Ann's PayPal address.
	portalSale(t, a, benURL, "ben-customer", "", 1000)
	a.list(a.do(http.MethodPost, a.base+"/payouts", nil), http.StatusCreated)
	if res := a.do(http.MethodGet, a.base+"/payouts.csv", nil); res.Status != http.StatusInternalServerError || strings.Contains(string(res.Body), "ann.pay") {
		t.Errorf("the brand's payouts.csv with Ann's details on Ben's row: %d %.300s", res.Status, res.Body)
	}
}

// mapsEqual compares two JSON objects.
func mapsEqual(a, b map[string]any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// The portal page and its files: signed out to the sign-in; signed in the page with its CSRF token, a
// strict Content-Security-Policy and no caching; the files with ETags.
func TestPortalPage(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	res, _ := w.page(http.MethodGet, "/partners", nil)
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/partners/login" {
		t.Fatalf("signed out: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	for _, cookie := range []string{partnerCookie + "=nosuchsession", partnerCookie + "="} {
		if res, _ := w.page(http.MethodGet, "/partners", nil, "Cookie", cookie); res.StatusCode != http.StatusFound {
			t.Errorf("cookie %s: %d", cookie, res.StatusCode)
		}
	}
	ann := w.signIn("ann@example.com")
	res, page := ann.b.get("/partners?program=%22%3E%3Cscript%3E")
	if res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-store" ||
		res.Header.Get("Content-Security-Policy") != dashboard.ContentSecurityPolicy || !strings.Contains(page, "ann@example.com") ||
		!strings.Contains(page, `<meta name="csrf-token" content="`+dashboard.CSRFToken(ann.token)+`">`) || strings.Contains(page, `"><script>`) {
		t.Fatalf("portal: %d %v %s", res.StatusCode, res.Header, page)
	}
	for _, c := range []struct{ asset, contentType string }{{"portal.js", "text/javascript"}, {"portal.css", "text/css"}} {
		res, body := ann.b.get("/partners/assets/" + c.asset)
		etag := res.Header.Get("ETag")
		if res.StatusCode != http.StatusOK || etag == "" || !strings.HasPrefix(res.Header.Get("Content-Type"), c.contentType) || len(body) < 500 ||
			!strings.Contains(res.Header.Get("Cache-Control"), "max-age") {
			t.Fatalf("%s: %d %v", c.asset, res.StatusCode, res.Header)
		}
		for _, match := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
			if res := w.env.Do(http.MethodGet, "/partners/assets/"+c.asset, nil, "If-None-Match", match); res.Status != http.StatusNotModified ||
				res.Header.Get("ETag") != etag || len(res.Body) != 0 {
				t.Errorf("%s with If-None-Match %s: %d %v", c.asset, match, res.Status, res.Header)
			}
		}
		if res := w.env.Do(http.MethodGet, "/partners/assets/"+c.asset, nil, "If-None-Match", `"stale"`); res.Status != http.StatusOK {
			t.Errorf("%s with a stale ETag: %d", c.asset, res.Status)
		}
	}
	for _, name := range []string{"app.js", "portal.html", "portal.js.map", "PORTAL.JS", "%2e%2e%2fportal.js"} {
		platformError(t, w.env.Do(http.MethodGet, "/partners/assets/"+name, nil), http.StatusNotFound, "NotFoundError", "No such file of the partner portal")
	}
}

// The program's terms are told in one sentence, the same everywhere: the program's answer (the
// dashboard), the partner portal, the invitation's mail and page, and the open program's page.
func TestTermsToldTheSameEverywhere(t *testing.T) {
	t.Parallel()
	w := newPortalWorld(t)
	f := w.brand(map[string]any{"enrollment": "open", "commission_type": "recurring_percent", "commission_rate": 30,
		"duration_months": 12, "hold_days": 14, "commission_approval": "manual", "payout_minimum_cents": 5000})
	const want = "Pays 30% of every sale of a customer for 12 months after their first. Commissions are held 14 days, " +
		"then approved by the brand. Payouts from 50.00 USD, 50.00 EUR or 5000 VND."
	if got := f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK)["terms"]; got != want {
		t.Errorf("the program's terms: %q\nwant %q", got, want)
	}
	escaped := template.HTMLEscapeString(want)
	if _, page := w.page(http.MethodGet, "/p/"+portalSlug(f), nil); !strings.Contains(page, escaped) {
		t.Errorf("the open program's page does not say %q:\n%s", want, page)
	}
	_, token := portalInvitation(t, f, "tess@example.com")
	if m := f.env.Mailbox.Messages()[0]; !strings.Contains(strings.Join(strings.Fields(m.Text), " "), "The terms: "+want) ||
		!strings.Contains(m.HTML, escaped) {
		t.Errorf("the invitation's mail does not say %q:\n%s", want, m.Text)
	}
	s := w.signIn("tess@example.com")
	if _, page := w.page(http.MethodGet, "/partners/invitations/"+token, nil, s.credentials()...); !strings.Contains(page, escaped) {
		t.Errorf("the invitation's page does not say %q:\n%s", want, page)
	}
	if res, _ := w.page(http.MethodPost, "/partners/invitations/"+token, url.Values{"csrf_token": {dashboard.CSRFToken(s.token)}}, s.credentials()...); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("accepting: %d", res.StatusCode)
	}
	progs := s.programs()
	if len(progs) != 1 || progs[0]["terms"] != want {
		t.Errorf("the portal's terms: %v\nwant %q", progs, want)
	}
}
