package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/apitest"
)

// The ledger's model-based test (issue 27): random batches of concurrent requests (sales, partial and full
// refunds before and after payment, approvals one by one and in bulk, rejections, payout runs, paid,
// failed, Idempotency-Key replays and misuse, the clock moving through holds) against a real server, over
// several partners and currencies and programs of every setting. After each batch the answers must be
// those of some order of the batch's requests run one at a time on the model below (the requests are
// linearizable), and then the server's balances, commissions and payouts must be the model's to the cent,
// and the conservation equation (docs/rules.md#the-ledger-and-payouts) must hold on the rows.
//
// REFTRACK_MODEL_STEPS (default 150, `make model` 10,000) is how many requests in all; REFTRACK_MODEL_SEED
// repeats a run's random choices (the interleavings are the machine's); REFTRACK_MODEL_RUNNERS servers run
// worlds at once (default 2).
func TestLedgerModel(t *testing.T) {
	t.Parallel()
	steps, runners := envInt(t, "REFTRACK_MODEL_STEPS", 150), envInt(t, "REFTRACK_MODEL_RUNNERS", 2)
	seedValue := uint64(time.Now().UnixNano())
	if s := os.Getenv("REFTRACK_MODEL_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("REFTRACK_MODEL_SEED: %v", err)
		}
		seedValue = v
	}
	t.Logf("seed %d (REFTRACK_MODEL_SEED repeats its choices), %d steps on %d servers", seedValue, steps, runners)
	var done, worlds, batches atomic.Int64
	tally := &modelTally{answers: map[string]int{}}
	t.Cleanup(func() {
		t.Logf("%d steps in %d batches over %d worlds; %d batches answered as in an order other than sent; answers: %s",
			done.Load(), batches.Load(), worlds.Load(), tally.reordered, tally)
	})
	for runner := range runners {
		t.Run(fmt.Sprintf("server %d", runner), func(t *testing.T) {
			t.Parallel()
			// Each runner its own server: its clock moves through the holds of its worlds alone.
			clock := apitest.NewClock(time.Now())
			env := apitest.Start(t, apitest.Options{Clock: clock.Now})
			for n := 0; done.Load() < int64(steps) && !t.Failed(); n++ {
				w := newModelWorld(t, env, clock, rand.New(rand.NewPCG(seedValue, uint64(runner)<<32|uint64(n))),
					fmt.Sprintf("seed %d server %d world %d", seedValue, runner, n))
				w.tally = tally
				for range 20 + w.rnd.IntN(60) {
					if t.Failed() {
						return
					}
					done.Add(int64(w.batch()))
					batches.Add(1)
				}
				worlds.Add(1)
			}
		})
	}
}

// modelTally counts what the worlds' requests were answered, so that a run shows what it exercised.
type modelTally struct {
	mu        sync.Mutex
	answers   map[string]int // "kind status", e.g. "refund 200 clawback"
	reordered int            // batches whose answers fit an order other than the one they were sent in only
}

func (m *modelTally) add(kind string, status int, detail string, reordered bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.answers[strings.TrimSpace(fmt.Sprintf("%s %d %s", kind, status, detail))]++
	if reordered {
		m.reordered++
	}
}

func (m *modelTally) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m.answers)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m.answers[k]))
	}
	return strings.Join(parts, ", ")
}

func envInt(t *testing.T, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// --- The model ------------------------------------------------------------------------------------------

type mSale struct {
	txn              string
	amount, refunded int64
	commission       int64
}

type mCommission struct {
	id, partner        int64
	currency           string
	amount, reversed   int64
	clawback           int64     // all its clawbacks, netted or owed
	status             string    // as stored
	availableTick      int       // the tick its hold ends (auto approval has it approved from then)
	availableOn        time.Time // the same instant, as the server's answers write it
	released           bool      // approved in its hold, releasing it
	payout             int64     // 0: none
	hasClawbackEntries bool
}

type mClawback struct {
	commission, partner int64
	currency            string
	amount              int64
	payout              int64 // 0: owed
}

type mPayout struct {
	id, partner             int64
	currency                string
	gross, clawback, amount int64
	count                   int
	status, reference       string
	commissions             []int64
	clawbacks               []int // indexes into state.clawbacks
}

// ledgerState is the model: what the ledger holds, as docs/rules.md#the-ledger-and-payouts says it changes.
type ledgerState struct {
	tick        int       // the clock's half-days since the world began
	now         time.Time // the server's clock
	rateTenth   int64     // the commission rate in tenths of a percent
	auto        bool
	hold        int // hold_days
	minimum     int64
	sales       map[string]*mSale
	txns        []string
	commissions map[int64]*mCommission
	ids         []int64
	clawbacks   []mClawback
	payouts     map[int64]*mPayout
	payoutIDs   []int64
}

func (s *ledgerState) clone() *ledgerState {
	c := *s
	c.sales, c.commissions, c.payouts = map[string]*mSale{}, map[int64]*mCommission{}, map[int64]*mPayout{}
	for k, v := range s.sales {
		x := *v
		c.sales[k] = &x
	}
	for k, v := range s.commissions {
		x := *v
		c.commissions[k] = &x
	}
	for k, v := range s.payouts {
		x := *v
		x.commissions, x.clawbacks = slices.Clone(v.commissions), slices.Clone(v.clawbacks)
		c.payouts[k] = &x
	}
	c.txns, c.ids, c.payoutIDs, c.clawbacks = slices.Clone(s.txns), slices.Clone(s.ids), slices.Clone(s.payoutIDs), slices.Clone(s.clawbacks)
	return &c
}

// status is a commission's effective status: with auto approval, a pending one is approved once its
// hold has ended.
func (s *ledgerState) status(c *mCommission) string {
	if c.status == "pending" && s.auto && s.tick >= c.availableTick {
		return "approved"
	}
	return c.status
}

// roundHalfAway is num/den rounded half away from zero, for num, den > 0.
func roundHalfAway(num, den int64) int64 { return (2*num + den) / (2 * den) }

// refund applies a refund bringing sale's refunded total to total, by the rule of
// docs/rules.md#sales-commissions-and-refunds.
func (s *ledgerState) refund(sale *mSale, total int64) {
	sale.refunded = total
	c := s.commissions[sale.commission]
	lost := c.amount
	if total < sale.amount {
		lost = roundHalfAway(c.amount*total, sale.amount)
	}
	switch st := s.status(c); st {
	case "rejected":
	case "in_payout", "paid":
		if k := lost - c.reversed - c.clawback; k > 0 {
			s.clawbacks = append(s.clawbacks, mClawback{commission: c.id, partner: c.partner, currency: c.currency, amount: k})
			c.clawback += k
			c.hasClawbackEntries = true
		}
	default:
		// One axis: the status stays (an approval in effect is written down) until reversed in full.
		c.reversed = max(lost-c.clawback, c.reversed)
		c.status = st
		if c.reversed == c.amount {
			c.status = "reversed"
		}
	}
}

// balance is a partner's buckets in a currency: pending, approved, in payout, paid, clawback owed.
type balance [5]int64

func (s *ledgerState) balances() map[string]balance {
	out := map[string]balance{}
	for _, id := range s.ids {
		c := s.commissions[id]
		k := fmt.Sprintf("%d %s", c.partner, c.currency)
		b := out[k]
		payable := c.amount - c.reversed
		switch s.status(c) {
		case "pending":
			b[0] += payable
		case "approved":
			b[1] += payable
		case "in_payout":
			b[2] += payable
		case "paid":
			b[3] += payable
		}
		out[k] = b
	}
	for _, k := range s.clawbacks {
		if k.payout == 0 {
			key := fmt.Sprintf("%d %s", k.partner, k.currency)
			b := out[key]
			b[4] += k.amount
			out[key] = b
		}
	}
	return out
}

// --- Requests -----------------------------------------------------------------------------------------

// modelOp is one request of a batch.
type modelOp struct {
	kind     string // sale, refund, approve, approve-many, reject, payouts, paid, failed, replay, reuse
	partner  int64
	currency string
	amount   int64 // the sale's amount; a refund's (0: all that is left)
	txn      string
	ids      []int64 // commissions, or the payout
	release  bool    // an approval releasing the hold
	text     string  // reason or external reference
	key      string  // Idempotency-Key
	replay   *sentPost
	tick     int
}

// sentPost is a ledger POST that succeeded: replaying it must answer the same bytes and change nothing.
type sentPost struct {
	method, path, key string
	body              any
	status            int
	answer            []byte
	tick              int
}

// observed is a request's answer and the ids the model takes from it (ids the server chose).
type observed struct {
	status  int
	body    []byte
	summary string
	ids     []int64
}

type modelWorld struct {
	t         *testing.T
	env       *apitest.Env
	clock     *apitest.Clock
	rnd       *rand.Rand
	name      string
	r         seed.Result
	owner     []string
	base      string
	rateTenth int64 // the commission rate in tenths of a percent
	customers map[int64]string
	partners  []int64
	state     *ledgerState
	sent      []sentPost
	n         int      // requests made, for unique transaction ids, keys and references
	trail     []string // the batches so far, for the report of a failure
	tally     *modelTally
}

// newModelWorld starts a program of random ledger settings, a recurring percent commission and two or
// three partners, each with a customer (a click and a server lead) to buy through it.
func newModelWorld(t *testing.T, env *apitest.Env, clock *apitest.Clock, rnd *rand.Rand, name string) *modelWorld {
	// A minute on: the per-IP click and lead limits start a new window.
	clock.Advance(time.Minute)
	rates := []string{"15", "20", "12.5", "33.3"}
	rate := rates[rnd.IntN(len(rates))]
	r := env.Seed(seed.Options{CommissionType: "recurring_percent", CommissionRate: rate, Now: clock.Now()})
	tenths, _ := strconv.ParseFloat(rate, 64)
	w := &modelWorld{t: t, env: env, clock: clock, rnd: rnd, name: name, r: r, owner: apitest.Bearer(r.AccountToken),
		base: "/api/v1/programs/" + itoa(r.ProgramID), rateTenth: int64(tenths*10 + 0.5), customers: map[int64]string{},
		state: &ledgerState{sales: map[string]*mSale{}, commissions: map[int64]*mCommission{}, payouts: map[int64]*mPayout{}}}
	s := w.state
	s.now = clock.Now()
	s.auto = rnd.IntN(2) == 0
	s.hold = []int{0, 1, 1, 30}[rnd.IntN(4)]
	s.minimum = []int64{0, 0, 300, 2500}[rnd.IntN(4)]
	approval := map[bool]string{true: "auto", false: "manual"}[s.auto]
	s.rateTenth = w.rateTenth
	w.owned(http.StatusOK, http.MethodPatch, w.base, map[string]any{"attribution_window_days": 3650, "hold_days": s.hold,
		"commission_approval": approval, "payout_minimum_cents": s.minimum})
	w.trail = append(w.trail, fmt.Sprintf("program %d: %s approval, hold %d days, minimum %d, rate %s %%", r.ProgramID, approval, s.hold, s.minimum, rate))
	w.addCustomer(r.PartnerID, r.AffiliateURL)
	for i := range 1 + rnd.IntN(2) {
		p := w.owned(http.StatusCreated, http.MethodPost, w.base+"/partners", map[string]any{"name": fmt.Sprintf("Partner %d", i), "email": fmt.Sprintf("p%d@example.com", i)})
		var partner struct{ Data struct{ ID int64 } }
		decodeInto(t, p.Body, &partner)
		l := w.owned(http.StatusCreated, http.MethodPost, w.base+"/links", map[string]any{"partner_id": partner.Data.ID})
		var link struct {
			Data struct {
				URL string `json:"referral_url"`
			}
		}
		decodeInto(t, l.Body, &link)
		w.addCustomer(partner.Data.ID, link.Data.URL)
	}
	return w
}

func (w *modelWorld) addCustomer(partner int64, affiliateURL string) {
	key := fmt.Sprintf("model-%d-%d", w.r.ProgramID, partner)
	click := w.send(http.StatusOK, http.MethodPost, "/api/v1/track/click", map[string]any{"affiliate_url": affiliateURL}, "User-Agent", "model "+key)
	var c struct {
		ClickID string `json:"click_id"`
	}
	decodeInto(w.t, click.Body, &c)
	w.send(http.StatusOK, http.MethodPost, "/api/v1/track/lead", map[string]any{"click_id": c.ClickID, "customer_key": key}, apitest.Bearer(w.r.APIKey)...)
	w.customers[partner] = key
	w.partners = append(w.partners, partner)
}

// send sends a setup or check request and checks its status.
func (w *modelWorld) send(status int, method, path string, body any, headers ...string) *apitest.Response {
	w.t.Helper()
	res, err := w.env.Exchange(w.env.NewRequest(method, path, body, headers...))
	if err != nil {
		w.t.Fatalf("%s: %v", w.name, err)
	}
	if res.Status != status {
		w.t.Fatalf("%s: %s %s: status %d, want %d: %s", w.name, method, path, res.Status, status, res.Body)
	}
	return res
}

// owned sends a request as the program's owner.
func (w *modelWorld) owned(status int, method, path string, body any) *apitest.Response {
	w.t.Helper()
	return w.send(status, method, path, body, w.owner...)
}

func decodeInto(t *testing.T, body []byte, v any) {
	if err := json.Unmarshal(body, v); err != nil {
		t.Errorf("%v: %s", err, body)
	}
}

// pick is a random element of xs.
func pick[T any](rnd *rand.Rand, xs []T) T { return xs[rnd.IntN(len(xs))] }

// next makes a random request on the state as it stands before the batch.
func (w *modelWorld) next() modelOp {
	s, rnd := w.state, w.rnd
	w.n++
	o := modelOp{key: fmt.Sprintf("k-%d-%d", w.r.ProgramID, w.n), tick: s.tick}
	var open []int64 // commissions not in a payout
	for _, id := range s.ids {
		if s.commissions[id].payout == 0 {
			open = append(open, id)
		}
	}
	var replayable []sentPost
	for _, p := range w.sent {
		if s.tick-p.tick <= 1 { // within the key's 24 hours
			replayable = append(replayable, p)
		}
	}
	for {
		switch k := rnd.IntN(100); {
		case k < 24 || len(s.txns) == 0:
			o.kind, o.partner = "sale", pick(rnd, w.partners)
			o.currency = pick(rnd, []string{"USD", "EUR", "VND"})
			o.amount = 100 + rnd.Int64N(20000)
			if o.currency == "VND" {
				o.amount *= 100
			}
			o.txn = fmt.Sprintf("m-%d-%d", w.r.ProgramID, w.n)
			return o
		case k < 40:
			o.kind = "refund"
			sale := s.sales[pick(rnd, s.txns)]
			o.txn = sale.txn
			switch left := sale.amount - sale.refunded; {
			case rnd.IntN(10) < 4 || left == 0:
			case rnd.IntN(10) == 0:
				o.amount = left + 1 + rnd.Int64N(100) // more than is left: refused
			default:
				o.amount = 1 + rnd.Int64N(left)
			}
			return o
		case k < 52 && len(s.ids) > 0:
			o.kind, o.ids, o.release = "approve", []int64{pick(rnd, s.ids)}, rnd.IntN(2) == 0
			if len(open) > 0 && rnd.IntN(3) > 0 {
				o.ids = []int64{pick(rnd, open)}
			}
			return o
		case k < 58 && len(s.ids) > 0:
			o.kind, o.release = "approve-many", rnd.IntN(2) == 0
			from := s.ids
			if len(open) > 0 && rnd.IntN(4) > 0 {
				from = open
			}
			for range 1 + rnd.IntN(4) {
				if id := pick(rnd, from); !slices.Contains(o.ids, id) {
					o.ids = append(o.ids, id)
				}
			}
			return o
		case k < 63 && len(s.ids) > 0:
			o.kind, o.ids, o.text = "reject", []int64{pick(rnd, s.ids)}, fmt.Sprintf("reason %d", w.n)
			return o
		case k < 76:
			o.kind = "payouts"
			if rnd.IntN(3) == 0 {
				o.currency = pick(rnd, []string{"USD", "EUR", "VND"})
			}
			return o
		case k < 86 && len(s.payoutIDs) > 0:
			o.kind, o.ids = "paid", []int64{pick(rnd, s.payoutIDs)}
			o.text = fmt.Sprintf("ref-%d", w.n)
			if p := s.payouts[o.ids[0]]; p.reference != "" && rnd.IntN(2) == 0 {
				o.text = p.reference
			}
			return o
		case k < 93 && len(s.payoutIDs) > 0:
			o.kind, o.ids, o.text = "failed", []int64{pick(rnd, s.payoutIDs)}, fmt.Sprintf("bank %d", w.n)
			return o
		case k < 98 && len(replayable) > 0:
			p := pick(rnd, replayable)
			o.kind, o.replay = "replay", &p
			return o
		case k >= 98 && len(replayable) > 0:
			p := pick(rnd, replayable)
			o.kind, o.replay = "reuse", &p // the same key with another body
			return o
		}
	}
}

// request is the op's HTTP request.
func (w *modelWorld) request(o modelOp) (method, path string, body any, headers []string) {
	keyed := append(slices.Clone(w.owner), "Idempotency-Key", o.key)
	switch o.kind {
	case "sale":
		return http.MethodPost, "/api/v1/track/sale", map[string]any{"transaction_id": o.txn, "amount_cents": o.amount,
			"currency": o.currency, "customer_key": w.customers[o.partner]}, apitest.Bearer(w.r.APIKey)
	case "refund":
		b := map[string]any{"transaction_id": o.txn}
		if o.amount > 0 {
			b["refund_amount_cents"] = o.amount
		}
		return http.MethodPost, "/api/v1/track/refund", b, apitest.Bearer(w.r.APIKey)
	case "approve":
		if o.release {
			return http.MethodPost, commission(o.ids[0]) + "/approve", map[string]any{"release_hold": true}, keyed
		}
		return http.MethodPost, commission(o.ids[0]) + "/approve", nil, keyed
	case "approve-many":
		b := map[string]any{"ids": o.ids}
		if o.release {
			b["release_hold"] = true
		}
		return http.MethodPost, w.base + "/commissions/approve", b, keyed
	case "reject":
		return http.MethodPost, commission(o.ids[0]) + "/reject", map[string]any{"reason": o.text}, keyed
	case "payouts":
		b := map[string]any{}
		if o.currency != "" {
			b["currency"] = o.currency
		}
		return http.MethodPost, w.base + "/payouts", b, keyed
	case "paid":
		return http.MethodPost, payout(o.ids[0]) + "/paid", map[string]any{"external_reference": o.text}, keyed
	case "failed":
		return http.MethodPost, payout(o.ids[0]) + "/failed", map[string]any{"reason": o.text}, keyed
	case "replay":
		return o.replay.method, o.replay.path, o.replay.body, append(slices.Clone(w.owner), "Idempotency-Key", o.replay.key)
	case "reuse":
		// Another body on the payouts route (a run of another currency than a replayed run's).
		currency := "EUR"
		if b, ok := o.replay.body.(map[string]any); ok && b["currency"] == "EUR" {
			currency = "USD"
		}
		return http.MethodPost, w.base + "/payouts", map[string]any{"currency": currency}, append(slices.Clone(w.owner), "Idempotency-Key", o.replay.key)
	}
	panic("unknown op " + o.kind)
}

// answer is the part of an answer the model predicts, and the ids it takes from it.
type answer struct {
	Success    bool   `json:"success"`
	Status     string `json:"status"`
	Commission *struct {
		ID       int64  `json:"id"`
		Amount   int64  `json:"amount_cents"`
		Reversed int64  `json:"reversed_amount_cents"`
		Status   string `json:"status"`
		Clawback int64  `json:"clawback_cents"`
	} `json:"commission"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Data json.RawMessage `json:"data"`
}

type wireCommission struct {
	ID       int64  `json:"id"`
	Partner  int64  `json:"partner_id"`
	Currency string `json:"currency"`
	Amount   int64  `json:"amount_cents"`
	Reversed int64  `json:"reversed_amount_cents"`
	Payable  int64  `json:"payable_cents"`
	Status   string `json:"status"`
	Payout   *int64 `json:"payout_id"`
	Clawback int64  `json:"clawback_cents"`
}

type wirePayout struct {
	ID        int64   `json:"id"`
	Partner   int64   `json:"partner_id"`
	Currency  string  `json:"currency"`
	Amount    int64   `json:"amount_cents"`
	Count     int     `json:"commission_count"`
	Clawback  int64   `json:"clawback_cents"`
	Status    string  `json:"status"`
	Reference *string `json:"external_reference"`
}

func (p wirePayout) summary() string {
	return fmt.Sprintf("%d/%s %d of %d netting %d", p.Partner, p.Currency, p.Amount, p.Count, p.Clawback)
}

// observe reads an answer as the model predicts it.
func (w *modelWorld) observe(o modelOp, status int, body []byte) observed {
	ob := observed{status: status, body: body}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		ob.summary = fmt.Sprintf("%d unreadable: %s", status, body)
		return ob
	}
	switch {
	case o.kind == "replay":
		ob.summary = "the first answer"
		if status != o.replay.status || !bytes.Equal(body, o.replay.answer) {
			ob.summary = fmt.Sprintf("%d %s, not the first answer %d %s", status, body, o.replay.status, o.replay.answer)
		}
	case a.Error != nil:
		ob.summary = fmt.Sprintf("%d %s", status, a.Error.Message)
	case o.kind == "sale" && a.Commission != nil:
		ob.summary = fmt.Sprintf("%d commission %d %s", status, a.Commission.Amount, a.Commission.Status)
		ob.ids = []int64{a.Commission.ID}
	case o.kind == "refund" && a.Status == "skipped":
		ob.summary = fmt.Sprintf("%d skipped", status)
	case o.kind == "refund" && a.Commission != nil:
		ob.summary = fmt.Sprintf("%d %s: commission %s, reversed %d, clawed back %d", status, a.Status, a.Commission.Status,
			a.Commission.Reversed, a.Commission.Clawback)
	case o.kind == "approve" || o.kind == "reject":
		var c wireCommission
		decodeInto(w.t, a.Data, &c)
		ob.summary = fmt.Sprintf("%d %s, payable %d", status, c.Status, c.Payable)
	case o.kind == "approve-many":
		var cs []wireCommission
		decodeInto(w.t, a.Data, &cs)
		ob.summary = fmt.Sprint(status)
		for _, c := range cs {
			ob.summary += fmt.Sprintf(" %d %s", c.ID, c.Status)
		}
	case o.kind == "payouts":
		var ps []wirePayout
		decodeInto(w.t, a.Data, &ps)
		ob.summary = fmt.Sprint(status)
		for _, p := range ps {
			ob.summary += "; " + p.summary()
			ob.ids = append(ob.ids, p.ID)
		}
	case o.kind == "paid" || o.kind == "failed":
		var p wirePayout
		decodeInto(w.t, a.Data, &p)
		ob.summary = fmt.Sprintf("%d %s", status, p.Status)
		if p.Reference != nil {
			ob.summary += " " + *p.Reference
		}
	default:
		ob.summary = fmt.Sprintf("%d %s", status, body)
	}
	return ob
}

func conflictAnswer(format string, args ...any) string { return "409 " + fmt.Sprintf(format, args...) }

// unchangeable is the 409 of a change to a commission in status, or "".
func unchangeable(id int64, status string) string {
	switch status {
	case "in_payout":
		return conflictAnswer("Commission %d is in a payout", id)
	case "paid":
		return conflictAnswer("Commission %d is paid", id)
	case "rejected":
		return conflictAnswer("Commission %d is rejected", id)
	}
	return ""
}

// apply runs o on s as docs/rules.md#the-ledger-and-payouts says, and returns the answer it predicts; ob
// gives the ids the server chose (a new commission's, new payouts').
func (s *ledgerState) apply(o modelOp, ob observed) string {
	switch o.kind {
	case "sale":
		if len(ob.ids) != 1 {
			return "a sale with its commission"
		}
		c := &mCommission{id: ob.ids[0], partner: o.partner, currency: o.currency, status: "pending",
			amount: roundHalfAway(o.amount*s.rateTenth, 1000), availableTick: s.tick + 2*s.hold,
			availableOn: s.now.AddDate(0, 0, s.hold)}
		s.commissions[c.id] = c
		s.ids = append(s.ids, c.id)
		s.sales[o.txn] = &mSale{txn: o.txn, amount: o.amount, commission: c.id}
		s.txns = append(s.txns, o.txn)
		return fmt.Sprintf("200 commission %d %s", c.amount, s.status(c))
	case "refund":
		sale := s.sales[o.txn]
		left := sale.amount - sale.refunded
		switch {
		case left == 0:
			return "200 skipped"
		case o.amount > left:
			return fmt.Sprintf("400 refund_amount_cents must be at most %d, the amount not yet refunded", left)
		}
		total, status := sale.amount, "reversed"
		if o.amount > 0 && o.amount < left {
			total, status = sale.refunded+o.amount, "refunded"
		}
		s.refund(sale, total)
		c := s.commissions[sale.commission]
		return fmt.Sprintf("200 %s: commission %s, reversed %d, clawed back %d", status, s.status(c), c.reversed, c.clawback)
	case "approve", "approve-many":
		ids := slices.Sorted(slices.Values(o.ids))
		for _, id := range ids {
			c := s.commissions[id]
			if a := unchangeable(id, s.status(c)); a != "" {
				return a
			}
			if c.status == "reversed" {
				return conflictAnswer("Commission %d is reversed: nothing is payable", id)
			}
			if c.status != "approved" && s.tick < c.availableTick && !o.release {
				return conflictAnswer("Commission %d is in its hold until %s; approve it then, or release it early", id,
					c.availableOn.UTC().Format(time.RFC3339))
			}
		}
		answer := "200"
		for _, id := range o.ids {
			c := s.commissions[id]
			if c.status != "approved" && s.tick < c.availableTick {
				c.released = true
			}
			c.status = "approved"
			if o.kind == "approve" {
				return fmt.Sprintf("200 approved, payable %d", c.amount-c.reversed)
			}
			answer += fmt.Sprintf(" %d approved", id)
		}
		return answer
	case "reject":
		id := o.ids[0]
		c := s.commissions[id]
		if a := unchangeable(id, s.status(c)); a != "" {
			return a
		}
		if c.hasClawbackEntries {
			return conflictAnswer("Commission %d has clawbacks from a payout that failed: it can no longer be rejected", id)
		}
		c.status = "rejected"
		return "200 rejected, payable 0"
	case "payouts":
		return s.payoutRun(o.currency, ob.ids)
	case "paid":
		p := s.payouts[o.ids[0]]
		switch p.status {
		case "paid":
			if p.reference == o.text {
				return "200 paid " + p.reference
			}
			return conflictAnswer("Payout %d is already paid with another external_reference", p.id)
		case "failed":
			return conflictAnswer("Payout %d has failed", p.id)
		}
		p.status, p.reference = "paid", o.text
		for _, id := range p.commissions {
			s.commissions[id].status = "paid"
		}
		return "200 paid " + p.reference
	case "failed":
		p := s.payouts[o.ids[0]]
		switch p.status {
		case "paid":
			return conflictAnswer("Payout %d is paid", p.id)
		case "failed":
			return conflictAnswer("Payout %d has already failed", p.id)
		}
		p.status = "failed"
		for _, id := range p.commissions {
			c := s.commissions[id]
			c.status, c.payout = "approved", 0
		}
		for _, i := range p.clawbacks {
			s.clawbacks[i].payout = 0
		}
		ref := ""
		if p.reference != "" {
			ref = " " + p.reference
		}
		return "200 failed" + ref
	case "replay":
		return "the first answer"
	case "reuse":
		return "409 Idempotency-Key reused with a different request"
	}
	return "an op the model does not know: " + o.kind
}

// payoutRun is a payout run (of currency only, when not ""): a payout per partner and currency whose
// approved total less the clawbacks owed is positive and at least the minimum; ids are the new payouts' ids.
func (s *ledgerState) payoutRun(currency string, ids []int64) string {
	type group struct {
		partner     int64
		currency    string
		commissions []int64
		clawbacks   []int
		gross, owed int64
	}
	groups := map[string]*group{}
	at := func(partner int64, cur string) *group {
		k := fmt.Sprintf("%020d/%s", partner, cur)
		if groups[k] == nil {
			groups[k] = &group{partner: partner, currency: cur}
		}
		return groups[k]
	}
	for _, id := range s.ids {
		// Approved, its hold ended or released.
		if c := s.commissions[id]; s.status(c) == "approved" && (s.tick >= c.availableTick || c.released) &&
			(currency == "" || c.currency == currency) {
			g := at(c.partner, c.currency)
			g.commissions, g.gross = append(g.commissions, id), g.gross+c.amount-c.reversed
		}
	}
	for i, k := range s.clawbacks {
		if k.payout == 0 && (currency == "" || k.currency == currency) {
			g := at(k.partner, k.currency)
			g.clawbacks, g.owed = append(g.clawbacks, i), g.owed+k.amount
		}
	}
	answer := "201"
	n := 0
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		g := groups[key]
		net := g.gross - g.owed
		if len(g.commissions) == 0 || net <= 0 || net < s.minimum {
			continue
		}
		if n >= len(ids) {
			return answer + "; more payouts than the answer has"
		}
		p := &mPayout{id: ids[n], partner: g.partner, currency: g.currency, gross: g.gross, clawback: g.owed, amount: net,
			count: len(g.commissions), status: "processing", commissions: g.commissions, clawbacks: g.clawbacks}
		n++
		s.payouts[p.id] = p
		s.payoutIDs = append(s.payoutIDs, p.id)
		for _, id := range g.commissions {
			c := s.commissions[id]
			c.status, c.payout = "in_payout", p.id
		}
		for _, i := range g.clawbacks {
			s.clawbacks[i].payout = p.id
		}
		answer += "; " + wirePayout{Partner: p.partner, Currency: p.currency, Amount: p.amount, Count: p.count, Clawback: p.clawback}.summary()
	}
	return answer
}

// --- A batch ------------------------------------------------------------------------------------------

// batch sends one to four random requests at once (or moves the clock half a day), finds an order of them
// that the model answers as the server did, and checks the server's ledger against the model's. It
// returns the number of requests sent.
func (w *modelWorld) batch() int {
	w.t.Helper()
	if w.state.hold > 0 && w.rnd.IntN(12) == 0 {
		w.clock.Advance(12 * time.Hour)
		w.state.tick++
		w.state.now = w.clock.Now()
		w.trail = append(w.trail, "the clock moves half a day")
		w.check()
		return 0
	}
	ops := make([]modelOp, 1+w.rnd.IntN(4))
	for i := range ops {
		ops[i] = w.next()
	}
	obs := make([]observed, len(ops))
	var wg sync.WaitGroup
	for i, o := range ops {
		method, path, body, headers := w.request(o)
		req := w.env.NewRequest(method, path, body, headers...)
		wg.Go(func() {
			res, err := w.env.Exchange(req)
			if err != nil {
				obs[i] = observed{summary: "no answer: " + err.Error()}
				return
			}
			obs[i] = w.observe(o, res.Status, res.Body)
		})
	}
	wg.Wait()
	line := make([]string, len(ops))
	for i, o := range ops {
		line[i] = fmt.Sprintf("%s %s %v %d %q → %s", o.kind, o.txn, o.ids, o.amount, o.text, obs[i].summary)
	}
	w.trail = append(w.trail, strings.Join(line, " ‖ "))
	next, order, ok := w.linearize(ops, obs)
	if !ok {
		w.fail("no order of the batch's requests answers as the server did")
		return len(ops)
	}
	w.state = next
	for i, o := range ops {
		detail := ""
		switch {
		case o.kind == "refund" && (strings.Contains(obs[i].summary, "commission in_payout") || strings.Contains(obs[i].summary, "commission paid")):
			detail = "after payment"
		case o.kind == "payouts" && strings.Contains(obs[i].summary, "netting") && !strings.Contains(obs[i].summary, "netting 0"):
			detail = "netting clawbacks"
		case o.kind == "payouts" && obs[i].summary == "201":
			detail = "none due"
		}
		w.tally.add(o.kind, obs[i].status, detail, i == len(ops)-1 && !slices.IsSorted(order))
	}
	for i, o := range ops {
		if o.kind != "sale" && o.kind != "refund" && o.kind != "replay" && o.kind != "reuse" && obs[i].status/100 == 2 {
			method, path, body, _ := w.request(o)
			w.sent = append(w.sent, sentPost{method: method, path: path, key: o.key, body: body, status: obs[i].status,
				answer: obs[i].body, tick: o.tick})
		}
	}
	w.check()
	return len(ops)
}

// linearize tries every order of the batch on a copy of the model; the first whose answers are the
// server's is the new model.
func (w *modelWorld) linearize(ops []modelOp, obs []observed) (*ledgerState, []int, bool) {
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	var try func(k int) (*ledgerState, bool)
	try = func(k int) (*ledgerState, bool) {
		if k == len(order) {
			s := w.state.clone()
			for _, i := range order {
				if got := s.apply(ops[i], obs[i]); got != obs[i].summary {
					return nil, false
				}
			}
			return s, true
		}
		for i := k; i < len(order); i++ {
			order[k], order[i] = order[i], order[k]
			if s, ok := try(k + 1); ok {
				return s, true
			}
			order[k], order[i] = order[i], order[k]
		}
		return nil, false
	}
	s, ok := try(0)
	return s, order, ok
}

// check compares the server's balances, commissions and payouts with the model's, and the balances with
// the rows (the conservation equation).
func (w *modelWorld) check() {
	w.t.Helper()
	s := w.state
	got := map[string]balance{}
	var bs struct {
		Data []struct {
			Partner  int64  `json:"partner_id"`
			Currency string `json:"currency"`
			Pending  int64  `json:"pending_cents"`
			Approved int64  `json:"approved_cents"`
			InPayout int64  `json:"in_payout_cents"`
			Paid     int64  `json:"paid_cents"`
			Owed     int64  `json:"clawback_owed_cents"`
		}
	}
	decodeInto(w.t, w.owned(http.StatusOK, http.MethodGet, w.base+"/balances", nil).Body, &bs)
	for _, b := range bs.Data {
		got[fmt.Sprintf("%d %s", b.Partner, b.Currency)] = balance{b.Pending, b.Approved, b.InPayout, b.Paid, b.Owed}
	}
	if want := s.balances(); !maps.Equal(got, want) {
		w.fail(fmt.Sprintf("balances %v, the model's %v", got, want))
		return
	}

	// Conservation, from the rows: payable of non-rejected, non-test commissions = the four buckets.
	for key, payable := range payableRows(w.t, w.env, w.r.ProgramID) {
		if b := got[key]; b[0]+b[1]+b[2]+b[3] != payable {
			w.fail(fmt.Sprintf("%s: buckets %v add up to %d, the rows' payable is %d", key, b, b[0]+b[1]+b[2]+b[3], payable))
			return
		}
	}

	cs, ok := listed(w, "commission", w.base+"/commissions?limit=100", len(s.ids),
		func(c wireCommission) bool { return s.commissions[c.ID] != nil })
	if !ok {
		return
	}
	for _, c := range cs {
		m := s.commissions[c.ID]
		payout := int64(0)
		if c.Payout != nil {
			payout = *c.Payout
		}
		want := wireCommission{ID: m.id, Partner: m.partner, Currency: m.currency, Amount: m.amount, Reversed: m.reversed,
			Payable: m.amount - m.reversed, Status: s.status(m), Clawback: m.clawback}
		if m.status == "rejected" {
			want.Payable = 0
		}
		c.Payout = nil
		if c != want || payout != m.payout {
			w.fail(fmt.Sprintf("commission %+v in payout %d, the model's %+v in payout %d", c, payout, want, m.payout))
			return
		}
	}
	ps, ok := listed(w, "payout", w.base+"/payouts?limit=100", len(s.payoutIDs),
		func(p wirePayout) bool { return s.payouts[p.ID] != nil })
	if !ok {
		return
	}
	for _, p := range ps {
		m := s.payouts[p.ID]
		ref := ""
		if p.Reference != nil {
			ref = *p.Reference
		}
		if p.summary()+" "+p.Status+" "+ref != fmt.Sprintf("%d/%s %d of %d netting %d %s %s", m.partner, m.currency, m.amount, m.count, m.clawback, m.status, m.reference) {
			w.fail(fmt.Sprintf("payout %+v, the model's %+v", p, *m))
			return
		}
	}
}

// listed reads every page of a list of what (commissions, payouts) and checks that it has as many items
// as the model, each of them the model's (known); false when not, reported.
func listed[T any](w *modelWorld, what, path string, want int, known func(T) bool) ([]T, bool) {
	w.t.Helper()
	var items []T
	w.pages(path, &items)
	if len(items) != want {
		w.fail(fmt.Sprintf("%d %ss listed, the model has %d", len(items), what, want))
		return nil, false
	}
	for _, it := range items {
		if !known(it) {
			w.fail(fmt.Sprintf("a %s listed is not the model's: %+v", what, it))
			return nil, false
		}
	}
	return items, true
}

// pages reads every page of a list into out.
func (w *modelWorld) pages(path string, out any) {
	w.t.Helper()
	var all []json.RawMessage
	for next := path; next != ""; {
		var page struct {
			Data []json.RawMessage
			Meta struct {
				NextCursor *string `json:"next_cursor"`
			}
		}
		decodeInto(w.t, w.owned(http.StatusOK, http.MethodGet, next, nil).Body, &page)
		all = append(all, page.Data...)
		next = ""
		if page.Meta.NextCursor != nil {
			next = path + "&cursor=" + urlQuery(*page.Meta.NextCursor)
		}
	}
	b, _ := json.Marshal(all)
	decodeInto(w.t, b, out)
}

// fail reports what went wrong with the world's trail of batches, the last ones first in mind.
func (w *modelWorld) fail(what string) {
	w.t.Helper()
	trail := w.trail
	if len(trail) > 40 {
		trail = append([]string{"…"}, trail[len(trail)-40:]...)
	}
	w.t.Errorf("%s: %s\nbatches (request → answer):\n%s", w.name, what, strings.Join(trail, "\n"))
}
