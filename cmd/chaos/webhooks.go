package main

// The webhook part of the run: real HTTP receivers in this process, one per watched program, registered as
// the programs' endpoints before the load; they go down (listener closed: connection refused) or answer
// 503 for a while during the load, then come back on the same port. After the load the run waits for
// every delivery to end, then checks that every acknowledged sale of a watched program reached its
// program's receiver, that no receiver got another program's event, that every signature verifies with
// the Standard Webhooks library, and counts duplicates (a webhook-id received more than once).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// leaseGap tells a duplicate after a lease ran out (the first attempt's replica was killed, or could not
// record it): the worker's lease is 60 s, so the second receipt comes at least about that long after the
// first. A duplicate closer than this has no such explanation.
const leaseGap = 50 * time.Second

// receipt is one request a receiver processed (answered 2xx).
type receipt struct {
	webhookID, typ string
	tx             string // a sale.created's processor_event_id (the sale's transaction_id)
	program        int    // the program index the event's content names; -1: none
	at             time.Time
}

// receiver is one program's endpoint: a real HTTP server on a fixed port of this machine.
type receiver struct {
	index      int // the program's index in progs
	programID  int64
	endpointID int64
	addr       string
	wh         *standardwebhooks.Webhook
	hooks      *hooks

	mu     sync.Mutex
	srv    *http.Server
	got    []receipt
	badSig []string

	unavailable atomic.Bool  // answering 503
	inflight    atomic.Int64 // requests being handled
	answered503 atomic.Int64
}

func (r *receiver) url() string { return "http://" + r.addr + "/hook" }

// listen starts serving on r.addr (a free port the first time, the same port afterwards).
func (r *receiver) listen() error {
	var ln net.Listener
	var err error
	for try := 0; try < 50; try++ { // the port was ours a moment ago; a connection in TIME_WAIT does not hold it
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("receiver of program %d: %w", r.programID, err)
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	r.mu.Lock()
	r.addr, r.srv = ln.Addr().String(), srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// refuse closes the listener: connections are refused until listen. Requests being handled finish and are
// answered (Shutdown), so no event is processed without its answer reaching the worker.
func (r *receiver) refuse() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
}

func (r *receiver) close() {
	r.mu.Lock()
	srv := r.srv
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.inflight.Add(1)
	defer r.inflight.Add(-1)
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.unavailable.Load() {
		r.answered503.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	// A brand's handler takes some time: attempts are in flight when reftrackd is killed.
	time.Sleep(time.Duration(10+rand.IntN(50)) * time.Millisecond)
	id := req.Header.Get("webhook-id")
	if err := r.wh.Verify(body, req.Header); err != nil {
		r.mu.Lock()
		r.badSig = append(r.badSig, fmt.Sprintf("%s: %v", id, err))
		r.mu.Unlock()
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	rc := receipt{webhookID: id, program: -1, at: time.Now()}
	if err := json.Unmarshal(body, &ev); err == nil {
		rc.typ, rc.program = ev.Type, r.hooks.programOf(ev.Data)
		if ev.Type == "sale.created" {
			rc.tx, _ = ev.Data["processor_event_id"].(string)
		}
	}
	r.mu.Lock()
	r.got = append(r.got, rc)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) receipts() []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// hooks is the run's receivers and what is needed to check them.
type hooks struct {
	list     []*receiver
	byIndex  map[int]*receiver
	outages  []*outage
	groups   int
	programs int

	mu      sync.Mutex
	indexOf map[int64]int // program id → index, every seeded program
}

// outage is one group of receivers down for a while.
type outage struct {
	group          int
	refused, n503  int // receivers refusing connections, answering 503
	down, up       time.Time
	endpoints      []int64
	refusedRecv    []*receiver
	unavailableRcv []*receiver
}

// newHooks chooses the watched programs: n of them, spread evenly over the programs.
func newHooks(programs, n, groups int) *hooks {
	h := &hooks{byIndex: map[int]*receiver{}, groups: groups, programs: programs, indexOf: map[int64]int{}}
	if n <= 0 {
		return h
	}
	n = min(n, programs)
	for k := range n {
		h.byIndex[k*programs/n] = nil
	}
	return h
}

func (h *hooks) watched(i int) bool { _, ok := h.byIndex[i]; return ok }

// seeded notes program i's id (a commission's event names its program by id).
func (h *hooks) seeded(i int, programID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.indexOf[programID] = i
}

// programOf reads which program an event belongs to from its content alone: a sale's transaction id
// (chaos-N is sold for program N mod programs), a lead's customer key (chaos-customer-i), or the
// program_id a commission carries. -1 when the content does not tell.
func (h *hooks) programOf(data map[string]any) int {
	if tx, ok := data["processor_event_id"].(string); ok && strings.HasPrefix(tx, "chaos-") {
		if n, err := strconv.ParseUint(strings.TrimPrefix(tx, "chaos-"), 10, 64); err == nil {
			return int(n % uint64(h.programs))
		}
	}
	if c, ok := data["customer_key"].(string); ok && strings.HasPrefix(c, "chaos-customer-") {
		if i, err := strconv.Atoi(strings.TrimPrefix(c, "chaos-customer-")); err == nil {
			return i
		}
	}
	if id, ok := data["program_id"].(float64); ok {
		h.mu.Lock()
		defer h.mu.Unlock()
		if i, ok := h.indexOf[int64(id)]; ok {
			return i
		}
	}
	return -1
}

// register starts program i's receiver and registers it as the program's endpoint with the account token.
func (h *hooks) register(ctx context.Context, client *http.Client, base string, i int, programID int64, accountToken string) error {
	r := &receiver{index: i, programID: programID, addr: "127.0.0.1:0", hooks: h}
	if err := r.listen(); err != nil {
		return err
	}
	h.list = append(h.list, r)
	h.byIndex[i] = r
	var out struct {
		Data struct {
			ID     int64  `json:"id"`
			Secret string `json:"secret"`
		} `json:"data"`
	}
	status, err := post(ctx, client, fmt.Sprintf("%s/api/v1/programs/%d/webhook-endpoints", base, programID),
		fmt.Sprintf(`{"url":%q}`, r.url()), map[string]string{"Authorization": "Bearer " + accountToken}, &out)
	if err != nil || status != http.StatusCreated {
		return fmt.Errorf("register the endpoint of program %d: %d %v", programID, status, err)
	}
	r.endpointID = out.Data.ID
	if r.wh, err = standardwebhooks.NewWebhook(out.Data.Secret); err != nil {
		return fmt.Errorf("the secret of endpoint %d: %w", r.endpointID, err)
	}
	return nil
}

func (h *hooks) close() {
	for _, r := range h.list {
		r.close()
	}
}

// inflight is how many requests the receivers are handling now.
func (h *hooks) inflight() int64 {
	var n int64
	for _, r := range h.list {
		n += r.inflight.Load()
	}
	return n
}

// takeDown takes group g of the receivers down for d: half of them close their listener (connection
// refused), the others answer 503; then each comes back on its port.
func (h *hooks) takeDown(ctx context.Context, g int, d time.Duration, say func(string, ...any)) error {
	o := &outage{group: g, down: time.Now()}
	h.outages = append(h.outages, o)
	var members []*receiver
	for k, r := range h.list {
		if k%h.groups == g {
			members = append(members, r)
		}
	}
	for k, r := range members {
		o.endpoints = append(o.endpoints, r.endpointID)
		if k%2 == 0 {
			o.refusedRecv = append(o.refusedRecv, r)
		} else {
			o.unavailableRcv = append(o.unavailableRcv, r)
		}
	}
	o.refused, o.n503 = len(o.refusedRecv), len(o.unavailableRcv)
	for _, r := range o.unavailableRcv {
		r.unavailable.Store(true)
	}
	for _, r := range o.refusedRecv {
		r.refuse()
	}
	say("receivers of group %d down: %d refuse connections, %d answer 503", g, o.refused, o.n503)
	sleepUntil(ctx, o.down.Add(d))
	var errs []error
	for _, r := range o.refusedRecv {
		errs = append(errs, r.listen())
	}
	for _, r := range o.unavailableRcv {
		r.unavailable.Store(false)
	}
	o.up = time.Now()
	say("receivers of group %d back", g)
	return errors.Join(errs...)
}

// drain waits until every event has been picked up by a worker (fanned out to its endpoints) and no
// delivery is pending any more (or until the deadline), and returns when that was.
func (h *hooks) drain(ctx context.Context, pool *sqlx.DB, deadline time.Time) (time.Time, bool, error) {
	for {
		var pending int
		if err := pool.GetContext(ctx, &pending, `SELECT (SELECT count(*) FROM webhook_events WHERE data IS NULL)
				+ (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')`); err != nil {
			return time.Time{}, false, err
		}
		if pending == 0 {
			return time.Now(), true, nil
		}
		if time.Now().After(deadline) {
			return time.Now(), false, nil
		}
		if !sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
			return time.Time{}, false, ctx.Err()
		}
	}
}

// check compares what the receivers got with the acknowledged sales and the database, prints the report
// and returns the problems that fail the run.
func (h *hooks) check(ctx context.Context, pool *sqlx.DB, sales *tally, saleBase int64, loadEnd, drained time.Time, done bool,
	kill killSnapshot, serverLog string, start time.Time) ([]string, error) {
	var problems []string
	fail := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }

	// What the receivers got, by webhook-id.
	type got struct {
		receiver *receiver
		times    []time.Time
	}
	byID := map[string]*got{}
	received, crossProgram, unattributable, badSig, twoReceivers := 0, 0, 0, 0, 0
	saleReceived := map[string]bool{} // transaction ids whose sale.created reached their program's receiver
	byType := map[string]int{}
	var answered503 int64
	for _, r := range h.list {
		answered503 += r.answered503.Load()
		r.mu.Lock()
		badSig += len(r.badSig)
		for _, s := range r.badSig {
			fail("receiver of program %d refused a signature: %s", r.programID, s)
		}
		r.mu.Unlock()
		for _, rc := range r.receipts() {
			received++
			byType[rc.typ]++
			g := byID[rc.webhookID]
			if g == nil {
				g = &got{receiver: r}
				byID[rc.webhookID] = g
			} else if g.receiver != r {
				twoReceivers++ // one delivery is one endpoint's
			}
			g.times = append(g.times, rc.at)
			switch {
			case rc.program < 0:
				unattributable++
			case rc.program != r.index:
				crossProgram++
			}
		}
	}
	// The acknowledged sales of watched programs, and whether each arrived at its program's receiver.
	ackedWatched, lost := 0, 0
	txByReceiver := map[*receiver]map[string]bool{}
	for _, r := range h.list {
		txByReceiver[r] = map[string]bool{}
		for _, rc := range r.receipts() {
			if rc.typ == "sale.created" && rc.tx != "" {
				txByReceiver[r][rc.tx] = true
			}
		}
	}
	var lostSample []string
	for _, tx := range sales.ids() {
		n, err := strconv.ParseUint(strings.TrimPrefix(tx, "chaos-"), 10, 64)
		if err != nil {
			continue
		}
		r := h.byIndex[int(n%uint64(h.programs))]
		if r == nil {
			continue
		}
		ackedWatched++
		if txByReceiver[r][tx] {
			saleReceived[tx] = true
		} else {
			lost++
			if len(lostSample) < 10 {
				lostSample = append(lostSample, tx)
			}
		}
	}
	if lost > 0 {
		fail("%d acknowledged sales never reached their program's receiver (e.g. %s)", lost, strings.Join(lostSample, ", "))
	}
	if crossProgram > 0 {
		fail("%d deliveries reached the receiver of another program", crossProgram)
	}
	if unattributable > 0 {
		fail("%d deliveries whose content names no program (cannot be checked)", unattributable)
	}

	// Duplicates: a webhook-id processed more than once.
	dupIDs, dupExtra, dupLease, dupOther := 0, 0, 0, 0
	var dupOtherSample []string
	for id, g := range byID {
		if len(g.times) < 2 {
			continue
		}
		dupIDs++
		dupExtra += len(g.times) - 1
		slices.SortFunc(g.times, func(a, b time.Time) int { return a.Compare(b) })
		lease := true
		for k := 1; k < len(g.times); k++ {
			if g.times[k].Sub(g.times[k-1]) < leaseGap {
				lease = false
			}
		}
		if lease {
			dupLease++
		} else {
			dupOther++
			if len(dupOtherSample) < 10 {
				dupOtherSample = append(dupOtherSample, fmt.Sprintf("%s at %s", id, g.times[0].Sub(start).Round(time.Millisecond)))
			}
		}
	}

	// The database's side: deliveries by status, attempts by outcome, and both sides agreeing.
	var st struct {
		Events, Deliveries, Succeeded, Pending, Failed                        int
		Attempts, AttemptsOK, Attempts503, AttemptsOtherStatus, AttemptsError int
		MaxAttempts                                                           int
		LateFirst                                                             int
		SalesWithoutEvent                                                     int
	}
	watchedIDs := make([]int64, 0, len(h.list))
	for _, r := range h.list {
		watchedIDs = append(watchedIDs, r.programID)
	}
	if err := pool.GetContext(ctx, &st.Events, `SELECT count(*) FROM webhook_events`); err != nil {
		return nil, err
	}
	if err := pool.QueryRowxContext(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'succeeded'),
		count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'failed') FROM webhook_deliveries`).
		Scan(&st.Deliveries, &st.Succeeded, &st.Pending, &st.Failed); err != nil {
		return nil, err
	}
	if err := pool.QueryRowxContext(ctx, `SELECT count(*), count(*) FILTER (WHERE succeeded),
		count(*) FILTER (WHERE response_status = 503), count(*) FILTER (WHERE NOT succeeded AND response_status IS NOT NULL AND response_status <> 503),
		count(*) FILTER (WHERE response_status IS NULL) FROM webhook_attempts`).
		Scan(&st.Attempts, &st.AttemptsOK, &st.Attempts503, &st.AttemptsOtherStatus, &st.AttemptsError); err != nil {
		return nil, err
	}
	if err := pool.GetContext(ctx, &st.MaxAttempts, `SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM webhook_attempts GROUP BY delivery_id) x`); err != nil {
		return nil, err
	}
	// A delivery whose first recorded attempt came long after its event: its first attempt was lost with
	// its lease (killed or not recorded) and made again once the lease ran out.
	if err := pool.GetContext(ctx, &st.LateFirst, `SELECT count(*) FROM webhook_deliveries d
		WHERE (SELECT min(a.attempted_at) FROM webhook_attempts a WHERE a.delivery_id = d.id) > d.created_at + interval '50 seconds'`); err != nil {
		return nil, err
	}
	// The outbox itself: every sale of a watched program stored during the load has its sale.created event.
	if err := pool.GetContext(ctx, &st.SalesWithoutEvent, `SELECT count(*) FROM sales s WHERE s.id > $1 AND s.program_id = ANY($2)
		AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.type = 'sale.created' AND e.program_id = s.program_id AND e.data->>'id' = s.id::text)`,
		saleBase, pq.Array(watchedIDs)); err != nil {
		return nil, err
	}
	if st.SalesWithoutEvent > 0 {
		fail("%d stored sales of watched programs have no sale.created event", st.SalesWithoutEvent)
	}
	// Both sides agree: every delivery the database marks succeeded was processed by its receiver, and
	// every webhook-id a receiver processed is a delivery to that receiver's endpoint.
	var succeededIDs []struct {
		WebhookID  string `db:"webhook_id"`
		EndpointID int64  `db:"endpoint_id"`
		Status     string `db:"status"`
	}
	if err := pool.SelectContext(ctx, &succeededIDs, `SELECT webhook_id, endpoint_id, status FROM webhook_deliveries`); err != nil {
		return nil, err
	}
	known := map[string]int64{}
	notReceived := 0
	for _, d := range succeededIDs {
		known[d.WebhookID] = d.EndpointID
		if d.Status == "succeeded" && byID[d.WebhookID] == nil {
			notReceived++
		}
	}
	wrongEndpoint := twoReceivers
	for id, g := range byID {
		if ep, ok := known[id]; !ok || ep != g.receiver.endpointID {
			wrongEndpoint++
		}
	}
	if notReceived > 0 {
		fail("%d deliveries are marked succeeded but their receiver never processed them", notReceived)
	}
	if wrongEndpoint > 0 {
		fail("%d webhook-ids received are not deliveries to that receiver's endpoint", wrongEndpoint)
	}
	if !done {
		fail("%d deliveries still pending %s after the load (waited up to the -drain bound)", st.Pending, drained.Sub(loadEnd).Round(time.Millisecond))
	}
	if st.Failed > 0 {
		fail("%d deliveries failed for good", st.Failed)
	}

	// The replica's own account: its warnings and errors (an attempt it could not record, a claim that
	// failed), by message.
	warnings := logSummary(serverLog)

	fmt.Println("| webhooks | |")
	fmt.Println("|---|---:|")
	row := func(k string, v any) { fmt.Printf("| %s | %v |\n", k, v) }
	row("receivers (watched programs)", fmt.Sprintf("%d of %d", len(h.list), h.programs))
	row("acknowledged sales of watched programs", ackedWatched)
	row("… whose sale.created reached their receiver", len(saleReceived))
	row("lost (acknowledged, never received)", lost)
	row("events written (all types)", st.Events)
	row("deliveries: succeeded / pending / failed", fmt.Sprintf("%d: %d / %d / %d", st.Deliveries, st.Succeeded, st.Pending, st.Failed))
	row("requests processed by the receivers (2xx)", fmt.Sprintf("%d (%s)", received, typeCounts(byType)))
	row("distinct webhook-ids processed", len(byID))
	row("duplicates: webhook-ids processed more than once (extra receipts)", fmt.Sprintf("%d (%d)", dupIDs, dupExtra))
	row("… of which after a lease ran out (receipts ≥ 50 s apart)", dupLease)
	row("… of which unexplained", dupOther)
	row("deliveries first attempted > 50 s after their event (lease ran out)", st.LateFirst)
	row("deliveries leased just before the SIGKILL / attempts in flight at the receivers at it", fmt.Sprintf("%d / %d", kill.leased, kill.inflight))
	row("signatures verified (Standard Webhooks library) / refused", fmt.Sprintf("%d / %d", received, badSig))
	row("cross-program deliveries", crossProgram)
	row("attempts: succeeded / 503 / other status / no answer", fmt.Sprintf("%d: %d / %d / %d / %d", st.Attempts, st.AttemptsOK, st.Attempts503, st.AttemptsOtherStatus, st.AttemptsError))
	row("503 answered by the receivers", answered503)
	row("most attempts of one delivery", st.MaxAttempts)
	if done {
		row("time to drain after the load", drained.Sub(loadEnd).Round(time.Millisecond))
	} else {
		row("time to drain after the load", "not drained within "+drained.Sub(loadEnd).Round(time.Second).String())
	}
	if dupOther > 0 {
		fmt.Println("\nunexplained duplicates (first receipt, from the start):", strings.Join(dupOtherSample, ", "))
	}
	if len(warnings) > 0 {
		fmt.Println("\nreftrackd's warnings and errors (whole run):")
		for _, k := range slices.Sorted(maps.Keys(warnings)) {
			fmt.Printf("  %d × %s\n", warnings[k], k)
		}
	}
	// Each duplicate's story: when its receiver processed it, and the attempts the database recorded.
	var dups []string
	for id, g := range byID {
		if len(g.times) > 1 {
			dups = append(dups, id)
		}
	}
	slices.Sort(dups)
	if len(dups) > 0 {
		fmt.Println("\nduplicates (times from the start of the load):")
	}
	for k, id := range dups {
		if k == 20 {
			fmt.Printf("  … and %d more\n", len(dups)-k)
			break
		}
		var times []string
		for _, t := range byID[id].times {
			times = append(times, t.Sub(start).Round(time.Millisecond).String())
		}
		var attempts []struct {
			At     time.Time `db:"attempted_at"`
			OK     bool      `db:"succeeded"`
			Status *int      `db:"response_status"`
			Error  *string   `db:"error"`
		}
		var created time.Time
		if err := pool.GetContext(ctx, &created, `SELECT created_at FROM webhook_deliveries WHERE webhook_id = $1`, id); err != nil {
			return nil, err
		}
		if err := pool.SelectContext(ctx, &attempts, `SELECT a.attempted_at, a.succeeded, a.response_status, a.error FROM webhook_attempts a
			JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1 ORDER BY a.attempted_at`, id); err != nil {
			return nil, err
		}
		var recorded []string
		for _, a := range attempts {
			what := "ok"
			switch {
			case a.Status != nil && !a.OK:
				what = strconv.Itoa(*a.Status)
			case a.Error != nil:
				what = "error"
			}
			recorded = append(recorded, fmt.Sprintf("%s %s", a.At.Sub(start).Round(time.Millisecond), what))
		}
		fmt.Printf("  %s: created %s, received %s; attempts recorded: %s\n", id, created.Sub(start).Round(time.Millisecond),
			strings.Join(times, ", "), strings.Join(recorded, ", "))
	}

	fmt.Println()
	fmt.Println("| receivers down | at | back | refusing / 503 | failed attempts while down: no answer / 503 | failed attempts outside the outages | their deliveries | all delivered, from back |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, o := range h.outages {
		var errs, s503, deliveries int
		var last *time.Time
		if err := pool.QueryRowxContext(ctx, `SELECT count(*) FILTER (WHERE a.response_status IS NULL), count(*) FILTER (WHERE a.response_status = 503),
			count(DISTINCT a.delivery_id) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE d.endpoint_id = ANY($1) AND NOT a.succeeded AND a.attempted_at BETWEEN $2 AND $3`,
			pq.Array(o.endpoints), o.down.Add(-time.Second), o.up.Add(time.Second)).Scan(&errs, &s503, &deliveries); err != nil {
			return nil, err
		}
		var outside int
		if err := pool.GetContext(ctx, &outside, `SELECT count(*) FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE d.endpoint_id = ANY($1) AND NOT a.succeeded AND a.attempted_at NOT BETWEEN $2 AND $3`,
			pq.Array(o.endpoints), o.down.Add(-time.Second), o.up.Add(time.Second)); err != nil {
			return nil, err
		}
		if err := pool.GetContext(ctx, &last, `SELECT max(a.attempted_at) FROM webhook_attempts a WHERE a.succeeded AND a.delivery_id IN (
			SELECT a2.delivery_id FROM webhook_attempts a2 JOIN webhook_deliveries d ON d.id = a2.delivery_id
			WHERE d.endpoint_id = ANY($1) AND NOT a2.succeeded AND a2.attempted_at BETWEEN $2 AND $3)`,
			pq.Array(o.endpoints), o.down.Add(-time.Second), o.up.Add(time.Second)); err != nil {
			return nil, err
		}
		back := "-"
		if last != nil {
			back = last.Sub(o.up).Round(time.Millisecond).String()
		}
		fmt.Printf("| group %d | %s | %s | %d / %d | %d / %d | %d | %d | %s |\n", o.group, o.down.Sub(start).Round(time.Millisecond),
			o.up.Sub(start).Round(time.Millisecond), o.refused, o.n503, errs, s503, outside, deliveries, back)
	}
	fmt.Println()
	return problems, nil
}

func typeCounts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// killSnapshot is the delivery work in flight when reftrackd was killed.
type killSnapshot struct {
	leased, inflight int64
}

// logSummary counts the WARN and ERROR lines of reftrackd's JSON log by message.
func logSummary(path string) map[string]int {
	out := map[string]int{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		var l struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || (l.Level != "WARN" && l.Level != "ERROR") {
			continue
		}
		out[l.Level+" "+l.Msg]++
	}
	return out
}
