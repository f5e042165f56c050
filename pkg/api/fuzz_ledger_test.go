package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// Fuzz targets of the ledger's routes (docs/rules.md#the-ledger-and-payouts): the POSTs with a body, with
// and without an Idempotency-Key, and the lists' and the export's query parameters. The checks are the
// other targets' (fuzz_test.go): no 5xx, an answer that fits the spec, the platform envelope.

// startLedgerFuzz is startFuzz with the ledger's fixtures: the sale's commission approved and in a
// payout ({{commission}}, {{payout}}), and a pending commission ({{open}}) on a program that approves by
// hand.
func startLedgerFuzz(f *testing.F) *fuzzEnv {
	f.Helper()
	e := startFuzz(f, seed.Options{})
	account := apitest.Bearer(e.seed.AccountToken)
	program := "/api/v1/programs/" + itoa(e.seed.ProgramID)
	if res := e.Do(http.MethodPatch, program, map[string]any{"commission_approval": "manual"}, account...); res.Status != http.StatusOK {
		f.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	var commissionID, openID float64
	if err := e.DB.Get(&commissionID, `SELECT c.id FROM commissions c JOIN sales s ON s.id = c.sale_id WHERE s.processor_event_id = $1`, e.txn); err != nil {
		f.Fatal(err)
	}
	if res := e.Do(http.MethodPost, fmt.Sprintf("/api/v1/commissions/%v/approve", commissionID), map[string]any{"release_hold": true}, account...); res.Status != http.StatusOK {
		f.Fatalf("approve: %d %s", res.Status, res.Body)
	}
	res := e.Do(http.MethodPost, program+"/payouts", nil, account...)
	payouts, _ := res.JSON(f)["data"].([]any)
	if res.Status != http.StatusCreated || len(payouts) != 1 {
		f.Fatalf("payouts: %d %s", res.Status, res.Body)
	}
	// A second customer's first sale: a commission of its own.
	key := apitest.Bearer(e.seed.APIKey)
	click, _ := e.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": e.seed.AffiliateURL}, "User-Agent", "Mozilla/5.0 Firefox/133.0").JSON(f)["click_id"].(string)
	if res := e.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": click, "customer_key": "fuzz-open"}, key...); res.Status != http.StatusOK {
		f.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	res = e.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": "fuzz-txn-2", "amount_cents": 5000, "customer_key": "fuzz-open"}, key...)
	openID, _ = res.JSON(f)["commission_id"].(float64)
	if res.Status != http.StatusOK || openID == 0 {
		f.Fatalf("sale: %d %s", res.Status, res.Body)
	}
	e.fixture("{{commission}}", fmt.Sprint(commissionID), "{{open}}", fmt.Sprint(openID),
		"{{payout}}", fmt.Sprint(payouts[0].(map[string]any)["id"]))
	return e
}

// idempotencyKeys are the keys each seed body is tried with: none, a new one per input, one shared by every
// input (a body other than the first one's is a conflict), and keys out of range.
var idempotencyKeys = []string{"", "key-{{n}}", "shared-key", strings.Repeat("k", 255), strings.Repeat("k", 256), "\xff", "é"}

// fuzzLedgerPOST fuzzes a ledger POST at path (with placeholders): inputs are (body, field, value, key).
func (e *fuzzEnv) fuzzLedgerPOST(f *testing.F, path string, seeds []jsonInput) {
	for _, s := range seeds {
		f.Add(s.body, s.field, s.value, "")
	}
	for _, k := range idempotencyKeys {
		f.Add(seeds[0].body, "", "", k)
	}
	account := apitest.Bearer(e.seed.AccountToken)
	f.Fuzz(func(t *testing.T, body, field, value, key string) {
		headers := account
		if key != "" {
			headers = append([]string{"Idempotency-Key", e.fill(key)}, account...)
		}
		e.exchange(t, e.post(t, e.fill(path), "application/json", setField(e.fill(body), field, e.fill(value)), headers...), false)
	})
}

func FuzzRejectCommission(f *testing.F) {
	e := startLedgerFuzz(f)
	seeds := jsonSeeds(`{"reason":"Self-referral by the partner"}`)
	seeds = append(seeds, jsonInput{`{"reason":"r"}`, "reason", "   "}, jsonInput{`{"reason":"r"}`, "reason", strings.Repeat("é", 501)})
	e.fuzzLedgerPOST(f, "/api/v1/commissions/{{open}}/reject", seeds)
}

func FuzzApproveCommission(f *testing.F) {
	e := startLedgerFuzz(f)
	seeds := jsonSeeds(`{}`, `{"release_hold":true}`, `{"release_hold":false}`)
	for _, v := range []string{"1", `"true"`, "null", "{}", "[true]"} {
		seeds = append(seeds, jsonInput{`{"release_hold":true}`, "release_hold", v})
	}
	e.fuzzLedgerPOST(f, "/api/v1/commissions/{{open}}/approve", seeds)
}

func FuzzApproveCommissions(f *testing.F) {
	e := startLedgerFuzz(f)
	// The ids are set by the value (filled), so that the body stays JSON before its placeholders are.
	seeds := []jsonInput{{`{"ids":[1]}`, "ids", "[{{open}}]"}, {`{"ids":[1]}`, "ids", "[{{open}},{{commission}}]"}}
	seeds = append(seeds, jsonSeeds(`{"ids":[1]}`)...)
	for _, v := range []string{"[]", "[0]", "[-1]", "[1e400]", `["{{open}}"]`, "[{{open}},{{open}}]", "[99999999999999999999]", "[9223372036854775807]",
		"[" + strings.Repeat("1,", 500) + "1]", "{}", "null"} {
		seeds = append(seeds, jsonInput{`{"ids":[1]}`, "ids", v})
	}
	seeds = append(seeds, jsonInput{`{"ids":[1],"release_hold":true}`, "ids", "[{{open}}]"},
		jsonInput{`{"ids":[1],"release_hold":true}`, "release_hold", `"yes"`})
	e.fuzzLedgerPOST(f, "/api/v1/programs/{{program}}/commissions/approve", seeds)
}

func FuzzCreatePayouts(f *testing.F) {
	e := startLedgerFuzz(f)
	seeds := jsonSeeds(`{"currency":"USD"}`, `{"currency":"VND"}`)
	for _, v := range []string{"usd", "GBP", "5", "null", "{}"} {
		seeds = append(seeds, jsonInput{`{"currency":"USD"}`, "currency", v})
	}
	e.fuzzLedgerPOST(f, "/api/v1/programs/{{program}}/payouts", seeds)
}

func FuzzMarkPayoutPaid(f *testing.F) {
	e := startLedgerFuzz(f)
	seeds := jsonSeeds(`{"external_reference":"PAYPAL-BATCH-8XK2"}`)
	seeds = append(seeds, jsonInput{`{"external_reference":"x"}`, "external_reference", " "},
		jsonInput{`{"external_reference":"x"}`, "external_reference", strings.Repeat("r", 256)})
	e.fuzzLedgerPOST(f, "/api/v1/payouts/{{payout}}/paid", seeds)
}

func FuzzMarkPayoutFailed(f *testing.F) {
	e := startLedgerFuzz(f)
	seeds := jsonSeeds(`{"reason":"Recipient account closed"}`)
	seeds = append(seeds, jsonInput{`{"reason":"r"}`, "reason", "\t"}, jsonInput{`{"reason":"r"}`, "reason", strings.Repeat("x", 501)})
	e.fuzzLedgerPOST(f, "/api/v1/payouts/{{payout}}/failed", seeds)
}

// fuzzQuery fuzzes a GET at path (with placeholders) by its raw query.
func (e *fuzzEnv) fuzzQuery(f *testing.F, path string, queries ...string) {
	for _, q := range append(queries, "", "%00", "a%00b=1", "%ff", "%zz", "%", "%e2%82", "a;b", manyFields(20000), manyFields(999), noise(3000), "\xff", "\x00") {
		f.Add(q)
	}
	account := apitest.Bearer(e.seed.AccountToken)
	f.Fuzz(func(t *testing.T, query string) {
		req, err := http.NewRequest(http.MethodGet, e.URL+e.fill(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.RawQuery = queryText(e.fill(query))
		req.Header.Set(account[0], account[1])
		e.exchange(t, req, false)
	})
}

// cursorSeeds are cursors: none, a real one's shape, and broken ones.
var cursorSeeds = []string{"cursor=", "cursor=MTc2OTg1NDUwMjAwMDAwMC44MTI", "cursor=bm90LmFjdXJzb3I", "cursor=%21%21", "cursor=LTEuLTE",
	"cursor=OTk5OTk5OTk5OTk5OTk5OTk5OTkuMQ", "cursor=" + strings.Repeat("A", 201), "cursor=MS4w"}

func FuzzListCommissions(f *testing.F) {
	e := startLedgerFuzz(f)
	queries := []string{"status=pending", "status=approved&partner_id=1", "partner_id=99999999999999999999", "partner_id=-1", "limit=1", "limit=100",
		"limit=0", "limit=101", "limit=1e3", "created_from=2026-01-01T00:00:00Z&created_to=2027-01-01T00:00:00Z", "created_from=9999-12-31T23:59:59Z",
		"created_to=0001-01-01T00:00:00Z", "created_from=2026-01-01", "created_from=2026-01-01T00:00:00%2B14:00", "status=bogus", "status=pending&status=paid"}
	e.fuzzQuery(f, "/api/v1/programs/{{program}}/commissions", append(queries, cursorSeeds...)...)
}

func FuzzListCustomers(f *testing.F) {
	e := startLedgerFuzz(f)
	queries := []string{"status=lead", "status=converted&partner_id=1", "status=visitor", "status=buyer", "partner_id=0", "partner_id=-1",
		"partner_id=99999999999999999999", "limit=1", "limit=100", "limit=0", "limit=101", "status=lead&status=converted"}
	e.fuzzQuery(f, "/api/v1/programs/{{program}}/customers", append(queries, cursorSeeds...)...)
}

func FuzzListPayouts(f *testing.F) {
	e := startLedgerFuzz(f)
	queries := []string{"status=processing", "status=paid&limit=1", "partner_id=1", "partner_id=0", "partner_id=-3&status=paid", "status=failed", "status=open", "limit=0", "limit=101", "limit=-5"}
	e.fuzzQuery(f, "/api/v1/programs/{{program}}/payouts", append(queries, cursorSeeds...)...)
}

func FuzzExportPayouts(f *testing.F) {
	e := startLedgerFuzz(f)
	e.fuzzQuery(f, "/api/v1/programs/{{program}}/payouts.csv", "status=processing", "status=processing&format=paypal", "status=paid", "format=excel",
		"status=done", "format=paypal&format=paypal", "status=", "format=")
}
