package dashboard_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// A program's currencies in Settings: the codes as typed, refused in words, saved; the overview's and the
// payout run's pickers then list them, the report opens on the default, and a sale in it shows there.
func TestCurrenciesInSettings(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	r := env.Seed(seed.Options{})
	a := open(t, env)
	a.signIn(r.AccountEmail)
	options := func(sel string) []string {
		var out []string
		a.tab.Eval(`Array.from(document.querySelectorAll("`+sel+` option")).map(function (o) { return o.value })`, &out)
		return out
	}
	if got := options("#perf-currency"); !slices.Equal(got, []string{"USD", "EUR", "VND"}) {
		t.Errorf("the report's currencies: %v", got)
	}

	a.fill(`#settings [name="currencies"]`, "usd, gbq")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("st-err-currencies").textContent !== ""`)
	if got := a.text("#st-err-currencies"); got != `Currencies: "GBQ" is not an ISO 4217 currency code (such as USD, EUR or GBP)` {
		t.Errorf("the refusal: %q", got)
	}
	a.fill(`#settings [name="currencies"]`, "usd gbp")
	a.fill(`#settings [name="default_currency"]`, "gbp")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("settings-notice").textContent.indexOf("Settings saved") === 0`)
	if got := a.text("#settings-notice"); !strings.Contains(got, "currencies") || !strings.Contains(got, "default currency") {
		t.Errorf("saved: %q", got)
	}
	if got := options("#perf-currency"); !slices.Equal(got, []string{"USD", "GBP"}) {
		t.Errorf("the report's currencies after the change: %v", got)
	}
	if got := options("#p-currency"); !slices.Equal(got, []string{"", "USD", "GBP"}) {
		t.Errorf("the payout run's currencies: %v", got)
	}

	// A sale without a currency is in GBP; after a reload the report opens on GBP and shows it.
	click := env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": r.AffiliateURL}, "User-Agent", "ua-gb")
	for _, call := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/track/lead", map[string]any{"click_id": click.JSON(t)["click_id"], "customer_key": "gb-1"}},
		{"/api/v1/track/sale", map[string]any{"transaction_id": "gb-1", "amount_cents": 2500, "customer_key": "gb-1"}},
	} {
		if res := env.Do(http.MethodPost, call.path, call.body, "Authorization", "Bearer "+r.APIKey); res.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", call.path, res.Status, res.Body)
		}
	}
	a.tab.Reload()
	a.tab.WaitFor(`document.body.hasAttribute("data-loaded") && (document.querySelector('#kpis [data-kpi="revenue"] .value') || {}).textContent === "25.00 GBP"`)
	var picked string
	a.tab.Eval(`document.getElementById("perf-currency").value`, &picked)
	if picked != "GBP" {
		t.Errorf("the report opens on %q, want the default GBP", picked)
	}

	// The minimum payout is asked in the default currency's major units: yen have none.
	a.fill(`#settings [name="currencies"]`, "USD, GBP, JPY")
	a.fill(`#settings [name="default_currency"]`, "JPY")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("st-minimum-currency").textContent === "JPY"`)
	a.fill(`#settings [name="payout_minimum"]`, "12.5")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("st-err-payout_minimum_cents").textContent !== ""`)
	a.fill(`#settings [name="payout_minimum"]`, "500")
	a.click("#settings-save")
	a.tab.WaitFor(`document.getElementById("settings-notice").textContent.indexOf("minimum payout") >= 0`)
	if n := env.Count(`SELECT count(*) FROM programs WHERE id = $1 AND payout_minimum_cents = 500 AND default_currency = 'JPY'`, r.ProgramID); n != 1 {
		t.Error("500 yen was not stored as 500 minor units")
	}
	var shown string
	a.tab.Eval(`document.querySelector('#settings [name="payout_minimum"]').value`, &shown)
	if shown != "500" {
		t.Errorf("the minimum shows %q, want 500", shown)
	}
	a.noPageErrorsBut("the server responded with a status of 400") // the refused code, which the browser logs
}
