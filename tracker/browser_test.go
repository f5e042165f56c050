package tracker_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/programs"
)

// A referral visit stores the click the server recorded in svc_click_id, with the documented attributes.
func TestClickCookie(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("server_required", "www.brand.test")
	s.exec(`UPDATE programs SET cookie_window_days = 30 WHERE id = $1`, p.ProgramID)
	s.tagged("/pricing", p.ProgramID, "")
	tb := openTab(t)
	landing := s.url("www.brand.test", "/pricing", "aff="+p.ShortLink+"&utm_source=news")
	tb.visit(landing)

	var clickID, pageURL, pageTitle string
	if err := s.env.DB.QueryRowx(`SELECT click_id, page_url, page_title FROM clicks`).Scan(&clickID, &pageURL, &pageTitle); err != nil {
		t.Fatalf("no click recorded: %v", err)
	}
	if pageURL != landing || pageTitle != "Pricing" {
		t.Errorf("click page_url %q, page_title %q", pageURL, pageTitle)
	}
	c := tb.clickCookie()
	if c == nil {
		t.Fatalf("no svc_click_id cookie: %+v", tb.cookies())
	}
	want := cookie{Name: "svc_click_id", Value: clickID, Domain: ".brand.test", Path: "/", SameSite: "Lax", Expires: c.Expires}
	if diff := cmp.Diff(want, *c); diff != "" {
		t.Errorf("cookie (-want +got):\n%s", diff)
	}
	if expires := time.Unix(int64(c.Expires), 0); math.Abs(time.Until(expires).Hours()-30*24) > 0.1 {
		t.Errorf("cookie expires %v, want 30 days from now", expires)
	}
	if n := len(tb.cookies()); n != 1 {
		t.Errorf("%d cookies left behind, want svc_click_id only: %+v", n, tb.cookies())
	}

	var got struct {
		ClickID        string `json:"clickId"`
		ProgramID      string `json:"programId"`
		HasAttribution bool   `json:"hasAttribution"`
		AffiliateURL   string `json:"affiliateUrl"`
	}
	tb.eval("svc.getData()", &got)
	if got.ClickID != clickID || got.ProgramID != fmt.Sprint(p.ProgramID) || !got.HasAttribution || got.AffiliateURL != landing {
		t.Errorf("getData() = %+v", got)
	}
	var viaGetter string
	tb.eval("svc.getClickId()", &viaGetter)
	if viaGetter != clickID {
		t.Errorf("getClickId() = %q", viaGetter)
	}
	rec := tb.record()
	if len(rec.svcLog()) != 0 || len(rec.Errors) != 0 {
		t.Errorf("without debug the tracker logged %v; page errors %v", rec.svcLog(), rec.Errors)
	}
}

// On HTTPS the cookie is Secure.
func TestClickCookieOnHTTPS(t *testing.T) {
	t.Parallel()
	s := newHTTPSSite(t)
	p := s.program("server_required", "www.brand.test")
	s.tagged("/", p.ProgramID, "")
	tb := openTab(t)
	tb.visit(s.url("www.brand.test", "/", "aff="+p.ShortLink))
	c := tb.clickCookie()
	if c == nil || !c.Secure || c.Domain != ".brand.test" || c.SameSite != "Lax" {
		t.Fatalf("cookie = %+v", c)
	}
	if n := s.count(`SELECT count(*) FROM clicks WHERE click_id = $1`, c.Value); n != 1 {
		t.Error("the cookie does not hold the recorded click")
	}
}

// The cookie goes on the highest domain the browser allows, unless cookieDomain says otherwise; an IP
// address gets a host-only cookie.
func TestCookieDomain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, host, attrs, init, want string
	}{
		{name: "www", host: "www.brand.test", want: ".brand.test"},
		{name: "deeper subdomain", host: "shop.eu.brand.test", want: ".brand.test"},
		{name: "apex", host: "brand.test", want: ".brand.test"},
		{name: "IP address", host: "127.0.0.1", want: "127.0.0.1"},
		{name: "data-svc-cookie-domain", host: "shop.eu.brand.test", attrs: `data-svc-cookie-domain=".eu.brand.test"`, want: ".eu.brand.test"},
		{name: "init cookieDomain", host: "www.brand.test", init: `{cookieDomain: "www.brand.test"}`, want: ".www.brand.test"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t)
			p := s.program("server_required", tc.host)
			if tc.init != "" {
				// init before the tag's own start-up: queued calls run first.
				s.page("/p", fmt.Sprintf(`<!doctype html><script>window.svcQueue = [["init", %s]];</script>
<script defer src="{{tracker}}" data-svc-program-id="%d"></script>`, tc.init, p.ProgramID))
			} else {
				s.tagged("/p", p.ProgramID, tc.attrs)
			}
			tb := openTab(t)
			tb.visit(s.url(tc.host, "/p", "aff="+p.ShortLink))
			c := tb.clickCookie()
			if c == nil || c.Domain != tc.want {
				t.Fatalf("cookie %+v, want domain %s (all: %+v)", c, tc.want, tb.cookies())
			}
			for _, other := range tb.cookies() {
				if other.Name != "svc_click_id" {
					t.Errorf("probe cookie left behind: %+v", other)
				}
			}
		})
	}
}

// First click wins: a later referral visit is still reported, but the cookie keeps the first click.
func TestFirstClickWins(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("browser_allowed", "www.brand.test")
	ctx := context.Background()
	partner, err := programs.AddPartner(ctx, s.env.DB.DB, p.ProgramID, programs.NewPartner{Name: "Second partner", Email: "second@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := programs.CreateLink(ctx, s.env.DB.DB, p.ProgramID, partner.ID, "second")
	if err != nil {
		t.Fatal(err)
	}
	s.tagged("/", p.ProgramID, "")
	tb := openTab(t)
	first := s.url("www.brand.test", "/", "aff="+p.ShortLink)
	tb.visit(first)
	firstCookie := tb.clickCookie()
	tb.visit(s.url("www.brand.test", "/", "aff="+second.ShortLink))

	if n := s.count(`SELECT count(*) FROM clicks`); n != 2 {
		t.Fatalf("%d clicks recorded, want both visits", n)
	}
	if n := s.count(`SELECT count(*) FROM clicks WHERE partner_id = $1`, partner.ID); n != 1 {
		t.Error("the second partner's click was not recorded")
	}
	c := tb.clickCookie()
	if firstCookie == nil || c == nil || c.Value != firstCookie.Value {
		t.Fatalf("cookie %+v after the second visit, want the first %+v", c, firstCookie)
	}
	if n := s.count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND link_id = $2`, c.Value, p.LinkID); n != 1 {
		t.Error("the cookie does not hold the first link's click")
	}
	var url string
	tb.eval("svc.getData().affiliateUrl", &url)
	if url != first {
		t.Errorf("affiliateUrl = %q, want the first referral URL", url)
	}
	// The lead is attributed to the first partner.
	var res struct {
		OK   bool `json:"ok"`
		Data struct {
			Attribution struct {
				PartnerID int64 `json:"partner_id"`
			} `json:"attribution"`
		} `json:"data"`
	}
	tb.eval(`svc.signup("user_1", "ada@example.com")`, &res)
	if !res.OK || res.Data.Attribution.PartnerID != p.PartnerID {
		t.Errorf("signup = %+v, want attributed to partner %d", res, p.PartnerID)
	}
}

// A page without aff reports nothing and sets nothing.
func TestNoAffNoClick(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("server_required", "www.brand.test")
	s.tagged("/", p.ProgramID, "data-svc-debug")
	tb := openTab(t)
	tb.visit(s.url("www.brand.test", "/", "utm_source=news"))
	if n := s.count(`SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded", n)
	}
	if c := tb.cookies(); len(c) != 0 {
		t.Errorf("cookies set: %+v", c)
	}
	rec := tb.record()
	if n := rec.requested("POST", "/api/v1/track/click"); n != 0 {
		t.Errorf("%d click requests sent", n)
	}
	if !slices.Contains(rec.svcLog(), "info: [svc] no aff parameter in the page URL: no click to report") {
		t.Errorf("log = %v", rec.svcLog())
	}
	var data map[string]any
	tb.eval("svc.getData()", &data)
	want := map[string]any{"clickId": nil, "programId": fmt.Sprint(p.ProgramID), "hasAttribution": false, "affiliateUrl": nil}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("getData() (-want +got):\n%s", diff)
	}
}

// A link turned off records nothing and sets no cookie; with debug on the tracker says why.
func TestDisabledLink(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{true, false} {
		t.Run(fmt.Sprint("debug=", debug), func(t *testing.T) {
			s := newSite(t)
			p := s.program("server_required", "www.brand.test")
			if _, err := programs.SetLinkEnabled(context.Background(), s.env.DB.DB, p.LinkID, false); err != nil {
				t.Fatal(err)
			}
			attrs := ""
			if debug {
				attrs = `data-svc-debug="true"`
			}
			s.tagged("/", p.ProgramID, attrs)
			tb := openTab(t)
			tb.visit(s.url("www.brand.test", "/", "aff="+p.ShortLink))
			if n := s.count(`SELECT count(*) FROM clicks`); n != 0 {
				t.Errorf("%d clicks recorded", n)
			}
			if c := tb.clickCookie(); c != nil {
				t.Errorf("cookie set: %+v", c)
			}
			rec := tb.record()
			warned := slices.ContainsFunc(rec.svcLog(), func(l string) bool {
				return strings.HasPrefix(l, "warning: [svc] referral link turned off, no click recorded:")
			})
			if warned != debug || len(rec.Errors) != 0 {
				t.Errorf("log %v, page errors %v", rec.svcLog(), rec.Errors)
			}
		})
	}
}

// A page whose origin the program does not allow is refused: nothing recorded, no cookie, and the error
// is logged even without debug.
func TestOriginNotAllowed(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("server_required", "www.brand.test")
	// Another program lists www.other.test, so the preflight passes and the click itself answers 403.
	s.program("server_required", "www.other.test")
	s.tagged("/", p.ProgramID, "")
	tb := openTab(t)
	tb.visit(s.url("www.other.test", "/", "aff="+p.ShortLink))
	if n := s.count(`SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded", n)
	}
	if c := tb.clickCookie(); c != nil {
		t.Errorf("cookie set: %+v", c)
	}
	want := fmt.Sprintf("error: [svc] click not recorded (403): Origin %s is not allowed for this program", s.origin("www.other.test"))
	if log := tb.record().svcLog(); !slices.Contains(log, want) {
		t.Errorf("log = %v, want %q", log, want)
	}

	// An origin no program lists fails the preflight: the browser blocks the request.
	tb = openTab(t)
	tb.visit(s.url("www.nobody.test", "/", "aff="+p.ShortLink))
	if n := s.count(`SELECT count(*) FROM clicks`); n != 0 || tb.clickCookie() != nil {
		t.Errorf("%d clicks recorded, cookie %+v", n, tb.clickCookie())
	}
	rec := tb.record()
	if !slices.ContainsFunc(rec.svcLog(), func(l string) bool { return strings.HasPrefix(l, "error: [svc] click not recorded (0): network error") }) || len(rec.Errors) != 0 {
		t.Errorf("log = %v, page errors %v", rec.svcLog(), rec.Errors)
	}
}

type signupResult struct {
	OK     bool `json:"ok"`
	Status int  `json:"status"`
	Data   struct {
		Success     bool   `json:"success"`
		Provisional bool   `json:"provisional"`
		Message     string `json:"message"`
	} `json:"data"`
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// signup() sends a browser-mode lead: provisional on a server_required program, settled on
// browser_allowed; without a cookie it sends customer_key alone.
func TestSignup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		leadAuth    string
		provisional bool
		status      string
	}{
		{"server_required", true, "provisional"},
		{"browser_allowed", false, "settled"},
	} {
		t.Run(tc.leadAuth, func(t *testing.T) {
			s := newSite(t)
			p := s.program(tc.leadAuth, "www.brand.test")
			s.tagged("/", p.ProgramID, "data-svc-debug")
			tb := openTab(t)
			tb.visit(s.url("www.brand.test", "/", "aff="+p.ShortLink))
			var res signupResult
			tb.eval(`svc.signup("user_42", "ada@example.com")`, &res)
			if !res.OK || res.Status != 200 || !res.Data.Success || res.Data.Provisional != tc.provisional {
				t.Fatalf("signup = %+v", res)
			}
			clickID := tb.clickCookie().Value
			if n := s.count(`SELECT count(*) FROM leads WHERE click_id = $1 AND customer_key = 'user_42' AND email = 'ada@example.com'
				AND status = $2 AND source = 'browser'`, clickID, tc.status); n != 1 {
				t.Errorf("no %s browser lead for click %s", tc.status, clickID)
			}
			wantLog := "info: [svc] lead recorded"
			if tc.provisional {
				wantLog = "info: [svc] lead recorded as provisional (the brand's backend settles it)"
			}
			if log := tb.record().svcLog(); !slices.Contains(log, wantLog) {
				t.Errorf("log = %v", log)
			}
		})
	}

	t.Run("no cookie", func(t *testing.T) {
		s := newSite(t)
		p := s.program("browser_allowed", "www.brand.test")
		s.tagged("/", p.ProgramID, "data-svc-debug")
		tb := openTab(t)
		tb.visit(s.url("www.brand.test", "/", ""))
		var res signupResult
		tb.eval(`svc.signup("user_7")`, &res)
		if res.OK || res.Status != 400 || res.Error.Message != "Customer not found. Provide a valid click_id or customer_key." {
			t.Errorf("signup = %+v", res)
		}
		var bodies []string
		for _, q := range tb.record().Requests {
			if strings.Contains(q.URL, "/track/lead") && q.Method == "POST" {
				bodies = append(bodies, q.URL)
			}
		}
		if len(bodies) != 1 || s.count(`SELECT count(*) FROM leads`) != 0 {
			t.Errorf("lead requests %v, %d leads", bodies, s.count(`SELECT count(*) FROM leads`))
		}
		if log := tb.record().svcLog(); !slices.Contains(log, "warning: [svc] no svc_click_id cookie: the lead is sent with customer_key alone and stays unattributed") {
			t.Errorf("log = %v", log)
		}
	})
}

// Debug logs info and warnings with the [svc] prefix; errors are logged either way; nothing throws.
func TestDebugLogging(t *testing.T) {
	t.Parallel()
	for _, debug := range []bool{true, false} {
		t.Run(fmt.Sprint("debug=", debug), func(t *testing.T) {
			s := newSite(t)
			p := s.program("server_required", "www.brand.test")
			attrs := `data-svc-debug="false"`
			if debug {
				attrs = "data-svc-debug"
			}
			s.tagged("/", p.ProgramID, attrs)
			tb := openTab(t)
			tb.visit(s.url("www.brand.test", "/", "aff="+p.ShortLink))
			var ret any
			tb.eval(`svc.signup()`, &ret) // a mistake of the host page: logged, not thrown
			rec := tb.record()
			log := rec.svcLog()
			infos := slices.ContainsFunc(log, func(l string) bool { return strings.HasPrefix(l, "info: [svc] tracker ready for program ") })
			if infos != debug {
				t.Errorf("info lines present = %v, want %v: %v", infos, debug, log)
			}
			if !slices.Contains(log, "error: [svc] signup(userId, email): userId is required") {
				t.Errorf("the error was not logged: %v", log)
			}
			for _, m := range rec.Console {
				if !strings.HasPrefix(m.Text, "[svc]") {
					t.Errorf("console line without the prefix: %+v", m)
				}
			}
			if len(rec.Errors) != 0 {
				t.Errorf("page errors: %v", rec.Errors)
			}
		})
	}
}

// Calls pushed to svcQueue before the script loads are replayed; loadSvc starts a page whose tag has no
// program id.
func TestQueueAndLoadSvc(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("browser_allowed", "www.brand.test")
	s.page("/queued", fmt.Sprintf(`<!doctype html><script>
window.svcQueue = window.svcQueue || [];
svcQueue.push(["init", {programId: %d, debug: true}]);
svcQueue.push(["signup", "queued_user", "q@example.com"]);
svcQueue.push(function (svc) { window.sawProgram = svc.getData().programId; });
</script><script defer src="{{tracker}}"></script>`, p.ProgramID))
	s.page("/loader", fmt.Sprintf(`<!doctype html><script src="{{tracker}}"></script>
<script>loadSvc(%d, { debug: true }); svcQueue.push(["signup", "loader_user"]);</script>`, p.ProgramID))

	for _, tc := range []struct{ path, user string }{{"/queued", "queued_user"}, {"/loader", "loader_user"}} {
		t.Run(tc.path, func(t *testing.T) {
			tb := openTab(t)
			tb.visit(s.url("www.brand.test", tc.path, "aff="+p.ShortLink))
			c := tb.clickCookie()
			if c == nil {
				t.Fatalf("no cookie: %v", tb.record().svcLog())
			}
			if n := s.count(`SELECT count(*) FROM leads WHERE click_id = $1 AND customer_key = $2 AND status = 'settled'`, c.Value, tc.user); n != 1 {
				t.Errorf("the queued signup did not record a lead: %v", tb.record().svcLog())
			}
			if log := tb.record().svcLog(); !slices.ContainsFunc(log, func(l string) bool {
				return strings.HasPrefix(l, "info: [svc] tracker ready for program "+fmt.Sprint(p.ProgramID))
			}) {
				t.Errorf("debug from init/loadSvc not applied: %v", log)
			}
		})
	}
	tb := openTab(t)
	tb.visit(s.url("www.brand.test", "/queued", ""))
	var saw string
	tb.eval("window.sawProgram", &saw)
	if saw != fmt.Sprint(p.ProgramID) {
		t.Errorf("queued function saw program %q", saw)
	}
}

// Nothing the tracker meets throws into the host page: fetch blocked by an extension, storage denied,
// the script loaded twice.
func TestNeverThrows(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	p := s.program("server_required", "www.brand.test")
	s.page("/hostile", fmt.Sprintf(`<!doctype html><script>
window.fetch = function () { throw new Error("blocked by an extension"); };
Object.defineProperty(window, "localStorage", { get: function () { throw new Error("denied"); } });
</script>
<script defer src="{{tracker}}" data-svc-program-id="%d"></script>
<script defer src="{{tracker}}" data-svc-program-id="%d"></script>`, p.ProgramID, p.ProgramID))
	tb := openTab(t)
	tb.visit(s.url("www.brand.test", "/hostile", "aff="+p.ShortLink))
	var res signupResult
	tb.eval(`svc.signup("u")`, &res)
	var data map[string]any
	tb.eval(`svc.getData()`, &data)
	rec := tb.record()
	if len(rec.Errors) != 0 {
		t.Errorf("page errors: %v", rec.Errors)
	}
	if res.OK || data["hasAttribution"] != false {
		t.Errorf("signup %+v, data %v", res, data)
	}
	errorsLogged := 0
	for _, l := range rec.svcLog() {
		if strings.HasPrefix(l, "error: [svc]") {
			errorsLogged++
		}
	}
	if errorsLogged == 0 {
		t.Errorf("the failures were not logged: %v", rec.svcLog())
	}

	// Loaded twice, the first copy stays in charge: one click.
	s.page("/twice", fmt.Sprintf(`<!doctype html>
<script defer src="{{tracker}}" data-svc-program-id="%d"></script>
<script defer src="{{tracker}}?again" data-svc-program-id="%d"></script>`, p.ProgramID, p.ProgramID))
	tb = openTab(t)
	tb.visit(s.url("www.brand.test", "/twice", "aff="+p.ShortLink))
	rec = tb.record()
	if n := rec.requested("GET", "/js/svc.js"); n != 2 || len(rec.Errors) != 0 {
		t.Errorf("%d script loads, page errors %v", n, rec.Errors)
	}
	if n := s.count(`SELECT count(*) FROM clicks`); n != 1 || rec.requested("POST", "/api/v1/track/click") != 1 {
		t.Errorf("%d clicks recorded, want 1", n)
	}
}
