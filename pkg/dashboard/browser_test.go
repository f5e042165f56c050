package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
	"github.com/reftrack/reftrack/pkg/testkit/browsertest"
)

var chromium browsertest.Suite

func TestMain(m *testing.M) {
	os.Exit(apitest.Main(func() int { return chromium.Run(m) })) // databases handed on and exchanges counted, see apitest.Main
}

// app is a reftrack server (every answer checked against the spec) and a browser tab on its dashboard.
type app struct {
	t    *testing.T
	env  *apitest.Env
	base string
	tab  *browsertest.Tab
}

func open(t *testing.T, env *apitest.Env) *app {
	t.Helper()
	return &app{t: t, env: env, base: env.Proxy(), tab: chromium.Open(t)}
}

// signIn opens the dashboard, which sends the browser through the login page's form, and waits until
// the page has loaded the account's programs.
func (a *app) signIn(email string) {
	a.t.Helper()
	if status := a.tab.Goto(a.base + "/dashboard"); status != http.StatusOK {
		a.t.Fatalf("GET /dashboard: %d", status)
	}
	var path string
	a.tab.Eval("location.pathname", &path)
	if path != "/login" {
		a.t.Fatalf("signed out, the dashboard went to %s, not the login page", path)
	}
	a.fill("#email", email)
	a.click("button[type=submit]")
	a.tab.WaitFor(`location.pathname === "/dashboard" && document.body.hasAttribute("data-loaded")`)
}

// view opens one of the dashboard's views by its link in the navigation, as a person would, and waits
// until it is the one shown.
func (a *app) view(name string) {
	a.t.Helper()
	a.tab.Click(fmt.Sprintf(`#views a[data-view=%q]`, name))
	a.tab.WaitFor(fmt.Sprintf(`(document.querySelector('#views a[aria-current="page"]') || {}).dataset.view === %q`, name))
}

// on opens the view that holds selector's element when another view is shown (nothing for an element
// outside the views, or on the portal's pages).
func (a *app) on(selector string) {
	a.t.Helper()
	if selector == "" {
		return
	}
	var name string
	a.tab.Eval(fmt.Sprintf(`(function () { var e = document.querySelector(%q), v = e && e.closest("main [data-view]");
		return v && v.hidden ? v.getAttribute("data-view") : "" })()`, selector), &name)
	if name != "" {
		a.view(name)
	}
}

// click, fill, pick and download act on an element in its view, opening the view first.
func (a *app) click(selector string) {
	a.t.Helper()
	a.on(selector)
	a.tab.Click(selector)
}

func (a *app) fill(selector, value string) {
	a.t.Helper()
	a.on(selector)
	a.tab.Fill(selector, value)
}

func (a *app) pick(selector, value string) {
	a.t.Helper()
	a.on(selector)
	a.tab.Select(selector, value)
}

func (a *app) download(selector string) browsertest.Download {
	a.t.Helper()
	a.on(selector)
	return a.tab.Download(selector)
}

// text is the element's text as shown, in its view.
func (a *app) text(selector string) string {
	a.t.Helper()
	a.on(selector)
	var s string
	a.tab.Eval(fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, selector), &s)
	return s
}

func (a *app) visible(selector string) bool {
	a.t.Helper()
	var v bool
	a.tab.Eval(fmt.Sprintf(`(function(){ var e = document.querySelector(%q); return !!e && !e.closest("[hidden]") && e.getClientRects().length > 0 })()`, selector), &v)
	return v
}

// tabFrom focuses the element from matches, presses Tab, and fails the test unless the keyboard moved the
// focus to the element to matches and the page outlines it (:focus-visible).
func (a *app) tabFrom(from, to string) {
	a.t.Helper()
	a.on(from)
	a.tab.Eval(fmt.Sprintf(`document.querySelector(%q).focus()`, from), nil)
	a.tab.Press("Tab")
	var got struct {
		On      bool
		Visible bool
		Outline string
	}
	a.tab.Eval(fmt.Sprintf(`(function () { var e = document.activeElement, s = getComputedStyle(e);
		return { on: e === document.querySelector(%q), visible: e.matches(":focus-visible"), outline: s.outlineStyle + " " + s.outlineWidth } })()`, to), &got)
	if !got.On || !got.Visible || !strings.HasPrefix(got.Outline, "solid ") || got.Outline == "solid 0px" {
		a.t.Errorf("Tab from %s: on %s %v, focus-visible %v, outline %q", from, to, got.On, got.Visible, got.Outline)
	}
}

// rows are the events table's rows as "type|details".
func (a *app) rows() []string {
	a.t.Helper()
	var out []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#events tbody tr[data-type]")).map(function (tr) {
		return tr.dataset.type + "|" + tr.children[2].innerText })`, &out)
	return out
}

// screenshot saves a PNG of the element (to REFTRACK_SCREENSHOTS when set, else the test's temporary
// directory) and returns it decoded.
func (a *app) screenshot(selector, name string) image.Image {
	a.t.Helper()
	a.on(selector)
	b := a.tab.Screenshot(selector)
	dir := os.Getenv("REFTRACK_SCREENSHOTS")
	if dir == "" {
		dir = a.t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		a.t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		a.t.Fatalf("screenshot %s: %v", name, err)
	}
	return img
}

// Series colours of the chart (app.css).
var colours = map[string][3]uint32{"click": {0x1f, 0x6f, 0xeb}, "lead": {0xd2, 0x99, 0x22}, "conversion": {0x1a, 0x7f, 0x37}}

// pixels counts the pixels of each series' colour in an image.
func pixels(img image.Image) map[string]int {
	n := map[string]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			for name, c := range colours {
				if near(r>>8, c[0]) && near(g>>8, c[1]) && near(bl>>8, c[2]) {
					n[name]++
				}
			}
		}
	}
	return n
}

func near(a, b uint32) bool { return a+6 >= b && b+6 >= a }

func (a *app) noPageErrors() {
	a.t.Helper()
	rec := a.tab.Record()
	if len(rec.Errors) > 0 {
		a.t.Errorf("page errors: %v", rec.Errors)
	}
	for _, m := range rec.Console {
		if m.Type == "error" {
			a.t.Errorf("console error: %s", m.Text)
		}
	}
}

// The newcomer's path: sign in, run the synthetic chain (what `reftrack test --chain` sends), watch it
// arrive in the events table and the chart, and switch the link off. Every view of the page then has no
// serious or critical accessibility finding (axe-core), and the page outlines where the keyboard is.
func TestWatchAChainAndSwitchALinkOff(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{ProgramName: "Demo shop"})
	a := open(t, env)
	a.signIn(r.AccountEmail)

	// The session cookie as the browser holds it, out of the page's scripts' reach.
	var session *browsertest.Cookie
	for _, c := range a.tab.Cookies() {
		if c.Name == "reftrack_session" {
			session = &c
		}
	}
	if session == nil || !session.HTTPOnly || session.SameSite != "Lax" || session.Secure {
		t.Fatalf("session cookie = %+v", session)
	}
	var jsCookies string
	a.tab.Eval("document.cookie", &jsCookies)
	if strings.Contains(jsCookies, "reftrack_session") {
		t.Error("the page's scripts can read the session cookie")
	}

	if got := a.text("#program-name"); got != "Demo shop" {
		t.Errorf("program = %q", got)
	}
	if got := a.text("#role"); got != "owner" {
		t.Errorf("role = %q", got)
	}
	// Readiness checks: a fresh program waits for its first tracked click.
	if got := a.attr("#readiness-state", "data-state"); got != "configuring" && got != "ready" {
		t.Errorf("state = %q", got)
	}
	if !strings.Contains(a.text(`#checks li[data-gate="tracking"]`), "tracking: fail") {
		t.Errorf("tracking gate = %q", a.text(`#checks li[data-gate="tracking"]`))
	}
	// No real events yet, and an empty chart.
	if rows := a.rows(); len(rows) != 0 {
		t.Errorf("rows before any event: %v", rows)
	}
	if !strings.Contains(a.text("#events tbody"), "tick Test data to see them") {
		t.Errorf("empty table says %q", a.text("#events tbody"))
	}
	if n := pixels(a.screenshot("#chart", "chart-empty")); len(n) != 0 {
		t.Errorf("an empty chart shows bars: %v", n)
	}

	// The synthetic chain, as `reftrack test --chain` sends it.
	res := env.Do(http.MethodPost, "/api/v1/cli/test-event", map[string]any{"type": "chain"}, apitest.Bearer(r.APIKey)...)
	if res.Status != http.StatusOK {
		t.Fatalf("chain: %d %s", res.Status, res.Body)
	}
	a.click("#f-test")
	a.tab.WaitFor(`document.querySelectorAll("#events tbody tr[data-type]").length === 3 && document.querySelectorAll("#chart rect").length === 3`)
	rows := a.rows()
	if !strings.HasPrefix(rows[0], "conversion|") || !strings.Contains(rows[0], " USD") || !strings.HasPrefix(rows[1], "lead|") || !strings.HasPrefix(rows[2], "click|") {
		t.Errorf("rows = %v", rows)
	}
	// Each row of the chain is labelled synthetic, and the click's fixture page on the program's domain
	// (which no visitor opened) is not shown as if it were one.
	var labels []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#events tbody tr[data-type]")).map(function (tr) {
		return tr.dataset.label + "=" + tr.querySelector(".details .badge").innerText })`, &labels)
	if strings.Join(labels, ",") != strings.Repeat("synthetic=synthetic · reftrack test,", 2)+"synthetic=synthetic · reftrack test" {
		t.Errorf("labels = %v", labels)
	}
	if strings.Contains(rows[2], "://") || strings.Contains(rows[1], "://") {
		t.Errorf("a synthetic row shows the fixture page: %v", rows)
	}
	if got := a.text("#page-info"); got != "Page 1 of 1 · 3 events" {
		t.Errorf("pager = %q", got)
	}
	legend := a.text("#chart-legend")
	for _, want := range []string{"Clicks 1", "Leads 1", "Sales 1"} {
		if !strings.Contains(legend, want) {
			t.Errorf("legend %q lacks %q", legend, want)
		}
	}
	today := time.Now().UTC().Format("2006-01-02")
	var bars []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#chart rect")).map(function (r) { return r.dataset.series + "@" + r.dataset.date + "=" + r.dataset.n })`, &bars)
	if strings.Join(bars, ",") != "click@"+today+"=1,lead@"+today+"=1,conversion@"+today+"=1" {
		t.Errorf("bars = %v", bars)
	}
	// The screenshot shows the three bars in their colours.
	n := pixels(a.screenshot("#chart", "chart-chain"))
	for _, s := range []string{"click", "lead", "conversion"} {
		if n[s] < 20 {
			t.Errorf("the chart's screenshot has %d pixels of the %s colour: %v", n[s], s, n)
		}
	}
	// The live gate reports the chain's verdict (in the overview, refreshed while it is shown).
	a.view("overview")
	a.tab.WaitFor(`document.querySelector('#checks li[data-gate="live"]').innerText.indexOf("last test chain") >= 0`)
	if got := a.text(`#checks li[data-gate="live"]`); !strings.Contains(got, "click attributed, lead attributed, sale attributed") {
		t.Errorf("live gate = %q", got)
	}

	// A test-mode click from a page (the tracker's test mode) is test data, but not synthetic: it keeps
	// its page.
	if res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL,
		"page_url": "https://shop.example/pricing", "additional_data": map[string]any{"test_mode": true}},
		"User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36"); res.Status != http.StatusOK {
		t.Fatalf("test-mode click: %d %s", res.Status, res.Body)
	}
	a.click("#filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#events tbody tr[data-type]").length === 4`)
	var first string
	a.tab.Eval(`(function (tr) { return tr.dataset.type + "|" + tr.dataset.label + "|" + tr.children[2].innerText })(document.querySelector("#events tbody tr[data-type]"))`, &first)
	if !strings.HasPrefix(first, "click|test|test mode https://shop.example/pricing") {
		t.Errorf("the test-mode click's row = %q", first)
	}

	// The type filter narrows the table; the date filter to yesterday empties it.
	a.pick("#f-type", "lead")
	a.click("#filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#events tbody tr[data-type]").length === 1`)
	if rows := a.rows(); !strings.HasPrefix(rows[0], "lead|") {
		t.Errorf("leads only: %v", rows)
	}
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")
	a.fill("#f-from", yesterday)
	a.fill("#f-to", yesterday)
	a.click("#filters button[type=submit]")
	a.tab.WaitFor(`document.querySelectorAll("#events tbody tr[data-type]").length === 0 && document.querySelector("#page-info").innerText === "Page 0 of 0 · 0 events" &&
		document.querySelector("#chart-axis").innerText.indexOf("` + yesterday + `") === 0`)
	if n := pixels(a.screenshot("#chart", "chart-yesterday")); len(n) != 0 {
		t.Errorf("yesterday's chart shows bars: %v", n)
	}

	// Switch the seeded link off.
	sw := fmt.Sprintf(`tr[data-link=%q] input[role=switch]`, r.ShortLink)
	var on bool
	a.tab.Eval(fmt.Sprintf(`document.querySelector(%q).checked`, sw), &on)
	if !on {
		t.Fatal("the link is shown off before the switch")
	}
	a.click(sw)
	a.tab.WaitFor(`document.querySelector("#notice").innerText.indexOf("is now off") >= 0`)
	if got := a.text("#notice"); got != "Link "+r.ShortLink+" is now off." {
		t.Errorf("notice = %q", got)
	}
	if n := env.Count(`SELECT count(*) FROM referral_links WHERE id = $1 AND NOT enabled`, r.LinkID); n != 1 {
		t.Fatal("the switch did not turn the link off")
	}
	if res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}); res.Status != http.StatusGone {
		t.Errorf("a click on the switched-off link: %d", res.Status)
	}
	a.tab.Accessible("the dashboard with a test chain, a link switched off")
	a.tabFrom("#f-test", "#filters button[type=submit]")
	a.screenshot("", "dashboard")
	a.noPageErrors()

	// After a reload the link is still off, and the chain's own link is labelled as such.
	if status := a.tab.Goto(a.base + "/dashboard"); status != http.StatusOK {
		t.Fatalf("reload: %d", status)
	}
	a.tab.WaitFor(`document.body.hasAttribute("data-loaded")`)
	a.tab.Eval(fmt.Sprintf(`document.querySelector(%q).checked`, sw), &on)
	if on || strings.TrimSpace(a.text(fmt.Sprintf(`tr[data-link=%q] .switch-state`, r.ShortLink))) != "off" {
		t.Error("after a reload the link shows on")
	}
	if got := a.text(`tr[data-link^="rt-synthetic"] td`); !strings.HasSuffix(got, "— used by reftrack test --chain") {
		t.Errorf("the chain's partner = %q", got)
	}
}

// Real events page through the table; the chart counts them per day.
func TestEventsPaging(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	now := time.Now().UTC()
	// 45 real clicks today and 5 two days ago, straight into the table the tracker fills.
	if _, err := env.DB.Exec(`INSERT INTO clicks (click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, page_url)
		SELECT to_char(now() AT TIME ZONE 'UTC', 'YYMM') || lpad('pg_' || g, 22, '0'), $1, $2, $3, CASE WHEN g <= 45 THEN $4::timestamptz - g * interval '1 second' ELSE $4::timestamptz - interval '2 days' END,
		       'https://shop.example.com/?aff=x', 'https://shop.example.com/p' || g FROM generate_series(1, 50) g`,
		r.ProgramID, r.LinkID, r.PartnerID, now.Truncate(24*time.Hour).Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// What they count for, added as the click's writer adds it.
	var at []time.Time
	if err := env.DB.Select(&at, `SELECT click_timestamp FROM clicks WHERE program_id = $1`, r.ProgramID); err != nil {
		t.Fatal(err)
	}
	var ds []counting.Delta
	for _, ts := range at {
		ds = append(ds, counting.Delta{Key: counting.Key{ProgramID: r.ProgramID, Hour: counting.HourOf(ts), PartnerID: r.PartnerID},
			Measures: counting.Click(false, false)})
	}
	if err := events.Add(context.Background(), env.DB, ds...); err != nil {
		t.Fatal(err)
	}
	a := open(t, env)
	a.signIn(r.AccountEmail)
	a.tab.WaitFor(`document.querySelector("#page-info").innerText === "Page 1 of 3 · 50 events"`)
	if rows := a.rows(); len(rows) != 20 || rows[0] != "click|https://shop.example.com/p1" {
		t.Errorf("page 1: %d rows, first %v", len(rows), rows[:1])
	}
	var prevDisabled bool
	a.tab.Eval(`document.querySelector("#prev").disabled`, &prevDisabled)
	if !prevDisabled {
		t.Error("Previous is enabled on page 1")
	}
	a.click("#next")
	a.click("#next")
	a.tab.WaitFor(`document.querySelector("#page-info").innerText === "Page 3 of 3 · 50 events"`)
	// The five older clicks share a timestamp: newest id first.
	if rows := a.rows(); len(rows) != 10 || rows[4] != "click|https://shop.example.com/p45" || rows[5] != "click|https://shop.example.com/p50" ||
		rows[9] != "click|https://shop.example.com/p46" {
		t.Errorf("page 3: %v", rows)
	}
	a.tab.WaitFor(`document.querySelectorAll("#chart rect").length === 2`)
	if got := a.text("#chart-legend"); !strings.Contains(got, "Clicks 50") {
		t.Errorf("legend = %q", got)
	}
	var bars []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#chart rect")).map(function (r) { return r.dataset.date + "=" + r.dataset.n })`, &bars)
	want := []string{now.AddDate(0, 0, -2).Format("2006-01-02") + "=5", now.Format("2006-01-02") + "=45"}
	if strings.Join(bars, ",") != strings.Join(want, ",") {
		t.Errorf("bars = %v, want %v", bars, want)
	}
	a.noPageErrors()
}

// Each role sees what it may do: the events for owner, admin and analyst; the link switch for owner and
// admin; the key's regeneration for the owner alone, who sees the new key once.
func TestRolesOnThePage(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	invite := func(role string) string {
		email := role + "-" + fmt.Sprint(time.Now().UnixNano()) + "@example.com"
		if _, err := accounts.Invite(context.Background(), env.DB, r.AdvertiserID, email, role, accounts.RoleOwner); err != nil {
			t.Fatal(err)
		}
		return email
	}
	cases := []struct {
		role                                     string
		email                                    string
		events, switchable, regenerate, partners bool
	}{
		{"owner", r.AccountEmail, true, true, true, true},
		{"admin", invite("admin"), true, true, false, true},
		{"analyst", invite("analyst"), true, false, false, false},
		{"billing", invite("billing"), false, false, false, false},
	}
	for _, c := range cases {
		t.Run(c.role, func(t *testing.T) {
			a := open(t, env)
			a.signIn(c.email)
			if got := a.text("#role"); got != c.role {
				t.Fatalf("role = %q", got)
			}
			a.tab.WaitFor(`document.querySelector("#api-key").innerText !== ""`)
			if got := a.text("#api-key"); got != "rt_…"+r.APIKey[len(r.APIKey)-4:] {
				t.Errorf("masked key = %q", got)
			}
			a.view("events")
			if a.visible("#events") != c.events || a.visible("#chart") != c.events {
				t.Errorf("events shown = %v, want %v", a.visible("#events"), c.events)
			}
			if !c.events && a.text("#activity-denied") != "Your role (billing) does not include the events list." {
				t.Errorf("denied = %q", a.text("#activity-denied"))
			}
			var disabled bool
			a.tab.Eval(fmt.Sprintf(`document.querySelector('tr[data-link=%q] input[role=switch]').disabled`, r.ShortLink), &disabled)
			if disabled == c.switchable {
				t.Errorf("switch disabled = %v", disabled)
			}
			a.view("install")
			if a.visible("#regenerate") != c.regenerate {
				t.Errorf("regenerate shown = %v", a.visible("#regenerate"))
			}
			// The Partners view lists the partners to every role; inviting and the moves are partners:write's.
			a.view("partners")
			if a.count(fmt.Sprintf(`#partners tr[data-partner="%d"]`, r.PartnerID)) != 1 || a.visible("#invite") != c.partners ||
				(a.count(`#partners button[data-action="ban"]`) == 1) != c.partners {
				t.Errorf("partners view: listed %d, invite shown %v, ban buttons %d; want moves %v",
					a.count(fmt.Sprintf(`#partners tr[data-partner="%d"]`, r.PartnerID)), a.visible("#invite"),
					a.count(`#partners button[data-action="ban"]`), c.partners)
			}
			a.noPageErrors()
		})
	}

	// The owner regenerates the key: confirmed, shown once, the old one refused.
	a := open(t, env)
	a.signIn(r.AccountEmail)
	a.tab.WaitFor(`document.querySelector("#api-key").innerText !== ""`)
	a.click("#regenerate")
	a.tab.WaitFor(`!document.querySelector("#new-key").hidden`)
	if d := a.tab.Record().Dialogs; len(d) != 1 || !strings.Contains(d[0], "stops working at once") {
		t.Errorf("dialogs = %v", d)
	}
	newKey := a.text("#new-key-value")
	if !strings.HasPrefix(newKey, "rt_") || newKey == r.APIKey {
		t.Fatalf("new key = %q", newKey)
	}
	a.tab.WaitFor(fmt.Sprintf(`document.querySelector("#api-key").innerText === %q`, "rt_…"+newKey[len(newKey)-4:]))
	status := func(key string) int {
		return env.Do(http.MethodGet, "/api/v1/programs/me/readiness", nil, apitest.Bearer(key)...).Status
	}
	if status(r.APIKey) != http.StatusUnauthorized || status(newKey) != http.StatusOK {
		t.Errorf("old key %d, new key %d", status(r.APIKey), status(newKey))
	}
	// What the page showed is what the API answers.
	var masked struct {
		Data struct{ Masked string }
	}
	if err := json.Unmarshal(env.Do(http.MethodGet, "/api/v1/programs/"+fmt.Sprint(r.ProgramID)+"/api-key", nil, apitest.Bearer(r.AccountToken)...).Body, &masked); err != nil {
		t.Fatal(err)
	}
	if masked.Data.Masked != a.text("#api-key") {
		t.Errorf("API masked %q, page %q", masked.Data.Masked, a.text("#api-key"))
	}
	a.noPageErrors()
}

// Another site cannot act with the session: its cross-site requests (a key regeneration posted from a
// script, a sign-out form) reach the server without the cookie or the CSRF token, and change nothing.
func TestCrossSiteRequestsChangeNothing(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	a := open(t, env)
	a.signIn(r.AccountEmail)
	keyHash := func() string {
		var h string
		if err := env.DB.Get(&h, `SELECT encode(key_hash, 'hex') FROM api_keys WHERE program_id = $1 AND revoked_at IS NULL`, r.ProgramID); err != nil {
			t.Fatal(err)
		}
		return h
	}
	before := keyHash()

	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><title>Win a prize</title>
<form id="out" method="post" action="%[1]s/dashboard/logout"><input name="csrf_token" value="guess"></form>
<script>
fetch("%[1]s/api/v1/programs/%[2]d/api-key", {method: "POST", mode: "no-cors", credentials: "include"})
  .catch(function () {})
  .then(function () { document.getElementById("out").submit(); });
</script>`, a.base, r.ProgramID)
	}))
	t.Cleanup(evil.Close)
	_, port, _ := net.SplitHostPort(evil.Listener.Addr().String())
	seen := len(a.tab.Record().Requests)
	a.tab.Goto("http://prizes.test:" + port + "/")
	a.tab.WaitFor(`location.pathname === "/dashboard/logout" && document.readyState === "complete"`)
	var page string
	a.tab.Eval("document.body.innerText", &page)
	if !strings.Contains(page, "did not come from your dashboard page") {
		t.Errorf("the cross-site sign-out got %q", page)
	}
	rec := a.tab.Record()
	var sent []string
	for _, q := range rec.Requests[seen:] {
		if strings.HasPrefix(q.URL, a.base) && q.Method == http.MethodPost {
			sent = append(sent, strings.TrimPrefix(q.URL, a.base))
		}
	}
	if strings.Join(sent, ",") != fmt.Sprintf("/api/v1/programs/%d/api-key,/dashboard/logout", r.ProgramID) {
		t.Fatalf("the attack's requests: %v", sent)
	}
	if keyHash() != before {
		t.Error("a cross-site request regenerated the key")
	}
	if n := env.Count(`SELECT count(*) FROM login_tokens WHERE kind = 'dashboard' AND revoked_at IS NULL`); n != 1 {
		t.Errorf("%d live dashboard sessions after the attack, want 1", n)
	}
	// Still signed in.
	if status := a.tab.Goto(a.base + "/dashboard"); status != http.StatusOK {
		t.Fatalf("dashboard after the attack: %d", status)
	}
	a.tab.WaitFor(`document.body.hasAttribute("data-loaded")`)
	var path string
	a.tab.Eval("location.pathname", &path)
	if path != "/dashboard" {
		t.Errorf("after the attack the dashboard went to %s", path)
	}
}

// A first sign-in with a new email makes an empty workspace: the page says how to create a program.
// When the session ends (here: revoked), the page's next call sends the browser back to the sign-in.
func TestEmptyAccountAndEndedSession(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	a := open(t, env)
	a.signIn("newcomer@example.com")
	if !a.visible("#empty") || a.visible("#activity") || !strings.Contains(a.text("#empty"), "reftrack init") {
		t.Errorf("empty account: %q", a.text("main"))
	}
	if a.visible("#program") {
		t.Error("an account without programs is shown an empty program picker")
	}
	var who string
	a.tab.Eval(`document.querySelector(".who").innerText`, &who)
	if who != "Signed in as newcomer@example.com" {
		t.Errorf("header = %q: no role, so no separator", who)
	}
	a.noPageErrors()

	r := env.Seed(seed.Options{})
	b := open(t, env)
	b.signIn(r.AccountEmail)
	b.view("events") // opening a view asks the server: open it while the session holds
	if _, err := env.DB.Exec(`UPDATE login_tokens SET revoked_at = now() WHERE kind = 'dashboard'`); err != nil {
		t.Fatal(err)
	}
	// The next request sends the page to sign in: the filters' Apply, or the view's own refresh if it comes
	// first (every 5 s), so the click is made in the page only while the button is still there.
	b.tab.WaitFor(`location.pathname === "/login" || (function () {
		var apply = document.querySelector("#filters button[type=submit]");
		if (apply && !window.applied) { window.applied = true; apply.click(); }
		return false })()`)
	if !b.visible("#email") {
		t.Error("no sign-in form after the session ended")
	}
	b.tab.Accessible("the sign-in page")
}

// viewNames are the dashboard's views, as its navigation lists them.
func (a *app) viewNames() []string {
	a.t.Helper()
	var names []string
	a.tab.Eval(`Array.from(document.querySelectorAll("#views a")).map(function (a) { return a.dataset.view })`, &names)
	return names
}

// shown is the view the page shows: the one marked in the navigation, after checking that exactly its
// panels are shown ("" and a failure when they are not).
func (a *app) shown() string {
	a.t.Helper()
	var got struct {
		Current string
		Shown   []string
		Hash    string
	}
	a.tab.Eval(`({ current: (document.querySelector('#views a[aria-current="page"]') || {dataset: {}}).dataset.view || "",
		shown: Array.from(new Set(Array.from(document.querySelectorAll("main [data-view]")).filter(function (p) { return !p.hidden })
			.map(function (p) { return p.dataset.view }))), hash: location.hash })`, &got)
	if len(got.Shown) != 1 || got.Shown[0] != got.Current || !strings.HasSuffix(got.Hash, "&view="+got.Current) {
		a.t.Errorf("navigation marks %q, panels shown of %v, address %q", got.Current, got.Shown, got.Hash)
		return ""
	}
	return got.Current
}

// One view at a time, each with an address of its own: the navigation opens each (and only its panels
// show), a reload and the back button keep the place, another program keeps the view, an address's
// unknown view is the overview.
func TestViewsHaveAddresses(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	res := env.Do(http.MethodPost, fmt.Sprintf("/api/v1/workspaces/%d/programs", r.AdvertiserID),
		map[string]any{"name": "Second shop", "domain": "second.example.com", "commission_type": "percent", "commission_rate": 10},
		"Authorization", "Bearer "+r.AccountToken)
	if res.Status != http.StatusCreated {
		t.Fatalf("create a second program: %d %s", res.Status, res.Body)
	}
	second := int64(res.JSON(t)["data"].(map[string]any)["program"].(map[string]any)["id"].(float64))

	a := open(t, env)
	a.signIn(r.AccountEmail)
	if got := a.shown(); got != "overview" {
		t.Fatalf("the page opens on %q, want the overview", got)
	}
	names := a.viewNames()
	want := []string{"overview", "commissions", "payouts", "partners", "customers", "links", "events", "webhooks", "install", "settings", "team"}
	if !slices.Equal(names, want) {
		t.Errorf("views = %v, want %v", names, want)
	}
	for _, name := range names {
		a.view(name)
		if got := a.shown(); got != name {
			t.Errorf("after its link, the page shows %q, not %q", got, name)
		}
	}

	// A reload keeps the place; the back button returns to the view before.
	a.view("payouts")
	if status := a.tab.Reload(); status != http.StatusOK {
		t.Fatalf("reload: %d", status)
	}
	a.tab.WaitFor(fmt.Sprintf(`document.body.getAttribute("data-loaded") === "%d"`, r.ProgramID))
	if got := a.shown(); got != "payouts" {
		t.Errorf("after a reload the page shows %q, want payouts", got)
	}
	a.view("partners")
	a.tab.Eval(`history.back()`, nil)
	a.tab.WaitFor(`(document.querySelector('#views a[aria-current="page"]') || {}).dataset.view === "payouts"`)
	if got := a.shown(); got != "payouts" {
		t.Errorf("back from partners, the page shows %q", got)
	}

	// Another program, from the picker, keeps the view.
	a.pick("#program", fmt.Sprint(second))
	a.tab.WaitFor(fmt.Sprintf(`document.body.getAttribute("data-loaded") === "%d"`, second))
	if got := a.shown(); got != "payouts" {
		t.Errorf("another program shows %q, want the view kept", got)
	}
	var hash string
	a.tab.Eval(`location.hash`, &hash)
	if hash != fmt.Sprintf("#program=%d&view=payouts", second) {
		t.Errorf("address %q", hash)
	}

	// An address with a view that does not exist opens the overview.
	a.tab.Eval(fmt.Sprintf(`location.hash = "#program=%d&view=nonsense"`, second), nil)
	a.tab.WaitFor(`(document.querySelector('#views a[aria-current="page"]') || {}).dataset.view === "overview"`)
	a.shown()
	a.noPageErrors()
}
