package dashboard_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The Install view: the tracker tag with the program's id and this server's script (which answers), each
// call in curl, Go and TypeScript with Copy; the curl calls' bodies are ones the routes take.
func TestInstallShowsTheTagAndTheCalls(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	a := open(t, env)
	a.signIn(r.AccountEmail)
	a.view("install")

	tag := a.text("#install-tag")
	want := fmt.Sprintf(`<script defer src="%s/js/svc.js" data-svc-program-id="%d"></script>`, a.base, r.ProgramID)
	if tag != want {
		t.Errorf("tag = %q, want %q", tag, want)
	}
	if got := a.attr("#install-tag-copy", "data-text"); got != tag {
		t.Errorf("Copy copies %q", got)
	}
	res, err := http.Get(a.base + "/js/svc.js")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Header.Get("Content-Type"), "javascript") || len(script) < 1000 {
		t.Errorf("the tag's script: %d %s, %d bytes", res.StatusCode, res.Header.Get("Content-Type"), len(script))
	}

	// curl: each call's address is this server's route, and its body one the route takes: a visitor's
	// click (its id in the lead's place for it), then the lead, the sale and the refund as written.
	click := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36")
	if click.Status != http.StatusOK {
		t.Fatalf("click: %d %s", click.Status, click.Body)
	}
	clickID := click.JSON(t)["click_id"].(string)
	body := regexp.MustCompile(`(?s)curl -s -X POST (\S+) .*-d '(\{.*\})'$`)
	for _, call := range []string{"lead", "sale", "refund"} {
		text := a.text(fmt.Sprintf(`#install-calls pre[data-call=%q]`, call))
		m := body.FindStringSubmatch(text)
		if m == nil || m[1] != a.base+"/api/v1/track/"+call || !strings.Contains(text, `-H "Authorization: Bearer $REFTRACK_API_KEY"`) {
			t.Errorf("the %s call in curl: %q", call, text)
			continue
		}
		var sent map[string]any
		if err := json.Unmarshal([]byte(m[2]), &sent); err != nil {
			t.Errorf("the %s call's body is not JSON: %v", call, err)
			continue
		}
		if call == "lead" {
			sent["click_id"] = clickID // the placeholder the tracker fills
		}
		if res := env.Do(http.MethodPost, "/api/v1/track/"+call, sent, "Authorization", "Bearer "+r.APIKey); res.Status != http.StatusOK {
			t.Errorf("the %s call's body: %d %s", call, res.Status, res.Body)
		}
	}

	// Go and TypeScript: the SDK set up with this server's address and the key from the environment.
	for lang, setup := range map[string]string{
		"go": fmt.Sprintf(`rt := sdk.New(os.Getenv("REFTRACK_API_KEY"), sdk.WithBaseURL(%q))`, a.base),
		"ts": fmt.Sprintf(`const reftrack = new Reftrack({ apiKey: process.env.REFTRACK_API_KEY ?? "", baseUrl: %q });`, a.base),
	} {
		a.click(fmt.Sprintf(`#install-langs button[data-lang=%q]`, lang))
		a.tab.WaitFor(fmt.Sprintf(`document.querySelector('#install-langs [aria-pressed="true"]').dataset.lang === %q`, lang))
		sale := a.text(`#install-calls pre[data-call="sale"]`)
		if !strings.Contains(sale, setup) || !strings.Contains(sale, map[string]string{"go": "rt.TrackSale(", "ts": "reftrack.trackSale("}[lang]) {
			t.Errorf("the sale in %s: %q", lang, sale)
		}
		if got := a.attr(`#install-calls pre[data-call="sale"] + button.copy`, "data-text"); got != sale {
			t.Errorf("the %s sale's Copy copies %q", lang, got)
		}
	}
	a.fitsAPhone("the Install view")
	a.tab.Accessible("the Install view", `main [data-view="install"]`)
	a.noPageErrors()
}
