package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

const (
	chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	iphoneUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)

// clickIDShape: the month it was made (YYMM), then 128 random bits in URL-safe base64.
var clickIDShape = regexp.MustCompile(`^[0-9]{2}(0[1-9]|1[0-2])[A-Za-z0-9_-]{22}$`)

// click sends a click for the seeded link and returns the body.
func click(t *testing.T, env *apitest.Env, r seed.Result, headers ...string) map[string]any {
	t.Helper()
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL},
		append([]string{"User-Agent", chromeUA}, headers...)...)
	if res.Status != http.StatusOK {
		t.Fatalf("click: %d %s", res.Status, res.Body)
	}
	return res.JSON(t)
}

// --- 200 -------------------------------------------------------------------------------------------

func TestClickRecorded(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{
		"affiliate_url": r.AffiliateURL, "page_url": r.AffiliateURL, "page_title": "Pricing", "referrer_url": "https://news.example.org/",
		"session_id": "s-1", "screen_resolution": "390x844", "viewport_size": "390x700", "language": "en-US",
		"timezone": "Europe/Berlin", "existing_click_id": "ignored", "unknown_field": 1,
	}, "User-Agent", iphoneUA)
	if res.Status != http.StatusOK {
		t.Fatalf("status %d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	id, _ := body["click_id"].(string)
	if !clickIDShape.MatchString(id) {
		t.Errorf("click_id = %q", id)
	}
	want := map[string]any{"success": true, "click_id": id, "cookie_window_days": 60.0, "partner_code": r.ShortLink}
	if diff := cmp.Diff(want, body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	var row struct {
		Program, Partner                     int64
		Device, OS, Browser, Title, Lang, IP string
		Bot, Test                            bool
	}
	err := env.DB.QueryRow(`SELECT program_id, partner_id, device_type, device_os, browser_name, page_title, language,
		host(ip), is_bot, is_test FROM clicks WHERE click_id = $1`, id).Scan(&row.Program, &row.Partner, &row.Device, &row.OS,
		&row.Browser, &row.Title, &row.Lang, &row.IP, &row.Bot, &row.Test)
	if err != nil {
		t.Fatal(err)
	}
	if row.Program != r.ProgramID || row.Partner != r.PartnerID || row.Device != "mobile" || row.OS != "iOS" ||
		row.Browser != "Safari" || row.Title != "Pricing" || row.Lang != "en-US" || row.IP != "127.0.0.1" || row.Bot || row.Test {
		t.Errorf("stored click = %+v", row)
	}
}

func TestClickCookieWindowFromProgram(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	if _, err := env.DB.Exec(`UPDATE programs SET cookie_window_days = 30 WHERE id = $1`, r.ProgramID); err != nil {
		t.Fatal(err)
	}
	if got := click(t, env, r)["cookie_window_days"]; got != 30.0 {
		t.Errorf("cookie_window_days = %v, want 30", got)
	}
}

func TestRepeatClickReturnsTheSameClick(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	first := click(t, env, r)["click_id"]
	if again := click(t, env, r)["click_id"]; again != first {
		t.Errorf("repeat click_id = %v, want %v", again, first)
	}
	other := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", iphoneUA).JSON(t)["click_id"]
	if other == first {
		t.Error("another User-Agent got the same click")
	}
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 2 {
		t.Errorf("%d clicks stored, want 2", n)
	}
	// An hour later the visitor's click is new.
	if _, err := env.DB.Exec(`UPDATE clicks SET click_timestamp = click_timestamp - interval '61 minutes'`); err != nil {
		t.Fatal(err)
	}
	if later := click(t, env, r)["click_id"]; later == first {
		t.Error("a click after an hour reused the old one")
	}
}

func TestBotClickIsAnsweredButMarked(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	for _, ua := range []string{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Twitterbot/1.0",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)"} {
		res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", ua)
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d", ua, res.Status)
		}
		if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND is_bot AND device_type = 'bot'`, res.JSON(t)["click_id"]); n != 1 {
			t.Errorf("%s: click not marked as a bot", ua)
		}
	}
}

func TestClickGeoFromTrustedProxyOnly(t *testing.T) {
	t.Parallel()
	geoHeaders := []string{"User-Agent", chromeUA, "X-Vercel-IP-Country", "DE", "X-Vercel-IP-Country-Region", "BE", "X-Vercel-IP-City", "Berlin"}
	t.Run("untrusted peer: ignored", func(t *testing.T) {
		t.Parallel()
		env := apitest.New(t)
		r := env.Seed(seed.Options{})
		id := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, geoHeaders...).JSON(t)["click_id"]
		if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND geo_country IS NULL`, id); n != 1 {
			t.Error("geo headers from an untrusted peer were stored")
		}
	})
	t.Run("trusted proxy: stored", func(t *testing.T) {
		t.Parallel()
		env := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.TrustedProxies = loopback() }})
		r := env.Seed(seed.Options{})
		id := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, geoHeaders...).JSON(t)["click_id"]
		if n := env.Count(`SELECT count(*) FROM clicks WHERE click_id = $1 AND geo_country = 'DE' AND geo_region = 'BE' AND geo_city = 'Berlin'`, id); n != 1 {
			t.Error("geo headers from the trusted proxy were not stored")
		}
	})
}

func TestTestModeClick(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	for _, tc := range []struct {
		name    string
		headers []string
		ad      map[string]any
	}{
		{"browser, no key", nil, map[string]any{"test_mode": true}},
		{"key and matching program_id", apitest.Bearer(r.APIKey), map[string]any{"test_mode": true, "program_id": r.ProgramID}},
		{"key and program_id as a string", apitest.Bearer(r.APIKey), map[string]any{"test_mode": true, "program_id": itoa(r.ProgramID)}},
		{"browser with another program's id: not checked", nil, map[string]any{"test_mode": true, "program_id": r.ProgramID + 99}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL, "additional_data": tc.ad},
				append([]string{"User-Agent", tc.name}, tc.headers...)...)
			if res.Status != http.StatusOK {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			body := res.JSON(t)
			data, _ := body["data"].(map[string]any)
			if body["message"] != "Test click recorded" || data["test_mode"] != true || data["programId"] != float64(r.ProgramID) {
				t.Errorf("body = %v", body)
			}
			if n := env.Count(`SELECT count(*) FROM clicks WHERE id = $1 AND is_test AND program_id = $2`, data["eventId"], r.ProgramID); n != 1 {
				t.Error("eventId is not a test click of the program")
			}
		})
	}
}

// --- 400 -------------------------------------------------------------------------------------------

func TestClick400(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	if _, err := env.DB.Exec(`INSERT INTO referral_links (short_link) VALUES ('orphan')`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		body any
		msg  string
	}{
		{"missing", `{}`, "affiliate_url is required"},
		{"empty body", nil, "affiliate_url is required"},
		{"null", `{"affiliate_url":null}`, "affiliate_url is required"},
		{"empty string", `{"affiliate_url":""}`, "affiliate_url is required"},
		{"not a string", `{"affiliate_url":42}`, "Invalid affiliate_url"},
		{"relative", `{"affiliate_url":"/pricing?aff=x"}`, "Invalid affiliate_url"},
		{"no scheme", `{"affiliate_url":"shop.example.com/?aff=x"}`, "Invalid affiliate_url"},
		{"unparseable", `{"affiliate_url":"http://[::1"}`, "Invalid affiliate_url"},
		{"no aff", `{"affiliate_url":"https://shop.example.com/?ref=x"}`, "No aff parameter found in affiliate_url"},
		{"empty aff", `{"affiliate_url":"https://shop.example.com/?aff="}`, "No aff parameter found in affiliate_url"},
		{"unknown link", `{"affiliate_url":"https://shop.example.com/?aff=nope"}`, "Referral link not found"},
		{"link without partner or program", `{"affiliate_url":"https://shop.example.com/?aff=orphan"}`, "Invalid referral link configuration"},
		{"not an object", `["` + r.AffiliateURL + `"]`, "Request body must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			platformError(t, env.Do(http.MethodPost, "/api/v1/track/click", tt.body), 400, "BadRequestError", tt.msg)
		})
	}
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded by refused requests", n)
	}
}

// --- 401, 403 --------------------------------------------------------------------------------------

func TestClickTestModeKeyChecks(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	other := env.Seed(seed.Options{})
	body := func(programID int64) map[string]any {
		return map[string]any{"affiliate_url": r.AffiliateURL, "additional_data": map[string]any{"test_mode": true, "program_id": programID}}
	}
	platformError(t, env.Do(http.MethodPost, "/api/v1/track/click", body(r.ProgramID), apitest.Bearer("rt_unknown")...),
		401, "UnauthorizedError", "Invalid API token")
	e := platformError(t, env.Do(http.MethodPost, "/api/v1/track/click", body(r.ProgramID), apitest.Bearer(other.APIKey)...),
		403, "ForbiddenError", "program_id does not match the API key")
	// The interface gave this 403 no code; every error has one (docs/rules.md#bad-input-abuse-and-faults).
	if e["code"] != "forbidden" {
		t.Errorf("error.code = %v, want forbidden", e["code"])
	}
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded by refused requests", n)
	}
}

func TestClickOrigin(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{Origins: []string{"https://www.shop.example.com"}})
	other := env.Seed(seed.Options{Origins: []string{"https://partner-site.example"}})
	_ = other

	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "Origin", "https://www.shop.example.com")
	if res.Status != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "https://www.shop.example.com" {
		t.Errorf("allowed origin: %d, ACAO %q", res.Status, res.Header.Get("Access-Control-Allow-Origin"))
	}
	for _, origin := range []string{"https://evil.example", "https://partner-site.example", "http://www.shop.example.com"} {
		res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL},
			"Origin", origin, "User-Agent", origin)
		platformError(t, res, 403, "ForbiddenError", "Origin "+origin+" is not allowed for this program")
	}
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 1 {
		t.Errorf("%d clicks, want only the allowed one", n)
	}
}

func TestClickPreflight(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.Seed(seed.Options{Origins: []string{"https://www.shop.example.com"}})
	for _, route := range []string{"/api/v1/track/click", "/api/v1/track/lead"} {
		res := env.Do(http.MethodOptions, route, nil, "Origin", "https://www.shop.example.com",
			"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
		if res.Status != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "https://www.shop.example.com" ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(res.Header.Get("Access-Control-Allow-Headers"), "Content-Type") ||
			res.Header.Get("Access-Control-Max-Age") != "600" {
			t.Errorf("%s known origin: %d %v", route, res.Status, res.Header)
		}
		res = env.Do(http.MethodOptions, route, nil, "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
		if res.Status != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s unknown origin: %d %v", route, res.Status, res.Header)
		}
	}
}

// --- 410 -------------------------------------------------------------------------------------------

func TestDisabledLink(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	if _, err := env.DB.Exec(`UPDATE referral_links SET enabled = false WHERE id = $1`, r.LinkID); err != nil {
		t.Fatal(err)
	}
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL})
	if res.Status != http.StatusGone {
		t.Fatalf("status = %d %s", res.Status, res.Body)
	}
	body := res.JSON(t)
	e, _ := body["error"].(map[string]any)
	if body["success"] != false || body["message"] != "This referral link has been turned off" || e["code"] != "link_disabled" ||
		e["message"] != body["message"] || e["hint"] == "" || body["data"] != nil {
		t.Errorf("body = %v", body)
	}
	if _, hasData := body["data"]; hasData {
		t.Error("the typed envelope has a data key")
	}
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 0 {
		t.Errorf("%d clicks recorded for a disabled link", n)
	}
}

// --- 429 -------------------------------------------------------------------------------------------

func TestClickRateLimit(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.Options{Clock: apitest.PinnedClock().Now}) // one window for the whole test
	r := env.Seed(seed.Options{})
	for i := 1; i <= 60; i++ {
		res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", itoa(int64(i)))
		if res.Status != http.StatusOK {
			t.Fatalf("click %d: %d", i, res.Status)
		}
		if got := res.Header.Get("X-RateLimit-Remaining"); got != itoa(int64(60-i)) || res.Header.Get("X-RateLimit-Limit") != "60" {
			t.Fatalf("click %d: limit %s remaining %s", i, res.Header.Get("X-RateLimit-Limit"), got)
		}
	}
	res := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "61")
	assertRateLimited(t, res, 60)
	if n := env.Count(`SELECT count(*) FROM clicks`); n != 60 {
		t.Errorf("%d clicks stored, want 60", n)
	}
	// Refused and erroring requests count too, and every answer carries the headers.
	res = env.Do(http.MethodPost, "/api/v1/track/click", `{}`)
	assertRateLimited(t, res, 60)
}

func assertRateLimited(t *testing.T, res *apitest.Response, limit int) {
	t.Helper()
	if res.Status != http.StatusTooManyRequests {
		t.Fatalf("status = %d %s", res.Status, res.Body)
	}
	e, _ := res.JSON(t)["error"].(map[string]any)
	retry, _ := e["retry_after_seconds"].(float64)
	if e["code"] != "rate_limited" || e["status"] != 429.0 || retry < 1 || retry > 60 || res.Header.Get("Retry-After") != itoa(int64(retry)) ||
		res.Header.Get("X-RateLimit-Remaining") != "0" || res.Header.Get("X-RateLimit-Limit") != itoa(int64(limit)) ||
		res.Header.Get("X-RateLimit-Reset") == "" {
		t.Errorf("429: error %v, headers %v", e, res.Header)
	}
}
