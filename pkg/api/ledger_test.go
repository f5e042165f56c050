package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The ledger's routes (docs/rules.md#the-ledger-and-payouts), through the real server: every answer is
// checked against the spec by apitest.

// ledgerFixture is a seeded program whose server runs on a clock the test moves, and its owner.
type ledgerFixture struct {
	t     *testing.T
	env   *apitest.Env
	clock *apitest.Clock
	r     seed.Result
	owner []string // the owner's credential
	base  string   // the program's path
}

// newLedger starts a program with settings (a PATCH body) on a clock at the present; its attribution
// window is long, so that sales after the clock moved on are still attributed.
func newLedger(t *testing.T, settings map[string]any) *ledgerFixture {
	t.Helper()
	clock := apitest.NewClock(time.Now())
	env := apitest.Start(t, apitest.Options{Clock: clock.Now})
	r := env.Seed(seed.Options{})
	f := &ledgerFixture{t: t, env: env, clock: clock, r: r, owner: apitest.Bearer(r.AccountToken), base: "/api/v1/programs/" + itoa(r.ProgramID)}
	body := map[string]any{"attribution_window_days": 3650}
	maps.Copy(body, settings)
	f.data(f.do(http.MethodPatch, f.base, body), http.StatusOK)
	return f
}

// another is a program of another workspace on the same server.
func (f *ledgerFixture) another() *ledgerFixture {
	f.t.Helper()
	r := f.env.Seed(seed.Options{})
	g := &ledgerFixture{t: f.t, env: f.env, clock: f.clock, r: r, owner: apitest.Bearer(r.AccountToken), base: "/api/v1/programs/" + itoa(r.ProgramID)}
	g.data(g.do(http.MethodPatch, g.base, map[string]any{"attribution_window_days": 3650}), http.StatusOK)
	return g
}

// do sends a request as the program's owner.
func (f *ledgerFixture) do(method, path string, body any, headers ...string) *apitest.Response {
	f.t.Helper()
	return f.env.Do(method, path, body, append(slices.Clone(f.owner), headers...)...)
}

// data checks the status and returns the answer's data, an object.
func (f *ledgerFixture) data(res *apitest.Response, status int) map[string]any {
	f.t.Helper()
	if res.Status != status {
		f.t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	d, ok := res.JSON(f.t)["data"].(map[string]any)
	if !ok {
		f.t.Fatalf("data is not an object: %s", res.Body)
	}
	return d
}

// list checks the status and returns the answer's data, a list.
func (f *ledgerFixture) list(res *apitest.Response, status int) []map[string]any {
	f.t.Helper()
	if res.Status != status {
		f.t.Fatalf("status %d, want %d: %s", res.Status, status, res.Body)
	}
	var body struct{ Data []map[string]any }
	res.Decode(f.t, &body)
	if body.Data == nil {
		f.t.Fatalf("data is not a list: %s", res.Body)
	}
	return body.Data
}

// partner adds a partner with a referral link and returns its id and affiliate URL.
func (f *ledgerFixture) partner(name, email string) (int64, string) {
	f.t.Helper()
	p := f.data(f.do(http.MethodPost, f.base+"/partners", map[string]any{"name": name, "email": email}), http.StatusCreated)
	id := int64(p["id"].(float64))
	l := f.data(f.do(http.MethodPost, f.base+"/links", map[string]any{"partner_id": id}), http.StatusCreated)
	return id, l["referral_url"].(string)
}

// sale records a sale through the tracking API, referred by affiliateURL ("" for the seeded partner), and
// returns its commission as the sale's answer shows it.
func (f *ledgerFixture) sale(txn string, amountCents int64, currency, affiliateURL string) map[string]any {
	f.t.Helper()
	r := f.r
	if affiliateURL != "" {
		r.AffiliateURL = affiliateURL
	}
	customerWithLead(f.t, f.env, r, "cust-"+txn)
	res := sale(f.env, f.r.APIKey, map[string]any{"transaction_id": txn, "amount_cents": amountCents, "currency": currency, "customer_key": "cust-" + txn})
	if res.Status != http.StatusOK {
		f.t.Fatalf("sale %s: %d %s", txn, res.Status, res.Body)
	}
	c, ok := res.JSON(f.t)["commission"].(map[string]any)
	if !ok {
		f.t.Fatalf("sale %s paid no commission: %s", txn, res.Body)
	}
	return c
}

// commission is the path of a commission (an id as JSON decodes it).
func commission(id any) string { return fmt.Sprintf("/api/v1/commissions/%v", id) }

// payout is the path of a payout.
func payout(id any) string { return fmt.Sprintf("/api/v1/payouts/%v", id) }

// balances are the program's balances by "partner currency".
func (f *ledgerFixture) balances() map[string]map[string]any {
	f.t.Helper()
	out := map[string]map[string]any{}
	for _, b := range f.list(f.do(http.MethodGet, f.base+"/balances", nil), http.StatusOK) {
		out[fmt.Sprintf("%v %v", b["partner_id"], b["currency"])] = b
	}
	return out
}

// bucket is a balance's buckets, in order: pending, approved, in_payout, paid, clawback owed.
func bucket(b map[string]any) [5]float64 {
	return [5]float64{b["pending_cents"].(float64), b["approved_cents"].(float64), b["in_payout_cents"].(float64),
		b["paid_cents"].(float64), b["clawback_owed_cents"].(float64)}
}

// conserved checks the ledger's conservation (docs/rules.md#the-ledger-and-payouts): for every partner and
// currency, the payable amounts of the non-rejected, non-test commissions add up to pending + approved + in
// payout + paid.
func (f *ledgerFixture) conserved() {
	f.t.Helper()
	bs := f.balances()
	for key, payable := range payableRows(f.t, f.env, f.r.ProgramID) {
		b := bucket(bs[key])
		if sum := b[0] + b[1] + b[2] + b[3]; sum != float64(payable) {
			f.t.Errorf("partner and currency %s: payable %d, buckets %v add up to %v", key, payable, b, sum)
		}
	}
}

// payableRows is the conservation equation's left side, read from the rows: the payable amounts of the
// program's non-rejected, non-test commissions, by "partner currency".
func payableRows(t *testing.T, env *apitest.Env, programID int64) map[string]int64 {
	t.Helper()
	var rows []struct {
		Key     string `db:"key"`
		Payable int64  `db:"payable"`
	}
	if err := env.DB.Select(&rows, `SELECT partner_id || ' ' || currency AS key, sum(amount_cents - reversed_amount_cents)::bigint AS payable
		FROM commissions WHERE program_id = $1 AND status <> 'rejected' AND NOT is_test GROUP BY 1`, programID); err != nil {
		t.Fatal(err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Key] = r.Payable
	}
	return out
}

// audited is the audit log's actions on target, oldest first.
func (f *ledgerFixture) audited(target string) []string {
	f.t.Helper()
	var actions []string
	if err := f.env.DB.Select(&actions, `SELECT action FROM audit_log WHERE target = $1 ORDER BY id`, target); err != nil {
		f.t.Fatal(err)
	}
	return actions
}

// A sale's commission from the tracking route to the partner's pocket and back: hold, manual and automatic
// approval, a payout run in two currencies, both exports byte for byte, paid (again with the same
// reference, then another), a refund after payment (a clawback the next payout nets), a failed payout
// (its commissions approved again, its clawback owed again), the balances at each step and the audit log.
func TestLedgerFlow(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil) // hold 30 days, auto approval, no minimum
	program := f.data(f.do(http.MethodGet, f.base, nil), http.StatusOK)
	if program["hold_days"] != 30.0 || program["commission_approval"] != "auto" || program["payout_minimum_cents"] != 0.0 {
		t.Fatalf("settings = %v, want the defaults", program)
	}
	deals, dealsURL := f.partner(`=Deals, "Inc"`, "deals@example.com")

	// Sales: 20% of 62.50 USD and of 625000 VND, each pending in its hold.
	usd := f.sale("flow-usd", 6250, "USD", "")
	vnd := f.sale("flow-vnd", 625000, "VND", dealsURL)
	if usd["status"] != "pending" || usd["amount_cents"] != 1250.0 || usd["clawback_cents"] != 0.0 || vnd["amount_cents"] != 125000.0 {
		t.Fatalf("commissions = %v, %v", usd, vnd)
	}
	c := f.data(f.do(http.MethodGet, commission(usd["id"]), nil), http.StatusOK)
	var saleDate time.Time
	if err := f.env.DB.Get(&saleDate, `SELECT sale_date FROM sales WHERE processor_event_id = 'flow-usd'`); err != nil {
		t.Fatal(err)
	}
	if c["status"] != "pending" || c["available_on"] != saleDate.Add(30*24*time.Hour).UTC().Format(time.RFC3339Nano) ||
		c["approved_at"] != nil || c["payable_cents"] != 1250.0 || c["transaction_id"] != "flow-usd" || c["partner_id"] != float64(f.r.PartnerID) {
		t.Errorf("commission = %v (sale date %v)", c, saleDate)
	}
	seedKey, dealsKey := fmt.Sprintf("%d USD", f.r.PartnerID), fmt.Sprintf("%d VND", deals)
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{1250, 0, 0, 0, 0} || bucket(b[dealsKey]) != [5]float64{125000, 0, 0, 0, 0} {
		t.Errorf("balances in hold = %v", b)
	}

	// The USD commission approved by hand before its hold ends, releasing the hold (without the release:
	// 409, nothing changes); the VND one by itself once it has.
	platformError(t, f.do(http.MethodPost, commission(usd["id"])+"/approve", nil), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Commission %v is in its hold until %s; approve it then, or release it early", usd["id"],
			saleDate.Add(30*24*time.Hour).UTC().Format(time.RFC3339)))
	if c := f.data(f.do(http.MethodGet, commission(usd["id"]), nil), http.StatusOK); c["status"] != "pending" {
		t.Errorf("after the refused approval = %v", c)
	}
	approved := f.data(f.do(http.MethodPost, commission(usd["id"])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	if approved["status"] != "approved" || approved["approved_at"] == nil {
		t.Errorf("approved = %v", approved)
	}
	f.clock.Advance(31 * 24 * time.Hour)
	auto := f.data(f.do(http.MethodGet, commission(vnd["id"]), nil), http.StatusOK)
	if auto["status"] != "approved" || auto["approved_at"] != auto["available_on"] {
		t.Errorf("after the hold = %v", auto)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 1250, 0, 0, 0} || bucket(b[dealsKey]) != [5]float64{0, 125000, 0, 0, 0} {
		t.Errorf("balances approved = %v", b)
	}

	// One payout per partner and currency; the commissions go into them.
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", map[string]any{}), http.StatusCreated)
	if len(run) != 2 || run[0]["partner_id"] != float64(f.r.PartnerID) || run[0]["amount_cents"] != 1250.0 || run[0]["currency"] != "USD" ||
		run[1]["partner_id"] != float64(deals) || run[1]["amount_cents"] != 125000.0 || run[1]["currency"] != "VND" ||
		run[0]["status"] != "processing" || run[0]["commission_count"] != 1.0 || run[0]["clawback_cents"] != 0.0 || run[1]["partner_name"] != `=Deals, "Inc"` {
		t.Fatalf("payouts = %v", run)
	}
	usdPayout, vndPayout := run[0], run[1]
	if c := f.data(f.do(http.MethodGet, commission(usd["id"]), nil), http.StatusOK); c["status"] != "in_payout" || c["payout_id"] != usdPayout["id"] {
		t.Errorf("commission in the payout = %v", c)
	}
	if again := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated); len(again) != 0 {
		t.Errorf("a second run paid out again: %v", again)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 0, 1250, 0, 0} {
		t.Errorf("balances in payout = %v", b)
	}

	// The exports, byte for byte: amounts in major units, RFC 4180 quoting, no formula.
	created := func(p map[string]any) string {
		at, err := time.Parse(time.RFC3339Nano, p["created_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return at.UTC().Format(time.RFC3339)
	}
	seedEmail := usdPayout["partner_email"].(string)
	want := "payout_id,partner_id,partner_name,partner_email,payout_email,amount,currency,commission_count,created_at\r\n" +
		fmt.Sprintf("%v,%d,Seed partner,%s,%s,12.50,USD,1,%s\r\n", usdPayout["id"], f.r.PartnerID, seedEmail, seedEmail, created(usdPayout)) +
		fmt.Sprintf("%v,%d,\"'=Deals, \"\"Inc\"\"\",deals@example.com,deals@example.com,125000,VND,1,%s\r\n", vndPayout["id"], deals, created(vndPayout))
	res := f.do(http.MethodGet, f.base+"/payouts.csv", nil)
	if res.Status != http.StatusOK || string(res.Body) != want || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		res.Header.Get("Content-Disposition") != fmt.Sprintf("attachment; filename=payouts-%d-processing.csv", f.r.ProgramID) {
		t.Errorf("CSV: %d %v\n%q\nwant\n%q", res.Status, res.Header, res.Body, want)
	}
	name := program["name"].(string)
	want = fmt.Sprintf("%s,12.50,USD,payout_%v,Commission payout %v from %s\r\n", seedEmail, usdPayout["id"], usdPayout["id"], name) +
		fmt.Sprintf("deals@example.com,125000,VND,payout_%v,Commission payout %v from %s\r\n", vndPayout["id"], vndPayout["id"], name)
	if res := f.do(http.MethodGet, f.base+"/payouts.csv?status=processing&format=paypal", nil); res.Status != http.StatusOK || string(res.Body) != want {
		t.Errorf("PayPal: %d\n%q\nwant\n%q", res.Status, res.Body, want)
	}

	// Paid: the payout and its commission; again with the same reference, the same answer; with another,
	// or failing it now, a conflict.
	paid := f.data(f.do(http.MethodPost, payout(usdPayout["id"])+"/paid", map[string]any{"external_reference": "PP-1"}), http.StatusOK)
	if paid["status"] != "paid" || paid["external_reference"] != "PP-1" || paid["paid_at"] == nil {
		t.Fatalf("paid = %v", paid)
	}
	if again := f.data(f.do(http.MethodPost, payout(usdPayout["id"])+"/paid", map[string]any{"external_reference": "PP-1"}), http.StatusOK); !cmp.Equal(again, paid) {
		t.Errorf("paid again: %v, want %v", again, paid)
	}
	id := int64(usdPayout["id"].(float64))
	platformError(t, f.do(http.MethodPost, payout(id)+"/paid", map[string]any{"external_reference": "PP-2"}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Payout %d is already paid with another external_reference", id))
	platformError(t, f.do(http.MethodPost, payout(id)+"/failed", map[string]any{"reason": "bounced"}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Payout %d is paid", id))
	if c := f.data(f.do(http.MethodGet, commission(usd["id"]), nil), http.StatusOK); c["status"] != "paid" || c["paid_at"] != paid["paid_at"] {
		t.Errorf("paid commission = %v", c)
	}
	if got := f.list(f.do(http.MethodGet, f.base+"/payouts?status=paid", nil), http.StatusOK); len(got) != 1 || !cmp.Equal(got[0], paid) {
		t.Errorf("paid payouts = %v", got)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 0, 0, 1250, 0} {
		t.Errorf("balances paid = %v", b)
	}

	// Half the sale refunded after payment: the commission is not edited, a clawback is owed.
	rf := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "flow-usd", "refund_amount_cents": 3125}).JSON(t)
	want2 := map[string]any{"id": usd["id"], "amount_cents": 1250.0, "reversed_amount_cents": 0.0, "currency": "USD", "status": "paid", "clawback_cents": 625.0}
	if diff := cmp.Diff(want2, rf["commission"]); diff != "" || rf["status"] != "refunded" {
		t.Errorf("refund after payment (-want +got):\n%s\n%v", diff, rf)
	}
	if c := f.data(f.do(http.MethodGet, commission(usd["id"]), nil), http.StatusOK); c["status"] != "paid" || c["clawback_cents"] != 625.0 || c["payable_cents"] != 1250.0 {
		t.Errorf("clawed-back commission = %v", c)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 0, 0, 1250, 625} {
		t.Errorf("balances with a clawback = %v", b)
	}

	// The next payout nets it.
	next := f.sale("flow-usd-2", 10000, "USD", "")
	f.data(f.do(http.MethodPost, commission(next["id"])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	run = f.list(f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "USD"}), http.StatusCreated)
	if len(run) != 1 || run[0]["amount_cents"] != 1375.0 || run[0]["clawback_cents"] != 625.0 || run[0]["commission_count"] != 1.0 {
		t.Fatalf("netting payout = %v", run)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 0, 2000, 1250, 0} {
		t.Errorf("balances netted = %v", b)
	}

	// It fails: its commission is approved again and the clawback owed again.
	failed := f.data(f.do(http.MethodPost, payout(run[0]["id"])+"/failed", map[string]any{"reason": "Recipient account closed"}), http.StatusOK)
	if failed["status"] != "failed" || failed["failure_reason"] != "Recipient account closed" || failed["paid_at"] != nil {
		t.Errorf("failed = %v", failed)
	}
	if c := f.data(f.do(http.MethodGet, commission(next["id"]), nil), http.StatusOK); c["status"] != "approved" || c["payout_id"] != nil {
		t.Errorf("commission of a failed payout = %v", c)
	}
	if b := f.balances(); bucket(b[seedKey]) != [5]float64{0, 2000, 0, 1250, 625} {
		t.Errorf("balances after the failure = %v", b)
	}
	failedID := int64(run[0]["id"].(float64))
	platformError(t, f.do(http.MethodPost, payout(failedID)+"/failed", map[string]any{"reason": "again"}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Payout %d has already failed", failedID))
	platformError(t, f.do(http.MethodPost, payout(failedID)+"/paid", map[string]any{"external_reference": "PP-3"}), http.StatusConflict, "ConflictError",
		fmt.Sprintf("Payout %d has failed", failedID))
	f.conserved()

	// The audit log holds each action, by the owner, with its amounts.
	for target, want := range map[string][]string{
		fmt.Sprintf("commission:%v", usd["id"]):   {"commission.approve"},
		fmt.Sprintf("commission:%v", vnd["id"]):   nil, // approved by its hold, not by someone
		fmt.Sprintf("commission:%v", next["id"]):  {"commission.approve"},
		fmt.Sprintf("payout:%v", usdPayout["id"]): {"payout.create", "payout.paid"}, // paid again changed nothing
		fmt.Sprintf("payout:%v", vndPayout["id"]): {"payout.create"},
		fmt.Sprintf("payout:%d", failedID):        {"payout.create", "payout.failed"},
	} {
		if got := f.audited(target); !cmp.Equal(got, want, cmpEmpty) {
			t.Errorf("audit of %s = %v, want %v", target, got, want)
		}
	}
	var detail struct {
		Actor     string `db:"actor"`
		AccountID int64  `db:"actor_account_id"`
		Detail    string `db:"detail"`
	}
	if err := f.env.DB.Get(&detail, `SELECT actor, actor_account_id, detail::text FROM audit_log WHERE action = 'payout.create' AND target = $1`,
		fmt.Sprintf("payout:%d", failedID)); err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal([]byte(detail.Detail), &d); err != nil || detail.Actor != f.r.AccountEmail || d["amount_cents"] != 1375.0 ||
		d["clawback_cents"] != 625.0 || d["currency"] != "USD" {
		t.Errorf("audit record = %+v %v", detail, d)
	}
}

// cmpEmpty treats a nil and an empty slice alike.
var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) })

// Without a hold and with automatic approval, a sale's commission is approved at once (the sale's answer
// says so); with manual approval it waits for a member whatever the time; the payout minimum holds
// partners back until their total reaches it.
func TestLedgerSettingsAct(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0})
	if c := f.sale("now-1", 1000, "USD", ""); c["status"] != "approved" {
		t.Errorf("commission without a hold = %v", c)
	}
	// A refund of an approved commission before a payout reduces it; it stays approved.
	rf := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "now-1", "refund_amount_cents": 250}).JSON(t)
	if c := rf["commission"].(map[string]any); c["status"] != "approved" || c["reversed_amount_cents"] != 50.0 || c["clawback_cents"] != 0.0 {
		t.Errorf("refund of an approved commission = %v", rf)
	}
	if b := f.balances()[fmt.Sprintf("%d USD", f.r.PartnerID)]; bucket(b) != [5]float64{0, 150, 0, 0, 0} {
		t.Errorf("balance = %v", b)
	}

	m := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual", "payout_minimum_cents": 1000})
	small := m.sale("manual-1", 2500, "USD", "") // 500
	m.clock.Advance(400 * 24 * time.Hour)
	if c := m.data(m.do(http.MethodGet, commission(small["id"]), nil), http.StatusOK); c["status"] != "pending" {
		t.Errorf("manual commission after a year = %v", c)
	}
	if got := m.list(m.do(http.MethodPost, m.base+"/payouts", nil), http.StatusCreated); len(got) != 0 {
		t.Errorf("a payout of pending commissions: %v", got)
	}
	m.data(m.do(http.MethodPost, commission(small["id"])+"/approve", nil), http.StatusOK)
	// Below the minimum: no payout, and the answer says what was carried over and why.
	res := m.do(http.MethodPost, m.base+"/payouts", nil)
	var run struct {
		Data        []map[string]any
		CarriedOver []map[string]any `json:"carried_over"`
	}
	if res.Status != http.StatusCreated {
		t.Fatalf("a run below the minimum: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &run)
	want := []map[string]any{{"partner_id": float64(m.r.PartnerID), "currency": "USD", "amount_cents": 500.0, "reason": "below_minimum"}}
	if len(run.Data) != 0 || !cmp.Equal(run.CarriedOver, want) {
		t.Errorf("a run below the minimum: payouts %v, carried over %v, want %v", run.Data, run.CarriedOver, want)
	}
	more := m.sale("manual-2", 3000, "USD", "") // 600: 1100 in all
	bulk := m.list(m.do(http.MethodPost, m.base+"/commissions/approve", map[string]any{"ids": []any{more["id"], small["id"]}}), http.StatusOK)
	if len(bulk) != 2 || bulk[0]["id"] != more["id"] || bulk[0]["status"] != "approved" || bulk[1]["id"] != small["id"] {
		t.Errorf("bulk approval = %v", bulk)
	}
	if got := m.list(m.do(http.MethodPost, m.base+"/payouts", nil), http.StatusCreated); len(got) != 1 || got[0]["amount_cents"] != 1100.0 || got[0]["commission_count"] != 2.0 {
		t.Errorf("payout at the minimum = %v", got)
	}
	m.conserved()
}

// A refund after a failed payout: the commission is approved again, and what a refund takes from it
// counts the clawback an earlier refund recorded while it was in the payout, so that the partner loses
// the commission once, not more.
func TestRefundAfterFailedPayout(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0})
	c := f.sale("fail-1", 10000, "USD", "") // 2000, approved at once
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	if len(run) != 1 {
		t.Fatalf("payouts = %v", run)
	}
	if rf := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "fail-1", "refund_amount_cents": 5000}).JSON(t); rf["commission"].(map[string]any)["clawback_cents"] != 1000.0 {
		t.Fatalf("refund in the payout = %v", rf)
	}
	f.data(f.do(http.MethodPost, payout(run[0]["id"])+"/failed", map[string]any{"reason": "bounced"}), http.StatusOK)
	key := fmt.Sprintf("%d USD", f.r.PartnerID)
	if b := f.balances(); bucket(b[key]) != [5]float64{0, 2000, 0, 0, 1000} {
		t.Errorf("balances after the failure = %v", b)
	}
	// The rest of the sale refunded: 2000 lost in all, 1000 of it already owed, so 1000 more is reversed.
	rf := refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "fail-1"}).JSON(t)
	want := map[string]any{"id": c["id"], "amount_cents": 2000.0, "reversed_amount_cents": 1000.0, "currency": "USD", "status": "approved", "clawback_cents": 1000.0}
	if diff := cmp.Diff(want, rf["commission"]); diff != "" {
		t.Errorf("refund after the failure (-want +got):\n%s", diff)
	}
	if b := f.balances(); bucket(b[key]) != [5]float64{0, 1000, 0, 0, 1000} {
		t.Errorf("balances: %v, want approved 1000 and owed 1000 (nothing to pay, nothing owed)", bucket(b[key]))
	}
	f.conserved()
}

// The commissions list: newest first, cursor pages that neither repeat nor skip while sales arrive, and
// each filter.
func TestCommissionsList(t *testing.T) {
	t.Parallel()
	f := newLedger(t, nil)
	other, otherURL := f.partner("Other", "other@example.com")
	var ids []any // oldest first
	for i := range 5 {
		url := ""
		if i == 2 {
			url = otherURL
		}
		ids = append(ids, f.sale(fmt.Sprintf("list-%d", i), 1000, "USD", url)["id"])
	}
	path := f.base + "/commissions"
	page := func(query string) ([]map[string]any, any) {
		t.Helper()
		res := f.do(http.MethodGet, path+query, nil)
		var body struct {
			Data []map[string]any
			Meta map[string]any
		}
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, res.Status, res.Body)
		}
		res.Decode(t, &body)
		return body.Data, body.Meta["next_cursor"]
	}
	idsOf := func(cs []map[string]any) []any {
		out := []any{}
		for _, c := range cs {
			out = append(out, c["id"])
		}
		return out
	}
	all, next := page("")
	if !cmp.Equal(idsOf(all), []any{ids[4], ids[3], ids[2], ids[1], ids[0]}) || next != nil {
		t.Fatalf("list = %v, next %v", idsOf(all), next)
	}
	first, next := page("?limit=2")
	late := f.sale("list-late", 1000, "USD", "")["id"] // newer than every page: never shown by the pages already started
	second, next2 := page("?limit=2&cursor=" + next.(string))
	third, next3 := page("?limit=2&cursor=" + next2.(string))
	got := slices.Concat(idsOf(first), idsOf(second), idsOf(third))
	if !cmp.Equal(got, []any{ids[4], ids[3], ids[2], ids[1], ids[0]}) || next3 != nil {
		t.Errorf("pages = %v (last cursor %v)", got, next3)
	}
	if top, _ := page("?limit=1"); top[0]["id"] != late {
		t.Errorf("first page after the late sale = %v", idsOf(top))
	}

	f.data(f.do(http.MethodPost, commission(ids[1])+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	if got, _ := page("?status=approved"); !cmp.Equal(idsOf(got), []any{ids[1]}) {
		t.Errorf("approved = %v", idsOf(got))
	}
	if got, _ := page(fmt.Sprintf("?partner_id=%d", other)); !cmp.Equal(idsOf(got), []any{ids[2]}) {
		t.Errorf("partner %d = %v", other, idsOf(got))
	}
	at := all[2]["created_at"].(string) // ids[2]
	if got, _ := page("?created_from=" + urlQuery(at)); !cmp.Equal(idsOf(got), []any{late, ids[4], ids[3], ids[2]}) {
		t.Errorf("from %s = %v", at, idsOf(got))
	}
	if got, _ := page("?created_to=" + urlQuery(at)); !cmp.Equal(idsOf(got), []any{ids[1], ids[0]}) {
		t.Errorf("to %s (exclusive) = %v", at, idsOf(got))
	}
	if got, _ := page("?status=paid"); len(got) != 0 {
		t.Errorf("paid = %v", idsOf(got))
	}

	for query, msg := range map[string]string{
		"?limit=0":                "Invalid query parameter limit: number must be at least 1",
		"?limit=101":              "Invalid query parameter limit: number must be at most 100",
		"?partner_id=0":           "Invalid query parameter partner_id: number must be at least 1",
		"?created_from=yesterday": "Invalid query parameter created_from: must be an ISO 8601 date and time with a time zone, such as 2026-01-31T09:30:00Z",
		"?cursor=!!!":             "cursor is not valid",
		"?cursor=bm90LmFjdXJzb3I": "cursor is not valid", // base64 of "not.acursor"
		"?status=bogus": `Invalid query parameter status: value is not one of the allowed values ` +
			`["pending","approved","in_payout","paid","rejected","reversed"]`,
	} {
		platformError(t, f.do(http.MethodGet, path+query, nil), http.StatusBadRequest, "BadRequestError", msg)
	}
	if res := f.do(http.MethodGet, path+"?limit=100", nil); res.Status != http.StatusOK {
		t.Errorf("limit 100: %d", res.Status)
	}
}

// The list by hold: what awaits approval (pending, its hold ended: the dashboard's To approve) apart from
// what waits for its hold; a released hold has ended.
func TestCommissionsByHold(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"commission_approval": "manual", "hold_days": 10})
	older := f.sale("hold-1", 1000, "USD", "")["id"]
	f.clock.Advance(6 * 24 * time.Hour)
	newer := f.sale("hold-2", 2000, "USD", "")["id"]
	f.clock.Advance(5 * 24 * time.Hour) // the older's hold ended a day ago; the newer's ends in five days
	ids := func(query string) []any {
		t.Helper()
		res := f.do(http.MethodGet, f.base+"/commissions"+query, nil)
		var body struct{ Data []map[string]any }
		if res.Status != http.StatusOK {
			t.Fatalf("%s: %d %s", query, res.Status, res.Body)
		}
		res.Decode(t, &body)
		out := []any{}
		for _, c := range body.Data {
			out = append(out, c["id"])
		}
		return out
	}
	for query, want := range map[string][]any{
		"?status=pending&hold=ended":   {older},
		"?status=pending&hold=in_hold": {newer},
		"?hold=ended":                  {older},
		"":                             {newer, older},
	} {
		if got := ids(query); !cmp.Equal(got, want) {
			t.Errorf("%s = %v, want %v", query, got, want)
		}
	}
	f.data(f.do(http.MethodPost, commission(newer)+"/approve", map[string]any{"release_hold": true}), http.StatusOK)
	if got := ids("?hold=ended"); !cmp.Equal(got, []any{newer, older}) {
		t.Errorf("after the newer's hold was released, ended = %v", got)
	}
	if got := ids("?hold=in_hold"); len(got) != 0 {
		t.Errorf("after the release, in hold = %v", got)
	}
	platformError(t, f.do(http.MethodGet, f.base+"/commissions?hold=over", nil), http.StatusBadRequest, "BadRequestError",
		`Invalid query parameter hold: value is not one of the allowed values ["in_hold","ended"]`)
}

// urlQuery escapes a query value (a time's "+").
func urlQuery(s string) string { return strings.ReplaceAll(s, "+", "%2B") }

// The payouts list, one payout at a time, and its filter.
func TestPayoutsList(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0})
	var made []any
	for i := range 3 {
		f.sale(fmt.Sprintf("po-%d", i), 1000, "USD", "")
		made = append(made, f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]["id"])
	}
	f.data(f.do(http.MethodPost, payout(made[1])+"/failed", map[string]any{"reason": "r"}), http.StatusOK)
	var got []any
	cursor := ""
	for range 4 {
		res := f.do(http.MethodGet, f.base+"/payouts?limit=1"+cursor, nil)
		var body struct {
			Data []map[string]any
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		res.Decode(t, &body)
		for _, p := range body.Data {
			got = append(got, p["id"])
		}
		if body.Meta.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *body.Meta.NextCursor
	}
	if !cmp.Equal(got, []any{made[2], made[1], made[0]}) {
		t.Errorf("pages = %v, want %v", got, []any{made[2], made[1], made[0]})
	}
	if failed := f.list(f.do(http.MethodGet, f.base+"/payouts?status=failed", nil), http.StatusOK); len(failed) != 1 || failed[0]["id"] != made[1] {
		t.Errorf("failed = %v", failed)
	}
	if p := f.data(f.do(http.MethodGet, payout(made[0]), nil), http.StatusOK); p["status"] != "processing" || p["amount_cents"] != 200.0 {
		t.Errorf("payout = %v", p)
	}
	// The failed payout's commission is approved again: the next run pays it out.
	if again := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated); len(again) != 1 || again[0]["amount_cents"] != 200.0 {
		t.Errorf("the failed payout's commission paid out again = %v", again)
	}
	// By partner: another partner's payout is not the seeded partner's.
	other, url := f.partner("Grace", "grace@example.com")
	f.sale("po-grace", 1000, "USD", url)
	graces := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	if len(graces) != 1 {
		t.Fatalf("Grace's payout run = %v", graces)
	}
	for partner, want := range map[int64]int{other: 1, f.r.PartnerID: 4} {
		got := f.list(f.do(http.MethodGet, fmt.Sprintf("%s/payouts?partner_id=%d", f.base, partner), nil), http.StatusOK)
		if len(got) != want {
			t.Errorf("partner %d's payouts = %d, want %d", partner, len(got), want)
		}
		for _, p := range got {
			if p["partner_id"] != float64(partner) {
				t.Errorf("partner %d's payouts hold %v", partner, p)
			}
		}
	}
	res := f.do(http.MethodGet, f.base+"/payouts.csv?status=failed", nil)
	if res.Status != http.StatusOK || res.Header.Get("Content-Disposition") != fmt.Sprintf("attachment; filename=payouts-%d-failed.csv", f.r.ProgramID) ||
		strings.Count(string(res.Body), "\r\n") != 2 {
		t.Errorf("failed CSV: %d %v %q", res.Status, res.Header, res.Body)
	}
}

// What the state of a commission or payout does not allow answers 409 conflict and changes nothing; an
// unknown id answers 404; a stranger 403.
func TestLedgerConflictsAndNotFound(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0})
	inPayout := f.sale("cf-1", 1000, "USD", "")["id"]
	run := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	f.data(f.do(http.MethodPost, payout(run[0]["id"])+"/paid", map[string]any{"external_reference": "ref-1"}), http.StatusOK)
	paid := inPayout
	inPayout = f.sale("cf-2", 1000, "USD", "")["id"]
	f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)
	rejected := f.sale("cf-3", 1000, "USD", "")["id"]
	f.data(f.do(http.MethodPost, commission(rejected)+"/reject", map[string]any{"reason": "Self-referral"}), http.StatusOK)
	reversed := f.sale("cf-4", 1000, "USD", "")["id"]
	refund(f.env, f.r.APIKey, map[string]any{"transaction_id": "cf-4"})
	open := f.sale("cf-5", 1000, "USD", "")["id"]

	conflict := func(path string, body any, msg string) {
		t.Helper()
		platformError(t, f.do(http.MethodPost, path, body), http.StatusConflict, "ConflictError", msg)
	}
	reason := map[string]any{"reason": "late"}
	conflict(commission(inPayout)+"/approve", nil, fmt.Sprintf("Commission %v is in a payout", inPayout))
	conflict(commission(inPayout)+"/reject", reason, fmt.Sprintf("Commission %v is in a payout", inPayout))
	conflict(commission(paid)+"/approve", nil, fmt.Sprintf("Commission %v is paid", paid))
	conflict(commission(paid)+"/reject", reason, fmt.Sprintf("Commission %v is paid", paid))
	conflict(commission(rejected)+"/approve", nil, fmt.Sprintf("Commission %v is rejected", rejected))
	conflict(commission(rejected)+"/reject", reason, fmt.Sprintf("Commission %v is rejected", rejected))
	conflict(commission(reversed)+"/approve", nil, fmt.Sprintf("Commission %v is reversed: nothing is payable", reversed))
	// All or none: the open commission stays as it was.
	conflict(f.base+"/commissions/approve", map[string]any{"ids": []any{open, inPayout}}, fmt.Sprintf("Commission %v is in a payout", inPayout))
	// (Hold 0 and auto approval: the open commission is approved by itself, but nobody approved it.)
	if got := f.audited(fmt.Sprintf("commission:%v", open)); len(got) != 0 {
		t.Errorf("a refused bulk approval left audit records %v", got)
	}
	if c := f.data(f.do(http.MethodGet, commission(rejected), nil), http.StatusOK); c["status"] != "rejected" || c["rejected_reason"] != "Self-referral" || c["payable_cents"] != 0.0 {
		t.Errorf("rejected = %v", c)
	}
	if got := f.audited(fmt.Sprintf("commission:%v", rejected)); !cmp.Equal(got, []string{"commission.reject"}) {
		t.Errorf("audit of the rejection = %v", got)
	}

	notFound := func(method, path string, body any, msg string) {
		t.Helper()
		platformError(t, f.do(method, path, body), http.StatusNotFound, "NotFoundError", msg)
	}
	notFound(http.MethodGet, commission(999999), nil, "Commission not found")
	notFound(http.MethodPost, commission(999999)+"/approve", nil, "Commission not found")
	notFound(http.MethodPost, commission(999999)+"/reject", reason, "Commission not found")
	notFound(http.MethodPost, f.base+"/commissions/approve", map[string]any{"ids": []any{open, 999999}}, "Commission not found")
	notFound(http.MethodGet, payout(999999), nil, "Payout not found")
	notFound(http.MethodPost, payout(999999)+"/paid", map[string]any{"external_reference": "x"}, "Payout not found")
	notFound(http.MethodPost, payout(999999)+"/failed", reason, "Payout not found")
	for _, p := range []struct{ method, path string }{{http.MethodGet, "/commissions"}, {http.MethodGet, "/balances"}, {http.MethodGet, "/payouts"},
		{http.MethodPost, "/payouts"}, {http.MethodGet, "/payouts.csv"}} {
		notFound(p.method, "/api/v1/programs/999999"+p.path, nil, "Program not found")
	}
	notFound(http.MethodPost, "/api/v1/programs/999999/commissions/approve", map[string]any{"ids": []any{1}}, "Program not found")

	// Another brand's member learns nothing, and another program's commission is not this program's.
	stranger := f.another()
	theirs := stranger.sale("theirs", 1000, "USD", "")["id"]
	notFound(http.MethodPost, f.base+"/commissions/approve", map[string]any{"ids": []any{theirs}}, "Commission not found")
	them := apitest.Bearer(stranger.r.AccountToken)
	for _, rt := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, f.base + "/commissions", nil}, {http.MethodGet, commission(open), nil}, {http.MethodPost, commission(open) + "/approve", nil},
		{http.MethodPost, commission(open) + "/reject", reason}, {http.MethodPost, f.base + "/commissions/approve", map[string]any{"ids": []any{open}}},
		{http.MethodGet, f.base + "/balances", nil}, {http.MethodPost, f.base + "/payouts", nil}, {http.MethodGet, f.base + "/payouts", nil},
		{http.MethodGet, payout(run[0]["id"]), nil}, {http.MethodPost, payout(run[0]["id"]) + "/paid", map[string]any{"external_reference": "x"}},
		{http.MethodPost, payout(run[0]["id"]) + "/failed", reason}, {http.MethodGet, f.base + "/payouts.csv", nil},
	} {
		platformError(t, f.env.Do(rt.method, rt.path, rt.body, them...), http.StatusForbidden, "ForbiddenError", "You are not a member of this program's workspace")
	}
	// And without a credential: 401.
	for _, path := range []string{f.base + "/commissions", commission(open), f.base + "/balances", f.base + "/payouts", payout(run[0]["id"]), f.base + "/payouts.csv"} {
		platformError(t, f.env.Do(http.MethodGet, path, nil), http.StatusUnauthorized, "UnauthorizedError", "Authentication required — run reftrack login first")
	}
	f.conserved()
}

// Owner, admin and billing act; an analyst reads and is refused every action.
func TestLedgerRoles(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual"})
	for _, role := range []string{"owner", "admin", "billing", "analyst"} {
		t.Run(role, func(t *testing.T) {
			token := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, role))
			// A payout of this role's own to act on, made by the owner.
			c1 := f.sale(role+"-1", 1000, "EUR", "")["id"]
			c2 := f.sale(role+"-2", 1000, "EUR", "")["id"]
			f.data(f.do(http.MethodPost, commission(c1)+"/approve", nil), http.StatusOK)
			po := f.list(f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "EUR"}), http.StatusCreated)[0]["id"]
			c3 := f.sale(role+"-3", 1000, "EUR", "")["id"]
			reads := []string{f.base + "/commissions", commission(c1), f.base + "/balances", f.base + "/payouts", payout(po), f.base + "/payouts.csv"}
			for _, path := range reads {
				if res := f.env.Do(http.MethodGet, path, nil, token...); res.Status != http.StatusOK {
					t.Errorf("%s reads %s: %d %s", role, path, res.Status, res.Body)
				}
			}
			acts := []struct {
				path, action string
				body         any
			}{
				{commission(c2) + "/approve", "commissions:write", nil},
				{f.base + "/commissions/approve", "commissions:write", map[string]any{"ids": []any{c2}}},
				{commission(c3) + "/reject", "commissions:write", map[string]any{"reason": "r"}},
				{f.base + "/payouts", "payouts:write", map[string]any{"currency": "EUR"}},
				{payout(po) + "/paid", "payouts:write", map[string]any{"external_reference": role}},
			}
			for _, a := range acts {
				res := f.env.Do(http.MethodPost, a.path, a.body, token...)
				if role == "analyst" {
					platformError(t, res, http.StatusForbidden, "ForbiddenError", "Your role (analyst) does not allow this ("+a.action+")")
					continue
				}
				if res.Status >= 300 {
					t.Errorf("%s acts on %s: %d %s", role, a.path, res.Status, res.Body)
				}
			}
			if role == "analyst" {
				platformError(t, f.env.Do(http.MethodPost, payout(po)+"/failed", map[string]any{"reason": "r"}, token...), http.StatusForbidden,
					"ForbiddenError", "Your role (analyst) does not allow this (payouts:write)")
				if c := f.data(f.do(http.MethodGet, commission(c2), nil), http.StatusOK); c["status"] != "pending" {
					t.Errorf("an analyst's refused approval changed %v", c)
				}
				return
			}
			// The audit log names the member who acted.
			var actor string
			if err := f.env.DB.Get(&actor, `SELECT actor FROM audit_log WHERE action = 'payout.paid' AND target = $1`, fmt.Sprintf("payout:%v", po)); err != nil ||
				!strings.HasPrefix(actor, role+"-") {
				t.Errorf("payout.paid by %q (%v), want the %s", actor, err, role)
			}
		})
	}
	f.conserved()
}

// Each field and header out of its range answers 400 naming it, and changes nothing.
func TestLedgerInputRanges(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0, "commission_approval": "manual"})
	c := f.sale("rg-1", 1000, "USD", "")["id"]
	f.data(f.do(http.MethodPost, commission(c)+"/approve", nil), http.StatusOK)
	po := f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated)[0]["id"]
	open := f.sale("rg-2", 1000, "USD", "")["id"]
	ids := func(n int) map[string]any {
		list := make([]any, n)
		for i := range list {
			list[i] = i + 1
		}
		return map[string]any{"ids": list}
	}
	for _, tc := range []struct {
		name, path string
		body       any
		headers    []string
		message    string
	}{
		{"reason missing", commission(open) + "/reject", `{}`, nil, `Invalid request body: reason: property "reason" is missing`},
		{"reason empty", commission(open) + "/reject", map[string]any{"reason": ""}, nil, "Invalid request body: reason: minimum string length is 1"},
		{"reason blank", commission(open) + "/reject", map[string]any{"reason": "   "}, nil, "reason must be 1 to 500 characters"},
		{"reason 501", commission(open) + "/reject", map[string]any{"reason": strings.Repeat("é", 501)}, nil, "Invalid request body: reason: maximum string length is 500"},
		{"reason number", commission(open) + "/reject", `{"reason":5}`, nil, "Invalid request body: reason: value must be a string"},
		{"ids empty", f.base + "/commissions/approve", ids(0), nil, "Invalid request body: ids: minimum number of items is 1"},
		{"ids 501", f.base + "/commissions/approve", ids(501), nil, "Invalid request body: ids: maximum number of items is 500"},
		{"ids repeated", f.base + "/commissions/approve", map[string]any{"ids": []any{open, open}}, nil, "Invalid request body: ids: duplicate items found"},
		{"ids zero", f.base + "/commissions/approve", map[string]any{"ids": []any{0}}, nil, "Invalid request body: ids.0: number must be at least 1"},
		{"ids huge", f.base + "/commissions/approve", `{"ids":[99999999999999999999]}`, nil,
			`Invalid request body: ids.0: integer doesn't match the format "int64" (value should be between -9223372036854775808 and 9223372036854775807)`},
		{"ids strings", f.base + "/commissions/approve", `{"ids":["1"]}`, nil, "Invalid request body: ids.0: value must be an integer"},
		{"currency", f.base + "/payouts", map[string]any{"currency": "gbp"}, nil,
			"Invalid request body: currency: is not in the accepted form"},
		{"currency not ISO 4217", f.base + "/payouts", map[string]any{"currency": "GBQ"}, nil, "currency must be an ISO 4217 code such as USD or GBP"},
		{"reference empty", payout(po) + "/paid", map[string]any{"external_reference": ""}, nil,
			"Invalid request body: external_reference: minimum string length is 1"},
		{"reference blank", payout(po) + "/paid", map[string]any{"external_reference": " "}, nil, "external_reference must be 1 to 255 characters"},
		{"reference 256", payout(po) + "/paid", map[string]any{"external_reference": strings.Repeat("r", 256)}, nil,
			"Invalid request body: external_reference: maximum string length is 255"},
		{"failure blank", payout(po) + "/failed", map[string]any{"reason": "\t"}, nil, "reason must be 1 to 500 characters"},
		{"failure 501", payout(po) + "/failed", map[string]any{"reason": strings.Repeat("x", 501)}, nil, "Invalid request body: reason: maximum string length is 500"},
		{"key 256", f.base + "/payouts", nil, []string{"Idempotency-Key", strings.Repeat("k", 256)}, "Invalid header parameter Idempotency-Key: maximum string length is 255"},
		{"key not UTF-8", f.base + "/payouts", nil, []string{"Idempotency-Key", "k\xff"}, "Idempotency-Key must be 1 to 255 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			platformError(t, f.do(http.MethodPost, tc.path, tc.body, tc.headers...), http.StatusBadRequest, "BadRequestError", tc.message)
		})
	}
	for query, msg := range map[string]string{
		"/payouts?status=open":      `Invalid query parameter status: value is not one of the allowed values ["processing","paid","failed"]`,
		"/payouts?limit=101":        "Invalid query parameter limit: number must be at most 100",
		"/payouts?cursor=%21":       "cursor is not valid",
		"/payouts.csv?format=excel": `Invalid query parameter format: value is not one of the allowed values ["paypal"]`,
		"/payouts.csv?status=done":  `Invalid query parameter status: value is not one of the allowed values ["processing","paid","failed"]`,
	} {
		platformError(t, f.do(http.MethodGet, f.base+query, nil), http.StatusBadRequest, "BadRequestError", msg)
	}
	// Nothing changed; the limits themselves are accepted.
	if got := f.data(f.do(http.MethodGet, commission(open), nil), http.StatusOK); got["status"] != "pending" {
		t.Errorf("a refused request changed %v", got)
	}
	if n := f.env.Count(`SELECT count(*) FROM payouts`); n != 1 {
		t.Errorf("%d payouts after refusals", n)
	}
	f.data(f.do(http.MethodPost, commission(open)+"/reject", map[string]any{"reason": strings.Repeat("é", 500)}), http.StatusOK)
	f.data(f.do(http.MethodPost, payout(po)+"/paid", map[string]any{"external_reference": strings.Repeat("r", 255)},
		"Idempotency-Key", strings.Repeat("k", 255)), http.StatusOK)
}

// Idempotency-Key: the same key and request answer the first answer again and change nothing; the key on
// another request is a conflict; each account has its own keys.
func TestLedgerIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := newLedger(t, map[string]any{"hold_days": 0})
	f.sale("ik-1", 1000, "USD", "")
	key := []string{"Idempotency-Key", "run-2026-03-05"}
	first := f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "USD"}, key...)
	if first.Status != http.StatusCreated || len(f.list(first, http.StatusCreated)) != 1 {
		t.Fatalf("first run: %d %s", first.Status, first.Body)
	}
	f.sale("ik-2", 2000, "USD", "") // due now, but the retried run must not pay it
	again := f.do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "USD"}, key...)
	if again.Status != http.StatusCreated || string(again.Body) != string(first.Body) {
		t.Errorf("retried run: %d %s, want the first answer %s", again.Status, again.Body, first.Body)
	}
	if n := f.env.Count(`SELECT count(*) FROM payouts`); n != 1 {
		t.Errorf("%d payouts after a retried run", n)
	}
	if n := f.env.Count(`SELECT count(*) FROM audit_log WHERE action = 'payout.create'`); n != 1 {
		t.Errorf("%d payout.create records after a retried run", n)
	}
	// The same key with another body, on another route, or another path: a conflict, nothing made.
	const reused = "Idempotency-Key reused with a different request"
	platformError(t, f.do(http.MethodPost, f.base+"/payouts", map[string]any{}, key...), http.StatusConflict, "ConflictError", reused)
	platformError(t, f.do(http.MethodPost, f.base+"/payouts", `{"currency":"USD" }`, key...), http.StatusConflict, "ConflictError", reused)
	po := f.list(first, http.StatusCreated)[0]["id"]
	platformError(t, f.do(http.MethodPost, payout(po)+"/paid", map[string]any{"external_reference": "x"}, key...), http.StatusConflict, "ConflictError", reused)
	if n := f.env.Count(`SELECT count(*) FROM payouts`); n != 1 {
		t.Errorf("%d payouts after conflicts", n)
	}
	// Another member's key of the same text is theirs.
	admin := apitest.Bearer(member(t, f.env, f.r.AdvertiserID, "admin"))
	if res := f.env.Do(http.MethodPost, f.base+"/payouts", map[string]any{"currency": "USD"}, append(admin, key...)...); res.Status != http.StatusCreated ||
		len(f.list(res, http.StatusCreated)) != 1 {
		t.Errorf("another account's key: %d %s", res.Status, res.Body)
	}

	// Paid with a key twice: one change, one audit record; the second answer is the first.
	paidKey := []string{"Idempotency-Key", "paid-1"}
	p1 := f.do(http.MethodPost, payout(po)+"/paid", map[string]any{"external_reference": "PP-9"}, paidKey...)
	p2 := f.do(http.MethodPost, payout(po)+"/paid", map[string]any{"external_reference": "PP-9"}, paidKey...)
	if p1.Status != http.StatusOK || string(p1.Body) != string(p2.Body) {
		t.Errorf("paid twice with a key: %s / %s", p1.Body, p2.Body)
	}
	if got := f.audited(fmt.Sprintf("payout:%v", po)); !cmp.Equal(got, []string{"payout.create", "payout.paid"}) {
		t.Errorf("audit = %v", got)
	}
	// A refused request keeps no answer: the key may be used once the request can succeed.
	rejectKey := []string{"Idempotency-Key", "reject-1"}
	c := f.sale("ik-3", 1000, "USD", "")["id"]
	platformError(t, f.do(http.MethodPost, commission(c)+"/reject", map[string]any{"reason": " "}, rejectKey...), http.StatusBadRequest, "BadRequestError",
		"reason must be 1 to 500 characters")
	r1 := f.data(f.do(http.MethodPost, commission(c)+"/reject", map[string]any{"reason": "fraud"}, rejectKey...), http.StatusOK)
	r2 := f.data(f.do(http.MethodPost, commission(c)+"/reject", map[string]any{"reason": "fraud"}, rejectKey...), http.StatusOK)
	if r1["status"] != "rejected" || !cmp.Equal(r1, r2) {
		t.Errorf("reject with a key: %v / %v", r1, r2)
	}
	// Approve with a key, twice, after its state changed: the first answer, not a conflict.
	c2 := f.sale("ik-4", 1000, "USD", "")["id"]
	approveKey := []string{"Idempotency-Key", "approve-1"}
	a1 := f.do(http.MethodPost, commission(c2)+"/approve", nil, approveKey...)
	f.list(f.do(http.MethodPost, f.base+"/payouts", nil), http.StatusCreated) // c2 is now in a payout
	a2 := f.do(http.MethodPost, commission(c2)+"/approve", nil, approveKey...)
	if a1.Status != http.StatusOK || a2.Status != http.StatusOK || string(a1.Body) != string(a2.Body) {
		t.Errorf("approve with a key: %d %s / %d %s", a1.Status, a1.Body, a2.Status, a2.Body)
	}
	bulkKey := []string{"Idempotency-Key", "bulk-1"}
	c3 := f.sale("ik-5", 1000, "USD", "")["id"]
	b1 := f.do(http.MethodPost, f.base+"/commissions/approve", map[string]any{"ids": []any{c3}}, bulkKey...)
	b2 := f.do(http.MethodPost, f.base+"/commissions/approve", map[string]any{"ids": []any{c3}}, bulkKey...)
	if b1.Status != http.StatusOK || string(b1.Body) != string(b2.Body) {
		t.Errorf("bulk approve with a key: %s / %s", b1.Body, b2.Body)
	}
	f.conserved()
}
