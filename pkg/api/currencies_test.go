package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A program's currencies: any ISO 4217 codes it lists and a default; a sale without a currency is in the
// default, one in a currency the program does not list answers 422 with the list and records nothing;
// commissions, balances, payouts and the terms work in each, in its ISO minor units.
func TestProgramCurrencies(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "payout_minimum_cents": 100})
	prog := f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK)
	if !cmp.Equal(prog["currencies"], []any{"USD", "EUR", "VND"}) || prog["default_currency"] != "USD" {
		t.Fatalf("a new program's currencies: %v, default %v", prog["currencies"], prog["default_currency"])
	}

	// Refusals change nothing.
	for body, msg := range map[string]string{
		`{"currencies": "USD"}`:                                     `currencies must be a list of ISO 4217 codes, such as ["USD", "GBP"]`,
		`{"currencies": ["USD", "GBQ"]}`:                            `currencies: "GBQ" is not an ISO 4217 currency code (such as USD, EUR or GBP)`,
		`{"currencies": ["USD", "usd"]}`:                            `currencies: "usd" is not an ISO 4217 currency code (such as USD, EUR or GBP)`,
		`{"currencies": ["GBP", "GBP"], "default_currency": "GBP"}`: "currencies: GBP is listed twice",
		`{"currencies": ["GBP", "JPY"]}`:                            "default_currency must be one of the program's currencies (GBP, JPY)",
		`{"default_currency": "GBP"}`:                               "default_currency must be one of the program's currencies (USD, EUR, VND)",
		`{"default_currency": 7}`:                                   `default_currency must be an ISO 4217 code, such as "USD"`,
		`{"currencies": []}`:                                        "currencies must list 1 to 30 ISO 4217 codes",
	} {
		platformError(t, f.do(http.MethodPatch, f.base, body), http.StatusBadRequest, "BadRequestError", msg)
	}
	if again := f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK); !cmp.Equal(again["currencies"], prog["currencies"]) {
		t.Fatalf("a refused change stored %v", again["currencies"])
	}

	changed := f.data(f.do(http.MethodPatch, f.base, map[string]any{"currencies": []string{"USD", "GBP", "JPY"}, "default_currency": "GBP"}), http.StatusOK)
	if !cmp.Equal(changed["currencies"], []any{"USD", "GBP", "JPY"}) || changed["default_currency"] != "GBP" {
		t.Fatalf("changed to %v, default %v", changed["currencies"], changed["default_currency"])
	}
	if want := "Payouts from 1.00 USD, 1.00 GBP or 100 JPY."; !strings.Contains(changed["terms"].(string), want) {
		t.Errorf("terms %q, want the minimum in each currency (%s)", changed["terms"], want)
	}

	// A sale without a currency is in the default, GBP; one in yen pays in yen's minor units (none).
	customerWithLead(t, f.env, f.r, "uk-1")
	gbp := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "uk-1", "amount_cents": 4999, "customer_key": "uk-1"}).JSON(t)
	if gbp["currency"] != "GBP" || gbp["commission"].(map[string]any)["currency"] != "GBP" || gbp["commission"].(map[string]any)["amount_cents"] != 1000.0 {
		t.Errorf("a sale without a currency: %v", gbp)
	}
	customerWithLead(t, f.env, f.r, "jp-1")
	jpy := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "jp-1", "amount_cents": 1234, "currency": "jpy", "customer_key": "jp-1"}).JSON(t)
	if jpy["currency"] != "JPY" || jpy["commission"].(map[string]any)["amount_cents"] != 247.0 {
		t.Errorf("a yen sale: %v", jpy)
	}

	// EUR is no longer listed: 422 with the program's list, and nothing recorded.
	customerWithLead(t, f.env, f.r, "eu-1")
	e := codedError(t, sale(f.env, f.r.APIKey, map[string]any{"transaction_id": "eu-1", "amount_cents": 100, "currency": "eur", "customer_key": "eu-1"}),
		http.StatusUnprocessableEntity, "UnprocessableEntityError", "unsupported_currency", "currency eur is not supported")
	if got := e["details"].(map[string]any)["supported"]; !cmp.Equal(got, []any{"USD", "GBP", "JPY"}) {
		t.Errorf("details.supported = %v", got)
	}
	if n := f.env.Count(`SELECT count(*) FROM sales WHERE processor_event_id = 'eu-1'`); n != 0 {
		t.Errorf("the refused sale recorded %d rows", n)
	}

	// Balances and a payout run per currency.
	balances := f.balances()
	for _, cur := range []string{"GBP", "JPY"} {
		if _, ok := balances[itoa(f.r.PartnerID)+" "+cur]; !ok {
			t.Errorf("no %s balance in %v", cur, balances)
		}
	}
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "JPY"}), http.StatusCreated)
	if len(run) != 1 || run[0]["currency"] != "JPY" || run[0]["amount_cents"] != 247.0 {
		t.Errorf("the yen payout run: %v", run)
	}
	csv := f.do(http.MethodGet, f.base+"/payouts.csv?status=processing", nil)
	if csv.Status != http.StatusOK || !strings.Contains(string(csv.Body), ",247,JPY,") {
		t.Errorf("the export: %d %q", csv.Status, csv.Body)
	}
	f.conserved()
}
