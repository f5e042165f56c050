package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The ledger's commands (commissions, balances, payouts) against the real server, as its owner runs them.

// ledgerCLI is a seeded program, current in the CLI of its owner (logged in), whose commissions are
// approved by hand and held no day.
type ledgerCLI struct {
	*cli
	r       seed.Result
	base    string // the program's path
	partner string // the seeded partner's id
}

func newLedgerCLI(t *testing.T) *ledgerCLI {
	t.Helper()
	c := newCLI(t)
	r := c.env.Seed(seed.Options{Email: "owner@brand.example"})
	l := &ledgerCLI{cli: c, r: r, base: "/api/v1/programs/" + strconv.FormatInt(r.ProgramID, 10), partner: strconv.FormatInt(r.PartnerID, 10)}
	if res := l.do(http.MethodPatch, l.base, map[string]any{"hold_days": 0, "commission_approval": "manual"}); res.Status != http.StatusOK {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	c.login("owner@brand.example")
	c.must("use", strconv.FormatInt(r.ProgramID, 10))
	return l
}

// do sends a request as the program's owner, straight to the server.
func (l *ledgerCLI) do(method, path string, body any, headers ...string) *apitest.Response {
	return l.env.Do(method, path, body, append(apitest.Bearer(l.r.AccountToken), headers...)...)
}

// sale records a sale referred by the seeded partner (click, lead, sale through the tracking API) and
// returns its commission's id.
func (l *ledgerCLI) sale(txn string, amountCents int64, currency string) string {
	l.t.Helper()
	customer := "cust-" + txn
	click := l.env.Do(http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": l.r.AffiliateURL}, "User-Agent", "ua-"+txn)
	clickID, _ := click.JSON(l.t)["click_id"].(string)
	if res := l.env.Do(http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": clickID, "customer_key": customer},
		apitest.Bearer(l.r.APIKey)...); res.Status != http.StatusOK {
		l.t.Fatalf("lead: %d %s", res.Status, res.Body)
	}
	res := l.env.Do(http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": txn, "amount_cents": amountCents,
		"currency": currency, "customer_key": customer}, apitest.Bearer(l.r.APIKey)...)
	id, ok := res.JSON(l.t)["commission_id"].(float64)
	if res.Status != http.StatusOK || !ok {
		l.t.Fatalf("sale %s: %d %s", txn, res.Status, res.Body)
	}
	return strconv.FormatInt(int64(id), 10)
}

// sameJSON checks that the CLI printed what the server answers to the same request.
func (l *ledgerCLI) sameJSON(printed string, path string) {
	l.t.Helper()
	res := l.do(http.MethodGet, path, nil)
	var got, want any
	if err := json.Unmarshal([]byte(printed), &got); err != nil {
		l.t.Fatalf("--json printed %q: %v", printed, err)
	}
	res.Decode(l.t, &want)
	if diff := cmp.Diff(want, got); diff != "" {
		l.t.Errorf("--json is not the server's answer to GET %s (-server +printed):\n%s", path, diff)
	}
}

// row is a table row's pattern: its cells in order, separated by the table's spaces.
func row(cells ...string) *regexp.Regexp {
	for i, c := range cells {
		cells[i] = regexp.QuoteMeta(c)
	}
	return regexp.MustCompile(`(?m)^` + strings.Join(cells, ` +`) + ` *$`)
}

// today is the date of a commission recorded now with no hold, as the tables show it.
var today = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)

func TestCLICommissions(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	usd := l.sale("txn-usd", 10000, "USD") // 20%: 20.00 USD
	eur := l.sale("txn-eur", 5050, "EUR")  // 10.10 EUR
	vnd := l.sale("txn-vnd", 1250000, "VND")

	out := l.must("commissions")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !row("ID", "PARTNER", "TRANSACTION", "AMOUNT", "PAYABLE", "STATUS", "AVAILABLE ON").MatchString(lines[0]) {
		t.Fatalf("commissions printed\n%s", out)
	}
	for i, want := range []*regexp.Regexp{ // newest first
		row(vnd, l.partner, "txn-vnd", "250000 VND", "250000 VND", "pending", today.FindString(lines[1])),
		row(eur, l.partner, "txn-eur", "10.10 EUR", "10.10 EUR", "pending", today.FindString(lines[2])),
		row(usd, l.partner, "txn-usd", "20.00 USD", "20.00 USD", "pending", today.FindString(lines[3])),
	} {
		if !want.MatchString(lines[i+1]) || !today.MatchString(lines[i+1]) {
			t.Errorf("row %d = %q, want %s", i+1, lines[i+1], want)
		}
	}
	l.sameJSON(l.must("commissions", "--json"), l.base+"/commissions")
	l.sameJSON(l.must("commissions", "--json", "--status", "pending", "--partner", l.partner, "--limit", "2"),
		l.base+"/commissions?status=pending&partner_id="+l.partner+"&limit=2")
	l.sameJSON(l.must("commissions", "--json", "--status", "pending", "--hold", "in_hold"),
		l.base+"/commissions?status=pending&hold=in_hold")
	if out := l.must("commissions", "--status", "approved"); out != "No commissions.\n" {
		t.Errorf("--status approved printed %q", out)
	}

	// A page, then every page through the cursor.
	list := "GET " + l.base + "/commissions"
	out = l.must("commissions", "--limit", "1")
	if !strings.Contains(out, "txn-vnd") || strings.Contains(out, "txn-eur") || !strings.HasSuffix(out, "More commissions: run it with --all to list every page.\n") {
		t.Errorf("--limit 1 printed\n%s", out)
	}
	sent := l.sent.count(list)
	out = l.must("commissions", "--limit", "1", "--all")
	if n := l.sent.count(list) - sent; n != 3 || strings.Count(out, "txn-") != 3 || strings.Contains(out, "More") {
		t.Errorf("--all sent %d requests and printed\n%s", n, out)
	}
	var all struct {
		Data []map[string]any `json:"data"`
		Meta map[string]any   `json:"meta"`
	}
	if err := json.Unmarshal([]byte(l.must("commissions", "--limit", "1", "--all", "--json")), &all); err != nil ||
		len(all.Data) != 3 || all.Meta["next_cursor"] != nil || all.Data[2]["transaction_id"] != "txn-usd" {
		t.Errorf("--all --json: %+v %v", all, err)
	}

	// One approval through its route, several through the bulk route.
	one, bulk := "POST /api/v1/commissions/"+usd+"/approve", "POST "+l.base+"/commissions/approve"
	out = l.must("commissions", "approve", usd)
	if !strings.HasPrefix(out, "Approved 1 commission.\n") || !row(usd, l.partner, "txn-usd", "20.00 USD", "20.00 USD", "approved", today.FindString(out)).MatchString(out) {
		t.Errorf("approve printed\n%s", out)
	}
	out = l.must("commissions", "approve", usd, eur, usd)
	if !strings.HasPrefix(out, "Approved 2 commissions.\n") || strings.Count(out, "approved") != 2 {
		t.Errorf("approve of two printed\n%s", out)
	}
	if l.sent.count(one) != 1 || l.sent.count(bulk) != 1 {
		t.Errorf("single route %d times, bulk route %d times", l.sent.count(one), l.sent.count(bulk))
	}
	var approved struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(l.must("commissions", "approve", usd, eur, "--json")), &approved); err != nil || len(approved.Data) != 2 ||
		approved.Data[1]["status"] != "approved" {
		t.Errorf("approve --json: %+v %v", approved, err)
	}

	out = l.must("commissions", "reject", vnd, "--reason", "Self-referral")
	if !strings.HasPrefix(out, "Rejected 1 commission: Self-referral\n") || !row(vnd, l.partner, "txn-vnd", "250000 VND", "0 VND", "rejected", today.FindString(out)).MatchString(out) {
		t.Errorf("reject printed\n%s", out)
	}
	if n := l.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'rejected' AND rejected_reason = 'Self-referral'`, vnd); n != 1 {
		t.Error("the rejection did not reach the commission")
	}

	// Balances: a bucket per status, in major units.
	out = l.must("balances")
	if !row("PARTNER", "NAME", "CURRENCY", "PENDING", "APPROVED", "IN PAYOUT", "PAID", "CLAWBACK OWED").MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+l.partner+` +.+ +EUR +0\.00 +10\.10 +0\.00 +0\.00 +0\.00 *$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+l.partner+` +.+ +USD +0\.00 +20\.00 +0\.00 +0\.00 +0\.00 *$`).MatchString(out) {
		t.Errorf("balances printed\n%s", out)
	}
	l.sameJSON(l.must("balances", "--json"), l.base+"/balances")
}

func TestCLIPayouts(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	usd := l.sale("txn-usd", 10000, "USD")
	eur := l.sale("txn-eur", 5050, "EUR")
	if out := l.must("payouts", "create"); !strings.HasPrefix(out, "No payout due") || strings.Contains(out, "Carried over") {
		t.Errorf("create with nothing approved printed %q", out)
	}
	// Under the program's minimum, the approved EUR is carried over, and the run says so.
	if res := l.do(http.MethodPatch, l.base, map[string]any{"payout_minimum_cents": 1500}); res.Status != http.StatusOK {
		t.Fatalf("minimum: %d %s", res.Status, res.Body)
	}
	l.must("commissions", "approve", eur)
	if out := l.must("payouts", "create"); !strings.HasPrefix(out, "No payout due") ||
		!strings.HasSuffix(out, "Carried over: partner "+l.partner+", 10.10 EUR (under the program's payout minimum).\n") {
		t.Errorf("create under the minimum printed %q", out)
	}
	if res := l.do(http.MethodPatch, l.base, map[string]any{"payout_minimum_cents": 0}); res.Status != http.StatusOK {
		t.Fatalf("minimum: %d %s", res.Status, res.Body)
	}
	l.must("commissions", "approve", usd)

	out := l.must("payouts", "create")
	if !strings.HasPrefix(out, "Made 2 payouts:\n") ||
		!row("ID", "PARTNER", "NAME", "AMOUNT", "COMMISSIONS", "CLAWBACK NETTED", "STATUS", "CREATED", "REFERENCE").MatchString(out) ||
		!regexp.MustCompile(`(?m)^\d+ +`+l.partner+` +.+ +20\.00 USD +1 +0\.00 USD +processing +\d{4}-\d{2}-\d{2} +- *$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\d+ +`+l.partner+` +.+ +10\.10 EUR +1 +0\.00 EUR +processing +\d{4}-\d{2}-\d{2} +- *$`).MatchString(out) ||
		!strings.Contains(out, "Next: pay them") {
		t.Fatalf("create printed\n%s", out)
	}
	var ids struct{ USD, EUR string }
	for _, p := range l.list(l.do(http.MethodGet, l.base+"/payouts", nil)) {
		id := fmt.Sprint(p["id"])
		if p["currency"] == "USD" {
			ids.USD = id
		} else {
			ids.EUR = id
		}
	}
	l.sameJSON(l.must("payouts", "list", "--json"), l.base+"/payouts")
	l.sameJSON(l.must("payouts", "list", "--json", "--status", "processing", "--limit", "1"), l.base+"/payouts?status=processing&limit=1")
	l.sameJSON(l.must("payouts", "list", "--json", "--partner", l.partner), l.base+"/payouts?partner_id="+l.partner)
	if out := l.must("payouts", "list", "--limit", "1", "--all"); strings.Count(out, "processing") != 2 {
		t.Errorf("list --all printed\n%s", out)
	}

	// The export, byte for byte as the route answers it: to a file, and on standard output.
	file := filepath.Join(t.TempDir(), "payouts.csv")
	if out := l.must("payouts", "export", "--output", file); out != fmt.Sprintf("Wrote 2 payouts to %s (%d bytes).\n", file, len(l.do(http.MethodGet, l.base+"/payouts.csv", nil).Body)) {
		t.Errorf("export --output printed %q", out)
	}
	got, err := os.ReadFile(file)
	if want := l.do(http.MethodGet, l.base+"/payouts.csv", nil).Body; err != nil || string(got) != string(want) || !strings.HasPrefix(string(want), "payout_id,") {
		t.Errorf("exported file %q (%v), the route answers %q", got, err, want)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("exported file mode %v %v", st, err)
	}
	paypal := l.do(http.MethodGet, l.base+"/payouts.csv?format=paypal", nil).Body
	if out := l.must("payouts", "export", "--format", "paypal"); out != string(paypal) || !strings.Contains(out, ",20.00,USD,payout_"+ids.USD+",") {
		t.Errorf("export --format paypal printed %q, the route answers %q", out, paypal)
	}
	if out := l.must("payouts", "export", "--status", "paid"); out != string(l.do(http.MethodGet, l.base+"/payouts.csv?status=paid", nil).Body) || strings.Count(out, "\n") != 1 {
		t.Errorf("export --status paid printed %q", out)
	}

	// A commission in a payout cannot be approved: the server's 409, said once, with the next step.
	out, errOut, err := l.run("commissions", "approve", usd)
	if err == nil || out != "" || strings.Count(errOut, "Error:") != 1 ||
		!regexp.MustCompile(`^Error: Commission `+usd+` is in a payout\n\(request id [^)]+\)\nNext: a commission in a payout changes only if the payout fails: `+
			"`reftrack payouts failed PAYOUT_ID --reason TEXT`"+` returns its commissions to approved`).MatchString(errOut) {
		t.Errorf("approve in a payout: %v %q %q", err, out, errOut)
	}
	_, errOut, err = l.run("commissions", "approve", usd, eur)
	if err == nil || !strings.Contains(errOut, "Next: none was approved (all or nothing). A commission in a payout changes only if") {
		t.Errorf("bulk approve in a payout: %v %q", err, errOut)
	}

	out = l.must("payouts", "paid", ids.USD, "--reference", "PAYPAL-BATCH-1")
	if out != "Payout "+ids.USD+" is paid: 20.00 USD to "+l.partnerName()+", reference PAYPAL-BATCH-1 (1 commission paid).\n" {
		t.Errorf("paid printed %q", out)
	}
	if n := l.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'paid'`, usd); n != 1 {
		t.Error("the payout's commission is not paid")
	}
	_, errOut, err = l.run("payouts", "paid", ids.USD, "--reference", "ANOTHER")
	if want := "Error: Payout " + ids.USD + " is already paid with another external_reference\n"; err == nil || !strings.HasPrefix(errOut, want) ||
		!strings.HasSuffix(errOut, "Next: `reftrack payouts list` shows each payout's status.") {
		t.Errorf("paid again: %v %q", err, errOut)
	}
	var failed struct{ Data map[string]any }
	if err := json.Unmarshal([]byte(l.must("payouts", "failed", ids.EUR, "--reason", "Account closed", "--json")), &failed); err != nil ||
		failed.Data["status"] != "failed" || failed.Data["failure_reason"] != "Account closed" {
		t.Errorf("failed --json: %+v %v", failed, err)
	}
	if n := l.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'approved' AND payout_id IS NULL`, eur); n != 1 {
		t.Error("the failed payout's commission is not approved again")
	}
	out = l.must("payouts", "list")
	if !regexp.MustCompile(`(?m)^`+ids.USD+` +.+ +paid +\S+ +PAYPAL-BATCH-1 *$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^`+ids.EUR+` +.+ +failed +\S+ +Account closed *$`).MatchString(out) {
		t.Errorf("list printed\n%s", out)
	}
	if _, errOut, err := l.run("payouts", "paid", "999999", "--reference", "X"); err == nil ||
		!regexp.MustCompile("^Error: Payout not found\n\\(request id [^)]+\\)\nNext: `reftrack payouts list` lists the program's payouts").MatchString(errOut) {
		t.Errorf("paid of no payout: %v %q", err, errOut)
	}
}

// partnerName is the seeded partner's name.
func (l *ledgerCLI) partnerName() string {
	var name string
	if err := l.env.DB.Get(&name, `SELECT name FROM partners WHERE id = $1`, l.r.PartnerID); err != nil {
		l.t.Fatal(err)
	}
	return name
}

// list is an answer's data, a list.
func (l *ledgerCLI) list(res *apitest.Response) []map[string]any {
	l.t.Helper()
	var body struct{ Data []map[string]any }
	res.Decode(l.t, &body)
	if res.Status != http.StatusOK || body.Data == nil {
		l.t.Fatalf("%d %s", res.Status, res.Body)
	}
	return body.Data
}

// Whatever the server would refuse, the ledger's commands refuse before sending anything, in the words of
// pkg/ledger's checks (the server's rule for each field). Where the route itself answers with that check
// (a blank reason, a NUL character), the same body is sent to the server and its answer is what the CLI
// must have said; where the route's schema refuses first (an empty or overlong value, a value outside an
// enum), its validator words it its own way, and the CLI says the rule's message.
func TestCLILedgerRefusesWhatTheServerRefuses(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	c := l.sale("txn-1", 10000, "USD")
	l.must("commissions", "approve", c)
	l.must("payouts", "create")
	po := fmt.Sprint(l.list(l.do(http.MethodGet, l.base+"/payouts", nil))[0]["id"])
	open := l.sale("txn-2", 10000, "USD")
	many := []string{"commissions", "approve"}
	for i := 1; i <= 501; i++ {
		many = append(many, strconv.Itoa(i))
	}
	const (
		reason    = "reason must be 1 to 500 characters"
		reference = "external_reference must be 1 to 255 characters"
		key       = "Idempotency-Key must be 1 to 255 characters"
	)
	type asServer struct {
		path string
		body map[string]any
	}
	for _, tc := range []struct {
		name   string
		args   []string
		want   string    // the whole of standard error
		server *asServer // the same request, answered by the server with want's message
	}{
		{"status", []string{"commissions", "--status", "open"},
			"Error: status must be one of pending, approved, in_payout, paid, rejected, reversed", nil},
		{"hold", []string{"commissions", "--hold", "over"}, "Error: hold must be one of in_hold, ended", nil},
		{"limit 0", []string{"commissions", "--limit", "0"}, "Error: limit must be between 1 and 100", nil},
		{"limit 101", []string{"commissions", "--all", "--limit", "101"}, "Error: limit must be between 1 and 100", nil},
		{"partner 0", []string{"commissions", "--partner", "0"},
			"Error: a partner is named by its id, a positive integer, not 0\nNext: `reftrack partners` lists the program's partners with their ids.", nil},
		{"payouts partner -1", []string{"payouts", "list", "--partner", "-1"},
			"Error: a partner is named by its id, a positive integer, not -1\nNext: `reftrack partners` lists the program's partners with their ids.", nil},
		{"commission id", []string{"commissions", "approve", "inv_1"},
			"Error: a commission is named by its id, a positive integer, not \"inv_1\"\nNext: `reftrack commissions` lists them with their ids.", nil},
		{"commission id 0", []string{"commissions", "reject", "0", "--reason", "x"},
			"Error: a commission is named by its id, a positive integer, not \"0\"\nNext: `reftrack commissions` lists them with their ids.", nil},
		{"501 commissions", many, "Error: ids must hold 1 to 500 commission ids", nil},
		{"no reason", []string{"commissions", "reject", open}, "", nil},
		{"reason blank", []string{"commissions", "reject", open, "--reason", "  "}, "Error: " + reason,
			&asServer{"/api/v1/commissions/" + open + "/reject", map[string]any{"reason": "  "}}},
		{"reason empty", []string{"commissions", "reject", open, "--reason", ""}, "Error: " + reason, nil},
		{"reason 501", []string{"commissions", "reject", open, "--reason", strings.Repeat("é", 501)}, "Error: " + reason, nil},
		{"reason NUL", []string{"commissions", "reject", open, "--reason", "a\x00b"}, "Error: reason must not contain NUL characters",
			&asServer{"/api/v1/commissions/" + open + "/reject", map[string]any{"reason": "a\x00b"}}},
		{"currency", []string{"payouts", "create", "--currency", "GBQ"}, "Error: currency must be an ISO 4217 code such as USD or GBP", nil},
		{"payout status", []string{"payouts", "list", "--status", "in_payout"}, "Error: status must be one of processing, paid, failed", nil},
		{"payouts limit", []string{"payouts", "list", "--limit", "0"}, "Error: limit must be between 1 and 100", nil},
		{"export status", []string{"payouts", "export", "--status", "done"}, "Error: status must be one of processing, paid, failed", nil},
		{"export format", []string{"payouts", "export", "--format", "excel"}, "Error: format must be paypal", nil},
		{"payout id", []string{"payouts", "paid", "p_1", "--reference", "x"},
			"Error: a payout is named by its id, a positive integer, not \"p_1\"\nNext: `reftrack payouts list` lists them with their ids.", nil},
		{"no reference", []string{"payouts", "paid", po}, "", nil},
		{"reference blank", []string{"payouts", "paid", po, "--reference", " "}, "Error: " + reference,
			&asServer{"/api/v1/payouts/" + po + "/paid", map[string]any{"external_reference": " "}}},
		{"reference 256", []string{"payouts", "paid", po, "--reference", strings.Repeat("r", 256)}, "Error: " + reference, nil},
		{"reference NUL", []string{"payouts", "paid", po, "--reference", "\x00"}, "Error: external_reference must not contain NUL characters",
			&asServer{"/api/v1/payouts/" + po + "/paid", map[string]any{"external_reference": "\x00"}}},
		{"failure blank", []string{"payouts", "failed", po, "--reason", "\t"}, "Error: " + reason,
			&asServer{"/api/v1/payouts/" + po + "/failed", map[string]any{"reason": "\t"}}},
		{"failure 501", []string{"payouts", "failed", po, "--reason", strings.Repeat("x", 501)}, "Error: " + reason, nil},
		{"key 256", []string{"payouts", "create", "--idempotency-key", strings.Repeat("k", 256)}, "Error: " + key, nil},
		{"key empty", []string{"commissions", "approve", open, "--idempotency-key", ""}, "Error: " + key, nil},
		{"key not UTF-8", []string{"payouts", "paid", po, "--reference", "x", "--idempotency-key", "k\xff"}, "Error: " + key, nil},
		{"key with a line break", []string{"payouts", "failed", po, "--reason", "x", "--idempotency-key", "k\nk"},
			"Error: Idempotency-Key must not contain control characters\nNext: pass a key of letters, digits and punctuation.", nil},
		{"key too long for several", []string{"commissions", "reject", open, c, "--reason", "x", "--idempotency-key", strings.Repeat("k", 254)},
			"Error: " + key + "\nNext: pass a shorter --idempotency-key: with several IDs each request's key is KEY:ID.", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.server != nil {
				res := l.do(http.MethodPost, tc.server.path, tc.server.body)
				var answer struct {
					Error struct {
						Message string `json:"message"`
					} `json:"error"`
				}
				res.Decode(t, &answer)
				if res.Status != http.StatusBadRequest || "Error: "+answer.Error.Message != tc.want {
					t.Fatalf("the server answers %d %s, not %q", res.Status, res.Body, tc.want)
				}
			}
			sent := l.sent.total()
			out, errOut, err := l.run(tc.args...)
			switch {
			case err == nil || out != "":
				t.Errorf("reftrack %.80q: %v, printed %q", tc.args, err, out)
			case tc.want == "" && !strings.Contains(err.Error(), "required flag(s)"):
				t.Errorf("reftrack %.80q: %v, want a required flag", tc.args, err)
			case tc.want != "" && errOut != tc.want:
				t.Errorf("reftrack %.80q printed %q, want %q", tc.args, errOut, tc.want)
			}
			if n := l.sent.total() - sent; n != 0 {
				t.Errorf("reftrack %.80q sent %d requests; a refused value must not leave", tc.args, n)
			}
		})
	}
	// Nothing changed; the limits themselves are accepted.
	if n := l.env.Count(`SELECT count(*) FROM commissions WHERE id = $1 AND status = 'pending'`, open); n != 1 {
		t.Error("a refused command changed the commission")
	}
	l.must("commissions", "reject", open, "--reason", strings.Repeat("é", 500), "--idempotency-key", strings.Repeat("k", 255))
	l.must("payouts", "paid", po, "--reference", strings.Repeat("r", 255))
}

// Every POST carries an Idempotency-Key, a new one per run; the same --idempotency-key retries a run
// safely (the first answer again, nothing done twice); used for another request, the server's 409 says to
// change it; with no answer at all, the error names the key to retry with.
func TestCLILedgerIdempotencyKey(t *testing.T) {
	t.Parallel()
	l := newLedgerCLI(t)
	a, b := l.sale("txn-a", 10000, "USD"), l.sale("txn-b", 20000, "USD")

	route := func(id string) string { return "POST /api/v1/commissions/" + id + "/approve" }
	l.must("commissions", "approve", a)
	l.must("commissions", "approve", b)
	first, _ := l.sent.lastKey(route(a))
	second, _ := l.sent.lastKey(route(b))
	if !strings.HasPrefix(first, "reftrack-cli-") || !strings.HasPrefix(second, "reftrack-cli-") || first == second {
		t.Errorf("random keys %q and %q", first, second)
	}

	create := "POST " + l.base + "/payouts"
	run1 := l.must("payouts", "create", "--json", "--idempotency-key", "run-2026-03-05")
	if k, _ := l.sent.lastKey(create); k != "run-2026-03-05" {
		t.Errorf("sent the key %q", k)
	}
	l.must("commissions", "approve", l.sale("txn-c", 5000, "USD")) // due now; the retried run must not pay it
	if again := l.must("payouts", "create", "--json", "--idempotency-key", "run-2026-03-05"); again != run1 {
		t.Errorf("the retried run printed\n%s\nnot the first run's\n%s", again, run1)
	}
	if n := l.env.Count(`SELECT count(*) FROM payouts`); n != 1 {
		t.Errorf("%d payouts after a retried run", n)
	}
	var made struct{ Data []map[string]any }
	if err := json.Unmarshal([]byte(run1), &made); err != nil || len(made.Data) != 1 || made.Data[0]["amount_cents"] != float64(6000) {
		t.Fatalf("the first run: %+v %v", made, err)
	}
	po := fmt.Sprint(made.Data[0]["id"])

	// Paid twice with one key: one change, the first answer twice.
	paid := []string{"payouts", "paid", po, "--reference", "PP-1", "--idempotency-key", "paid-1"}
	if p1, p2 := l.must(paid...), l.must(paid...); p1 != p2 || !strings.HasPrefix(p1, "Payout "+po+" is paid") {
		t.Errorf("paid twice with a key: %q / %q", p1, p2)
	}
	if n := l.env.Count(`SELECT count(*) FROM audit_log WHERE action = 'payout.paid'`); n != 1 {
		t.Errorf("%d payout.paid records", n)
	}

	// The key on another request: the server's 409, and the next step.
	_, errOut, err := l.run("payouts", "failed", po, "--reason", "x", "--idempotency-key", "run-2026-03-05")
	if err == nil || !regexp.MustCompile(`^Error: Idempotency-Key reused with a different request\n\(request id [^)]+\)\n`+
		`Next: that Idempotency-Key was used for another request in the last 24 hours: pass another --idempotency-key, or none for a random one.$`).MatchString(errOut) {
		t.Errorf("a reused key: %v %q", err, errOut)
	}

	// No answer: the request may have been done, and the key it carried retries it safely.
	closed := closedAddress(t)
	_, errOut, err = l.run("--server", "http://"+closed, "payouts", "create")
	m := regexp.MustCompile(`\nNext: check --server \(or REFTRACK_BASE_URL\), or start a local server with ` + "`make run`" +
		`\. The request may have been done: retry it with --idempotency-key (reftrack-cli-\w+), and the server answers the first answer instead of doing it twice\.$`).FindStringSubmatch(errOut)
	if err == nil || m == nil {
		t.Fatalf("no answer: %v %q", err, errOut)
	}
	_, errOut, err = l.run("--server", "http://"+closed, "payouts", "create", "--idempotency-key", "mine")
	if err == nil || !strings.Contains(errOut, "retry it with --idempotency-key mine,") {
		t.Errorf("no answer, with a key: %v %q", err, errOut)
	}
}
