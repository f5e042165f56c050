package localcluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reftrack/reftrack/pkg/platform/localcluster"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/sdk"
)

// leaseGap tells a duplicate that a lease explains: a delivery's lease is 60 s, so an attempt made again
// because the first one's replica died comes at least about that long after it.
const leaseGap = 50 * time.Second

// hookReceipt is one delivery a receiver processed (verified and answered 204).
type hookReceipt struct {
	endpointProgram int64  // the program whose endpoint URL it came to
	contentProgram  int64  // the program its content names (0: none)
	typ, key        string // type; the sale's transaction id or the lead's customer key
	replica         string // the replica that sent it (its socket's process); unknown: "?socket", "?process"
	at              time.Time
}

// hookReceiver is the brand's webhook endpoint for several programs (/hook/<program id>): it verifies each
// delivery with the Standard Webhooks library, takes 20-80 ms to process it, answers 204, and keeps what
// it got with the replica that sent it.
type hookReceiver struct {
	srv  *httptest.Server
	pids map[int]string // replica process → name, when the test began

	mu       sync.Mutex
	dead     map[int]string // a killed replica's sockets' local ports, noted just before the kill
	lookup   time.Duration  // the longest sender lookup
	verifier map[int64]*standardwebhooks.Webhook
	got      map[string][]hookReceipt // by webhook-id
	bad      []string
	inflight map[string]int // requests being processed, by replica
}

type replicaKey struct{}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	h := &hookReceiver{pids: map[int]string{}, dead: map[int]string{}, verifier: map[int64]*standardwebhooks.Webhook{}, got: map[string][]hookReceipt{},
		inflight: map[string]int{}}
	for _, r := range cluster.Replicas {
		if pid := r.Pid(); pid != 0 {
			h.pids[pid] = r.Name
		}
	}
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		began := time.Now()
		replica := h.sender(c)
		h.mu.Lock()
		h.lookup = max(h.lookup, time.Since(began))
		h.mu.Unlock()
		return context.WithValue(ctx, replicaKey{}, replica)
	}
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

// sender finds the replica whose process owns the other end of c: the socket in /proc/net/tcp with c's
// remote port as its local port, then the replica process holding that socket.
func (h *hookReceiver) sender(c net.Conn) string {
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return "?"
	}
	// A connection the killed replica made before it died, accepted only after (a burst waits in the
	// listener's queue while the lookups run one by one): its socket has no process any more.
	h.mu.Lock()
	dead := h.dead[remote.Port]
	h.mu.Unlock()
	inode := ""
	// /proc/net/tcp is read in chunks, and a table that changes between them (a burst of connections) may
	// skip an entry: read it again when the socket is not found.
	for try := 0; try < 20 && inode == ""; try++ {
		if try > 0 {
			time.Sleep(time.Millisecond)
		}
		inode = socketInode(remote.Port, local.Port)
	}
	if inode == "" || inode == "0" { // not listed, or orphaned (its process died)
		if dead != "" {
			return dead
		}
		return "?socket"
	}
	for pid, name := range h.pids {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == "socket:["+inode+"]" {
				return name
			}
		}
	}
	if dead != "" {
		return dead
	}
	return "?process" // no replica holds it
}

// remember notes the local ports of r's TCP sockets, just before r is killed (r is stopped: it makes no
// new ones meanwhile).
func (h *hookReceiver) remember(r *localcluster.Replica) {
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", r.Pid()))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", r.Pid(), fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	// Read five times: a read of /proc/net/tcp may skip entries of a table that changes meanwhile.
	var b []byte
	for range 5 {
		more, _ := os.ReadFile("/proc/net/tcp")
		b = append(b, more...)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 9 && inodes[fields[9]] {
			if _, port, ok := strings.Cut(fields[1], ":"); ok {
				if n, err := strconv.ParseInt(port, 16, 32); err == nil {
					h.dead[int(n)] = r.Name
				}
			}
		}
	}
}

// socketInode is the inode of the IPv4 socket from local port to remote port, "" when none is listed.
func socketInode(port, peerPort int) string {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	want, peer := fmt.Sprintf(":%04X", port), fmt.Sprintf(":%04X", peerPort)
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 9 && strings.HasSuffix(fields[1], want) && strings.HasSuffix(fields[2], peer) {
			return fields[9]
		}
	}
	return ""
}

func (h *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	replica, _ := r.Context().Value(replicaKey{}).(string)
	h.mu.Lock()
	h.inflight[replica]++
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inflight[replica]--
		h.mu.Unlock()
	}()
	body, err := io.ReadAll(r.Body)
	program, perr := strconv.ParseInt(path.Base(r.URL.Path), 10, 64)
	h.mu.Lock()
	wh := h.verifier[program]
	h.mu.Unlock()
	if err != nil || perr != nil || wh == nil {
		http.Error(w, "unknown endpoint", http.StatusNotFound)
		return
	}
	time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond) // the brand's processing
	id := r.Header.Get("webhook-id")
	if err := wh.Verify(body, r.Header); err != nil {
		h.mu.Lock()
		h.bad = append(h.bad, fmt.Sprintf("%s (program %d): %v", id, program, err))
		h.mu.Unlock()
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(body, &ev)
	rc := hookReceipt{endpointProgram: program, typ: ev.Type, replica: replica, at: time.Now()}
	switch ev.Type {
	case "sale.created":
		rc.key, _ = ev.Data["processor_event_id"].(string) // wh-<program>-…
		rc.contentProgram = programIn(rc.key, "wh-")
	case "lead.created":
		rc.key, _ = ev.Data["customer_key"].(string) // whc-<program>-…
		rc.contentProgram = programIn(rc.key, "whc-")
	}
	if p, ok := ev.Data["program_id"].(float64); ok {
		rc.contentProgram = int64(p)
	}
	h.mu.Lock()
	h.got[id] = append(h.got[id], rc)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// programIn reads the program id out of a key made as prefix<program>-<n>.
func programIn(key, prefix string) int64 {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return 0
	}
	id, _, _ := strings.Cut(rest, "-")
	n, _ := strconv.ParseInt(id, 10, 64)
	return n
}

// register adds the program's endpoint (/hook/<program id>) with its account token.
func (h *hookReceiver) register(t *testing.T, p seed.Result) int64 {
	t.Helper()
	body := fmt.Sprintf(`{"url":%q}`, fmt.Sprintf("%s/hook/%d", h.srv.URL, p.ProgramID))
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/programs/%d/webhook-endpoints", cluster.URL, p.ProgramID), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.AccountToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out struct {
		Data struct {
			ID     int64  `json:"id"`
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(b, &out) != nil {
		t.Fatalf("create the endpoint: %d %s", res.StatusCode, b)
	}
	wh, err := standardwebhooks.NewWebhook(out.Data.Secret)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.verifier[p.ProgramID] = wh
	h.mu.Unlock()
	return out.Data.ID
}

// unknown reports a sender not found ("?socket", "?process"; "?" for a connection that is not TCP).
func unknown(replica string) bool { return strings.HasPrefix(replica, "?") }

// busy is how many requests replica is sending that the receiver is processing now.
func (h *hookReceiver) busy(replica string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inflight[replica]
}

// received reports which of the wanted keys (per type) some receipt carries.
func (h *hookReceiver) has(typ, key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rcs := range h.got {
		for _, rc := range rcs {
			if rc.typ == typ && rc.key == key {
				return true
			}
		}
	}
	return false
}

func (h *hookReceiver) snapshot() map[string][]hookReceipt {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]hookReceipt, len(h.got))
	for id, rcs := range h.got {
		out[id] = slices.Clone(rcs)
	}
	return out
}

// hookLoad is what the burst had acknowledged: sales (transaction ids) and leads (customer keys).
type hookLoad struct {
	mu          sync.Mutex
	sales       []string
	leads       []string
	salesFailed []string
}

// hookBurst records customers customers (a click, then the lead) for each program, then sells sales
// times for each program at once, 8 clients per program, all through the balancer. started is closed once
// the sales begin.
func hookBurst(t *testing.T, progs []seed.Result, customers, sales int, started chan<- struct{}) *hookLoad {
	t.Helper()
	ctx := context.Background()
	l := &hookLoad{}
	var wg sync.WaitGroup
	keys := make([][]string, len(progs))
	for i, p := range progs {
		keys[i] = make([]string, customers)
		brand := sdk.New(p.APIKey, sdk.WithBaseURL(cluster.URL), sdk.WithHTTPClient(backend(p)))
		for c := range customers {
			wg.Go(func() {
				status, clickID, err := click(ctx, http.DefaultClient, p.AffiliateURL, fmt.Sprintf("100.64.%d.%d", i, c+1))
				if err != nil || status != http.StatusOK {
					t.Errorf("click: %d %v", status, err)
					return
				}
				key := fmt.Sprintf("whc-%d-%d", p.ProgramID, c)
				if r := brand.TrackLead(ctx, sdk.LeadInput{CustomerExternalID: key, ClickID: clickID}); !r.OK {
					t.Errorf("lead: %d %v", r.Status, r.Err())
					return
				}
				keys[i][c] = key
				l.mu.Lock()
				l.leads = append(l.leads, key)
				l.mu.Unlock()
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if started != nil {
		close(started)
	}
	const clients = 8
	for i, p := range progs {
		brand := sdk.New(p.APIKey, sdk.WithBaseURL(cluster.URL), sdk.WithRetry(sdk.RetryPolicy{MaxAttempts: 6, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}))
		for c := range clients {
			wg.Go(func() {
				for n := c; n < sales; n += clients {
					inv := fmt.Sprintf("wh-%d-%d", p.ProgramID, n)
					r := brand.TrackSale(ctx, sdk.SaleInput{CustomerExternalID: keys[i][n%customers], AmountCents: 1500, InvoiceID: inv})
					l.mu.Lock()
					if r.OK || r.AlreadyRecorded() {
						l.sales = append(l.sales, inv)
					} else {
						l.salesFailed = append(l.salesFailed, fmt.Sprintf("%s: %d %v", inv, r.Status, r.Err()))
					}
					l.mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return l
}

// hookDelivery is one delivery of the test's endpoints as the database has it.
type hookDelivery struct {
	WebhookID string `db:"webhook_id"`
	Status    string `db:"status"`
	Attempts  int    `db:"attempts"`
	// Before is how many attempts were recorded before its first success.
	Before int `db:"before"`
}

func hookDeliveries(t *testing.T, endpoints []int64) []hookDelivery {
	t.Helper()
	var out []hookDelivery
	if err := direct.Select(&out, `SELECT d.webhook_id, d.status,
			(SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts,
			(SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.attempted_at <
				coalesce((SELECT min(s.attempted_at) FROM webhook_attempts s WHERE s.delivery_id = d.id AND s.succeeded), 'infinity')) AS before
		FROM webhook_deliveries d WHERE d.endpoint_id = ANY($1)`, pq.Array(endpoints)); err != nil {
		t.Fatal(err)
	}
	return out
}

// awaitHooks waits (up to limit) until every acknowledged sale and lead reached the receiver and no
// delivery of the endpoints is pending; it returns how long that took.
func awaitHooks(t *testing.T, h *hookReceiver, l *hookLoad, endpoints []int64, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		arrived := true
		for _, s := range l.sales {
			if !h.has("sale.created", s) {
				arrived = false
				break
			}
		}
		for _, c := range l.leads {
			if arrived && !h.has("lead.created", c) {
				arrived = false
			}
		}
		pending := 0
		for _, d := range hookDeliveries(t, endpoints) {
			if d.Status == "pending" {
				pending++
			}
		}
		if arrived && pending == 0 {
			return time.Since(began)
		}
		if time.Since(began) > limit {
			t.Errorf("after %s: every acknowledged event arrived: %t, %d deliveries pending", limit, arrived, pending)
			return time.Since(began)
		}
		time.Sleep(200 * time.Millisecond) // deliveries are observable only by looking
	}
}

// hookFigures checks what arrived against what was acknowledged and the database, and counts.
type hookFigures struct {
	received, distinct    int
	byReplica             map[string]int
	byType                map[string]int
	dupIDs, dupLease      int
	dupFirstBy            map[string]int // the replica that sent a duplicate's first receipt
	multiAttempt, retried int            // deliveries with more than one attempt recorded; with attempts before the first success
}

func checkHooks(t *testing.T, h *hookReceiver, l *hookLoad, endpoints []int64) hookFigures {
	t.Helper()
	got := h.snapshot()
	f := hookFigures{distinct: len(got), byReplica: map[string]int{}, byType: map[string]int{}, dupFirstBy: map[string]int{}}
	for id, rcs := range got {
		f.received += len(rcs)
		for _, rc := range rcs {
			f.byReplica[rc.replica]++
			f.byType[rc.typ]++
			if rc.contentProgram != rc.endpointProgram {
				t.Errorf("%s (%s %s) names program %d but came to program %d's endpoint", id, rc.typ, rc.key, rc.contentProgram, rc.endpointProgram)
			}
		}
		if len(rcs) > 1 {
			f.dupIDs++
			f.dupFirstBy[rcs[0].replica]++
			lease := true
			for k := 1; k < len(rcs); k++ {
				if rcs[k].at.Sub(rcs[k-1].at) < leaseGap {
					lease = false
				}
			}
			if lease {
				f.dupLease++
			} else {
				t.Errorf("%s received %d times, less than a lease apart: %v", id, len(rcs), rcs)
			}
		}
	}
	h.mu.Lock()
	for _, b := range h.bad {
		t.Errorf("signature refused by the Standard Webhooks library: %s", b)
	}
	h.mu.Unlock()
	missing := 0
	for _, s := range l.sales {
		if !h.has("sale.created", s) {
			missing++
		}
	}
	for _, c := range l.leads {
		if !h.has("lead.created", c) {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged sales and leads never reached the receiver", missing, len(l.sales)+len(l.leads))
	}
	if len(l.salesFailed) > 0 {
		t.Errorf("%d sales not acknowledged: %v", len(l.salesFailed), l.salesFailed[:min(5, len(l.salesFailed))])
	}
	deliveries := hookDeliveries(t, endpoints)
	ids := map[string]bool{}
	for _, d := range deliveries {
		ids[d.WebhookID] = true
		if d.Status != "succeeded" {
			t.Errorf("delivery %s ended %s", d.WebhookID, d.Status)
		}
		if d.Status == "succeeded" && got[d.WebhookID] == nil {
			t.Errorf("delivery %s succeeded but the receiver never processed it", d.WebhookID)
		}
		if d.Attempts > 1 {
			f.multiAttempt++
		}
		if d.Before > 0 {
			f.retried++
		}
	}
	for id := range got {
		if !ids[id] {
			t.Errorf("received %s, which is no delivery of the test's endpoints", id)
		}
	}
	if f.distinct != len(deliveries) {
		t.Errorf("%d webhook-ids received, %d deliveries", f.distinct, len(deliveries))
	}
	return f
}

// webhookWarnings counts the replicas' log lines about webhooks at WARN or ERROR since offsets.
func webhookWarnings(offsets map[string]int64) map[string]int {
	out := map[string]int{}
	for _, r := range cluster.Replicas {
		b, _ := os.ReadFile(r.Log)
		if off := offsets[r.Name]; off <= int64(len(b)) {
			b = b[off:]
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if bytes.Contains(line, []byte("webhook")) && (bytes.Contains(line, []byte(`"level":"WARN"`)) || bytes.Contains(line, []byte(`"level":"ERROR"`))) {
				var l struct {
					Msg string `json:"msg"`
				}
				_ = json.Unmarshal(line, &l)
				out[r.Name+": "+l.Msg]++
			}
		}
	}
	return out
}

func logOffsets() map[string]int64 {
	out := map[string]int64{}
	for _, r := range cluster.Replicas {
		if st, err := os.Stat(r.Log); err == nil {
			out[r.Name] = st.Size()
		}
	}
	return out
}

// hookPrograms seeds n programs, each with an endpoint on h; it returns them and their endpoints.
func hookPrograms(t *testing.T, h *hookReceiver, n int) ([]seed.Result, []int64) {
	t.Helper()
	var progs []seed.Result
	var endpoints []int64
	for range n {
		p := newProgram(t)
		progs = append(progs, p)
		endpoints = append(endpoints, h.register(t, p))
	}
	return progs, endpoints
}

// Outbound webhooks through the three replicas and the pooler: three programs with an endpoint each on a
// receiver of this test, 20 customers (click and lead) and 100 sales per program, all at once through the
// balancer. Every acknowledged sale's sale.created and every lead's lead.created arrives, signed (checked
// with the Standard Webhooks library), at its own program's endpoint; with no replica killed no lease runs
// out, so no delivery is attempted twice (the receiver always answers 204): no webhook-id twice at the
// receiver, one recorded attempt per delivery. The replicas share the deliveries through the database:
// more than one of them sends.
func TestWebhooksThroughTheCluster(t *testing.T) {
	need(t)
	h := newHookReceiver(t)
	offsets := logOffsets()
	progs, endpoints := hookPrograms(t, h, 3)
	began := time.Now()
	l := hookBurst(t, progs, 20, 100, nil)
	burst := time.Since(began)
	wait := awaitHooks(t, h, l, endpoints, time.Minute)
	f := checkHooks(t, h, l, endpoints)
	t.Logf("acknowledged %d sales and %d leads in %s; every delivery ended %s later", len(l.sales), len(l.leads), burst.Round(time.Millisecond), wait.Round(time.Millisecond))
	t.Logf("received %d (%d webhook-ids; %v), by replica %v; duplicates at the receiver %d; deliveries with more than one attempt %d, with an attempt before the first success %d",
		f.received, f.distinct, f.byType, f.byReplica, f.dupIDs, f.multiAttempt, f.retried)
	if w := webhookWarnings(offsets); len(w) > 0 {
		t.Logf("replicas' webhook warnings: %v", w)
	}
	if f.dupIDs != 0 || f.multiAttempt != 0 {
		t.Errorf("with every replica up: %d webhook-ids received twice, %d deliveries attempted more than once; want 0 (a lease ran out?)", f.dupIDs, f.multiAttempt)
	}
	if senders := len(slices.DeleteFunc(slices.Collect(maps.Keys(f.byReplica)), unknown)); senders < 2 {
		t.Errorf("deliveries sent by %v: want the replicas to share them", f.byReplica)
	}
}

// A replica killed with SIGKILL while it is sending deliveries, in the middle of a burst of sales: every
// acknowledged event still arrives. The killed replica's leased deliveries are attempted again by another
// replica once their lease (60 s) runs out, with the same webhook-id: a delivery it was sending when it
// died arrives twice (at least once), about a minute apart, the first from the killed replica. Nothing
// else arrives twice.
func TestWebhooksWhenAReplicaDies(t *testing.T) {
	need(t)
	h := newHookReceiver(t)
	offsets := logOffsets()
	progs, endpoints := hookPrograms(t, h, 3)
	victim := cluster.Replicas[0]
	t.Cleanup(func() { // started again, whatever happened
		if victim.Pid() == 0 {
			if err := victim.Start(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	started := make(chan struct{})
	killed := make(chan int, 1) // the victim's deliveries in flight at the receiver when it died
	go func() {
		<-started
		// Wait until the victim is sending (it sends what any replica's sales made due), then kill it.
		deadline := time.Now().Add(10 * time.Second)
		for h.busy(victim.Name) == 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		n := h.busy(victim.Name)
		// Frozen first (SIGSTOP), so that it opens no connection while its sockets are noted; then killed.
		if err := syscall.Kill(victim.Pid(), syscall.SIGSTOP); err != nil {
			t.Error(err)
		}
		h.remember(victim)
		if err := victim.Kill(); err != nil {
			t.Error(err)
		}
		killed <- n
	}()
	began := time.Now()
	l := hookBurst(t, progs, 20, 100, started)
	inflight := <-killed
	burst := time.Since(began)
	wait := awaitHooks(t, h, l, endpoints, 150*time.Second)
	f := checkHooks(t, h, l, endpoints)
	t.Logf("acknowledged %d sales and %d leads in %s; %s killed with %d of its deliveries in flight at the receiver; every delivery ended %s after the burst",
		len(l.sales), len(l.leads), burst.Round(time.Millisecond), victim.Name, inflight, wait.Round(time.Millisecond))
	t.Logf("received %d (%d webhook-ids; %v), by replica %v; duplicates at the receiver %d (a lease apart: %d; first sent by %v); deliveries with more than one attempt %d, with an attempt before the first success %d",
		f.received, f.distinct, f.byType, f.byReplica, f.dupIDs, f.dupLease, f.dupFirstBy, f.multiAttempt, f.retried)
	if w := webhookWarnings(offsets); len(w) > 0 {
		t.Logf("replicas' webhook warnings: %v", w)
	}
	h.mu.Lock()
	t.Logf("the longest sender lookup took %s", h.lookup.Round(time.Microsecond))
	h.mu.Unlock()
	// Each delivery the victim was sending when it died reached the receiver, was never recorded, and is
	// sent again once its lease runs out.
	if f.dupIDs < inflight {
		t.Errorf("%d duplicates, want at least the %d deliveries in flight at the kill", f.dupIDs, inflight)
	}
	for r, n := range f.dupFirstBy {
		if r != victim.Name && !unknown(r) {
			t.Errorf("%d duplicates first sent by %s, which was not killed", n, r)
		}
	}
	if f.multiAttempt != 0 {
		t.Errorf("%d deliveries have more than one attempt recorded; the receiver always answered 204", f.multiAttempt)
	}
}
