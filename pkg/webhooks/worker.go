package webhooks

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/reftrack/reftrack/pkg/seal"
)

// Attempt outcomes, as the metrics count them.
const (
	OutcomeSucceeded = "succeeded" // a 2xx answer
	OutcomeFailed    = "failed"    // another answer (a redirect included: never followed)
	OutcomeError     = "error"     // no answer: refused, timed out, a forbidden address
	OutcomeGone      = "gone"      // 410: the endpoint is disabled at once
)

// Observer is told what the worker does (the server's metrics); nil methods are not called.
type Observer interface {
	WebhookLag(d time.Duration)    // from the event to its first attempt
	WebhookAttempt(outcome string) // one attempt
	WebhookDisabled(reason string) // one endpoint disabled
}

// Worker delivers due deliveries. Every replica runs one; they share the work through the database.
type Worker struct {
	DB     *sqlx.DB
	Client *http.Client // egress.Policy.Client(Timeout) in production: no private addresses, no redirects
	Sealer *seal.Sealer
	// Shape makes each event's data from its resource, as the management API answers it.
	Shape   Shape
	Now     func() time.Time
	Log     *slog.Logger
	Observe Observer // may be nil
	// UserAgent is sent with every attempt: reftrack-webhooks/<version>.
	UserAgent string
	// Jitter returns a number in [0, 1) spreading each retry over ±10 % of its delay; nil: random.
	Jitter func() float64
	// Slots is how many attempts run at once (default 32); Poll how often the database is asked when
	// nothing woke the worker (default 1 s); Gather how long a wake waits before claiming, so that the
	// changes of a busy moment share one claim and one record (default 10 ms).
	Slots  int
	Poll   time.Duration
	Gather time.Duration
	// Busy reports whether this replica's requests are using all it has (nil: never). Deliveries are
	// background work: while it says so, the worker claims at most YieldClaim deliveries every YieldPause
	// (default 16 every 250 ms, by Now), so that recording sales keeps the machine and deliveries still go
	// out; the rest wait in the outbox (their lag grows) and go out at full speed once the requests ease.
	Busy       func() bool
	YieldClaim int
	YieldPause time.Duration

	once       sync.Once
	wake       chan struct{}
	yieldUntil time.Time // while Busy: no claim before it (Run's goroutine only)
}

// NewWorker is a delivery worker on the store's database, egress policy and sealer, sending
// reftrack-webhooks/<version> as its User-Agent. The server and the API tests build theirs with it.
func (s *Store) NewWorker(now func() time.Time, log *slog.Logger, observe Observer, version string) *Worker {
	return &Worker{DB: s.DB, Client: s.Policy.Client(Timeout), Sealer: s.Sealer, Shape: s.Shape, Now: now, Log: log,
		Observe: observe, UserAgent: "reftrack-webhooks/" + version}
}

func (w *Worker) init() {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		if w.Slots <= 0 {
			w.Slots = 32
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
		if w.Gather <= 0 {
			w.Gather = 10 * time.Millisecond
		}
		if w.YieldClaim <= 0 {
			w.YieldClaim = 16
		}
		if w.YieldPause <= 0 {
			w.YieldPause = 250 * time.Millisecond
		}
		if w.Jitter == nil {
			w.Jitter = rand.Float64
		}
		if w.Log == nil {
			w.Log = slog.New(slog.DiscardHandler)
		}
	})
}

// Wake tells the worker that deliveries may be due now (a change was committed in this replica), so that
// the first attempt does not wait for the next poll. It never blocks.
func (w *Worker) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// job is a claimed delivery with what its attempt needs.
type job struct {
	ID            int64      `db:"id"`
	WebhookID     string     `db:"webhook_id"`
	EndpointID    int64      `db:"endpoint_id"`
	AttemptCount  int        `db:"attempt_count"`
	LeasedUntil   time.Time  `db:"leased_until"`
	First         bool       `db:"first"`
	EventID       int64      `db:"event_id"`
	Type          string     `db:"type"`
	OccurredAt    time.Time  `db:"occurred_at"`
	Data          []byte     `db:"data"`
	URL           string     `db:"url"`
	Secret        []byte     `db:"secret_sealed"`
	Previous      []byte     `db:"previous_secret_sealed"`
	PreviousUntil *time.Time `db:"previous_secret_until"`
}

// claim leases up to n due deliveries of enabled endpoints whose events are rendered, in one autocommit
// statement (webhooks_claim): rows another replica is claiming at that instant are skipped, and a lease
// that ran out (its replica died) is taken. A delivery of an event not rendered yet (recover queues the
// events since a time, some perhaps not picked up yet) waits for the pick-up, which runs before every
// claim.
func (w *Worker) claim(ctx context.Context, n int, now time.Time) ([]job, error) {
	var out []job
	err := sqlx.SelectContext(ctx, w.DB, &out, `SELECT * FROM webhooks_claim($1, $2, $3)`, now, n, now.Add(lease))
	return out, err
}

// fanOutPerSlot is how many events a pick-up takes per delivery the worker may claim: an event makes a
// delivery per endpoint that takes it, often one, and none for a program whose endpoints are disabled.
const fanOutPerSlot = 8

// fanOut picks up to n of the events no worker has picked up yet, renders them and writes their
// deliveries, in one transaction: webhooks_pick_up locks them (another replica skips them), their
// resources are read from their owners, one query per kind of resource, and shaped in Go as the API
// answers them (render), and webhooks_fan_out stores the data and writes the deliveries. Nothing but
// reads and these statements happens while the events are locked: no HTTP call. It returns how many it
// picked; a failure leaves them unpicked, for the next pick-up.
func (w *Worker) fanOut(ctx context.Context, n int) (int, error) {
	tx, err := w.DB.BeginTxx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	var events []unrendered
	if err := sqlx.SelectContext(ctx, tx, &events, `SELECT * FROM webhooks_pick_up($1)`, n); err != nil {
		return 0, fmt.Errorf("pick up events: %w", err)
	}
	if len(events) == 0 {
		return 0, tx.Commit()
	}
	data, err := render(ctx, tx, w.Shape, w.Now(), events)
	if err != nil {
		return 0, err
	}
	ids := make(pq.Int64Array, len(events))
	for i, ev := range events {
		ids[i] = ev.ID
	}
	if _, err := tx.ExecContext(ctx, `SELECT webhooks_fan_out($1, $2::jsonb[])`, ids, pq.Array(data)); err != nil {
		return 0, fmt.Errorf("fan out events: %w", err)
	}
	return len(events), tx.Commit()
}

// RunOnce picks up every event not picked up yet, then attempts the deliveries due now (up to Slots), all
// at once, and returns how many it attempted once each is recorded. Tests call it; Run is the server's
// loop.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	w.init()
	for batch := fanOutPerSlot * w.Slots; ; {
		picked, err := w.fanOut(ctx, batch)
		if err != nil {
			return 0, err
		}
		if picked < batch {
			break
		}
	}
	jobs, err := w.claim(ctx, w.Slots, w.Now())
	if err != nil {
		return 0, err
	}
	done := make([]outcome, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() { done[i] = w.attempt(ctx, j) })
	}
	wg.Wait()
	return len(jobs), w.recordAll(ctx, done)
}

// Run delivers until ctx ends: whenever woken, a slot frees or Poll passes, it picks up new events (up to
// fanOutPerSlot per free slot), claims as many due deliveries as it has free slots, and records the
// finished attempts together (one transaction for the successes). A wake waits Gather first, so that the
// changes of a busy moment go out in one claim. Attempts in flight when ctx ends are finished (within
// Timeout) and recorded.
func (w *Worker) Run(ctx context.Context) {
	w.init()
	finished := make(chan outcome, w.Slots)
	busy := 0
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		close(finished)
		var rest []outcome
		for o := range finished {
			rest = append(rest, o)
		}
		w.recordAndLog(context.WithoutCancel(ctx), rest)
	}()
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		var done []outcome
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
			gather := time.NewTimer(w.Gather)
			select {
			case <-ctx.Done():
				gather.Stop()
				return
			case <-gather.C:
			}
		case o := <-finished:
			done = append(done, o)
		case <-poll.C:
		}
		for drained := false; !drained; {
			select {
			case o := <-finished:
				done = append(done, o)
			default:
				drained = true
			}
		}
		busy -= len(done)
		w.recordAndLog(ctx, done)
		next := w.Poll
		n, wait := w.claimable(w.Slots-busy, w.Now())
		if n > 0 {
			picked, err := w.fanOut(ctx, fanOutPerSlot*n)
			if err != nil && ctx.Err() == nil {
				w.Log.WarnContext(ctx, "webhook events not picked up", "err", err)
			}
			jobs, err := w.claim(ctx, n, w.Now())
			if err != nil && ctx.Err() == nil {
				w.Log.WarnContext(ctx, "webhook deliveries not claimed", "err", err)
			}
			for _, j := range jobs {
				busy++
				wg.Go(func() { finished <- w.attempt(context.WithoutCancel(ctx), j) })
			}
			if (len(jobs) == n || picked == fanOutPerSlot*n) && wait == 0 {
				select { // more may be due: look again at once
				case w.wake <- struct{}{}:
				default:
				}
			}
		}
		if wait > 0 {
			next = min(next, wait) // yielding: claim again when the pause is over, woken or not
		}
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(next)
	}
}

// claimable is how many deliveries Run may claim now with free slots, and, while the replica is busy,
// how long until it may claim again (0: whenever woken).
func (w *Worker) claimable(free int, now time.Time) (n int, wait time.Duration) {
	if free <= 0 {
		return 0, 0
	}
	if w.Busy == nil || !w.Busy() {
		w.yieldUntil = time.Time{}
		return free, 0
	}
	if now.Before(w.yieldUntil) {
		return 0, w.yieldUntil.Sub(now)
	}
	w.yieldUntil = now.Add(w.YieldPause)
	return min(free, w.YieldClaim), w.YieldPause
}

// recordAndLog records outcomes; one not recorded is attempted again once its lease runs out.
func (w *Worker) recordAndLog(ctx context.Context, done []outcome) {
	if err := w.recordAll(context.WithoutCancel(ctx), done); err != nil {
		w.Log.Warn("webhook attempts not recorded (attempted again once their lease runs out)", "err", err)
	}
}

// Body is what every attempt of an event sends: its type, when it happened and its data.
func Body(eventType string, occurredAt time.Time, data []byte) ([]byte, error) {
	return json.Marshal(struct {
		Type      string          `json:"type"`
		Timestamp string          `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
	}{eventType, occurredAt.UTC().Format(time.RFC3339Nano), data})
}

// result is what one attempt got.
type result struct {
	outcome    string
	status     *int
	body       *string
	err        *string
	retryAfter time.Duration
	took       time.Duration
}

// outcome is a claimed delivery and what its attempt got.
type outcome struct {
	job
	at time.Time
	result
}

// attempt sends one delivery.
func (w *Worker) attempt(ctx context.Context, j job) outcome {
	start := w.Now()
	if j.First && w.Observe != nil {
		w.Observe.WebhookLag(start.Sub(j.OccurredAt))
	}
	r := w.send(ctx, j, start)
	r.took = w.Now().Sub(start)
	if w.Observe != nil {
		w.Observe.WebhookAttempt(r.outcome)
	}
	return outcome{job: j, at: start, result: r}
}

// recordAll records outcomes: the successes together in one transaction, each other on its own (a
// failure may disable its endpoint).
func (w *Worker) recordAll(ctx context.Context, done []outcome) error {
	var ok []outcome
	var errs []error
	for _, o := range done {
		if o.outcome == OutcomeSucceeded {
			ok = append(ok, o)
		} else {
			errs = append(errs, w.recordFailure(ctx, o.job, o.at, o.result))
		}
	}
	if len(ok) > 0 {
		errs = append(errs, recordSuccesses(ctx, w.DB, ok))
	}
	return errors.Join(errs...)
}

// recordSuccesses writes succeeded attempts in one transaction: their endpoints locked first, in id order
// (as record locks an endpoint before its deliveries), then the attempts, the deliveries still leased to
// this replica, and the endpoints' end of failing.
func recordSuccesses(ctx context.Context, db *sqlx.DB, ok []outcome) error {
	n := len(ok)
	ids, endpoints, counts := make(pq.Int64Array, n), make(pq.Int64Array, n), make(pq.Int64Array, n)
	statuses, durations := make(pq.Int64Array, n), make(pq.Int64Array, n)
	leases, ats := make([]string, n), make([]string, n)
	bodies := make([]*string, n)
	for i, o := range ok {
		ids[i], endpoints[i], counts[i] = o.ID, o.EndpointID, int64(o.AttemptCount)
		statuses[i], durations[i] = int64(*o.status), int64(o.took/time.Millisecond)
		leases[i], ats[i] = o.LeasedUntil.Format(time.RFC3339Nano), o.at.Format(time.RFC3339Nano)
		bodies[i] = o.body
	}
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ANY ($1) ORDER BY id FOR NO KEY UPDATE`, endpoints); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	// Only for deliveries still there (an endpoint deleted meanwhile took its deliveries): the outbox has no
	// foreign keys, and the endpoints locked above cannot be deleted until this commits.
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempted_at, succeeded, response_status, duration_ms, response_body)
		SELECT u.id, u.at, true, u.status, u.took, u.body FROM unnest($1::bigint[], $2::timestamptz[], $3::int[], $4::int[], $5::text[])
			AS u(id, at, status, took, body)
		WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = u.id)`, ids, pq.Array(ats), statuses, durations, pq.Array(bodies)); err != nil {
		return fmt.Errorf("record attempts: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries d SET status = 'succeeded', attempt_count = u.n + 1,
			next_attempt_at = NULL, leased_until = NULL, updated_at = u.at
		FROM unnest($1::bigint[], $2::int[], $3::timestamptz[], $4::timestamptz[]) AS u(id, n, lease, at)
		WHERE d.id = u.id AND d.leased_until = u.lease AND d.attempt_count = u.n`, ids, counts, pq.Array(leases), pq.Array(ats)); err != nil {
		return fmt.Errorf("record deliveries: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY ($1) AND failing_since IS NOT NULL`,
		endpoints); err != nil {
		return fmt.Errorf("record endpoints: %w", err)
	}
	return tx.Commit()
}

func (w *Worker) send(ctx context.Context, j job, at time.Time) result {
	fail := func(err error) result {
		msg := err.Error()
		return result{outcome: OutcomeError, err: &msg}
	}
	body, err := Body(j.Type, j.OccurredAt, j.Data)
	if err != nil {
		return fail(err)
	}
	sealed := [][]byte{j.Secret}
	if j.Previous != nil && j.PreviousUntil != nil && at.Before(*j.PreviousUntil) {
		sealed = append(sealed, j.Previous) // a rotation: the receiver may still hold the previous secret
	}
	secrets := make([]string, 0, len(sealed))
	for _, b := range sealed {
		s, err := w.Sealer.Open(b)
		if err != nil {
			return fail(err)
		}
		secrets = append(secrets, s)
	}
	sig, err := signatures(secrets, j.WebhookID, at, body)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.URL, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("webhook-id", j.WebhookID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	req.Header.Set("content-type", "application/json")
	req.Header.Set("user-agent", w.UserAgent)
	resp, err := w.Client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, ResponseBodySize))
	text := string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	text = string(bytes.ReplaceAll([]byte(text), []byte{0}, nil)) // PostgreSQL text holds no NUL
	status := resp.StatusCode
	r := result{outcome: OutcomeFailed, status: &status, body: &text}
	switch {
	case status >= 200 && status < 300:
		r.outcome = OutcomeSucceeded
	case status == http.StatusGone:
		r.outcome = OutcomeGone
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		r.retryAfter = retryAfter(resp.Header.Get("Retry-After"), at)
	}
	return r
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// NextDelay is the wait before attempt n+1 after attempt n (1-based) failed; ok false when n was the last.
// jitter in [0, 1) moves it within ±10 %. A Retry-After longer than that wait postpones the attempt, up
// to the wait of the step after (never further: the schedule's end stays where it is).
func NextDelay(n int, jitter float64, retryAfter time.Duration) (time.Duration, bool) {
	if n >= len(Schedule) {
		return 0, false
	}
	d := Schedule[n]
	d += time.Duration(float64(d) * 0.1 * (2*jitter - 1))
	if retryAfter > d {
		limit := d
		if n+1 < len(Schedule) {
			limit = Schedule[n+1]
		}
		d = min(retryAfter, max(limit, d))
	}
	return d, true
}

// recordFailure writes a failed attempt, the delivery's next state and the endpoint's, in one
// transaction (successes are recordSuccesses'). The delivery moves only if this replica still holds its
// lease (a resend or another replica may have taken it meanwhile); the attempt is logged either way.
func (w *Worker) recordFailure(ctx context.Context, j job, at time.Time, r result) error {
	tx, err := w.DB.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	// The endpoint first: whatever may change it and its deliveries (another attempt's record disabling
	// it, a member's change) locks in this order, so none waits for another in a circle.
	var enabled bool
	if err := tx.GetContext(ctx, &enabled, `SELECT enabled FROM webhook_endpoints WHERE id = $1 FOR NO KEY UPDATE`,
		j.EndpointID); errors.Is(err, sql.ErrNoRows) {
		return nil // deleted meanwhile: its deliveries went with it, and there is nothing to log the attempt on
	} else if err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	ms := int(r.took / time.Millisecond)
	if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempted_at, succeeded, response_status,
		duration_ms, response_body, error) VALUES ($1, $2, false, $3, $4, $5, $6)`,
		j.ID, at, r.status, ms, r.body, r.err); err != nil {
		return fmt.Errorf("record attempt: %w", err)
	}
	n := j.AttemptCount + 1
	status, next := StatusFailed, (*time.Time)(nil)
	if r.outcome != OutcomeGone && enabled { // disabled while this attempt was out: it fails (failPending)
		if d, ok := NextDelay(n, w.Jitter(), r.retryAfter); ok {
			t := at.Add(d)
			status, next = StatusPending, &t
		}
	}
	res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $2, attempt_count = $3, next_attempt_at = $4,
		leased_until = NULL, updated_at = $5 WHERE id = $1 AND leased_until = $6 AND attempt_count = $7`,
		j.ID, status, n, next, at, j.LeasedUntil, j.AttemptCount)
	if err != nil {
		return fmt.Errorf("record delivery: %w", err)
	}
	if moved, _ := res.RowsAffected(); moved == 0 || !enabled {
		return tx.Commit()
	}
	reason, label := ReasonGone, "gone"
	if r.outcome != OutcomeGone {
		var since time.Time
		if err := tx.GetContext(ctx, &since, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2)
			WHERE id = $1 RETURNING failing_since`, j.EndpointID, at); err != nil {
			return fmt.Errorf("record endpoint: %w", err)
		}
		if at.Before(since.Add(DisableAfter)) {
			return tx.Commit()
		}
		reason, label = ReasonFailing, "failing"
	}
	disabled, err := disableEndpoint(ctx, tx, j.EndpointID, reason, at)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if disabled && w.Observe != nil {
		w.Observe.WebhookDisabled(label)
	}
	return nil
}

// disableEndpoint disables an enabled endpoint: it receives nothing more, and its pending deliveries fail
// (Recover queues them again once it is enabled). It reports whether the endpoint was enabled.
func disableEndpoint(ctx context.Context, tx *sqlx.Tx, id int64, reason string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = $3
		WHERE id = $1 AND enabled`, id, reason, now)
	if err != nil {
		return false, fmt.Errorf("disable endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	return true, failPending(ctx, tx, id, now)
}

// failPending fails the endpoint's pending deliveries (it was just disabled): Recover queues them again
// once it is enabled. One being attempted is left to its attempt's record: a success is a success (the
// receiver has it), a failure fails it then (recordFailure sees the endpoint disabled).
func failPending(ctx context.Context, tx *sqlx.Tx, endpointID int64, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', leased_until = NULL, updated_at = $2
		WHERE endpoint_id = $1 AND status = 'pending' AND (leased_until IS NULL OR leased_until <= $2)`, endpointID, now)
	return err
}

// Clean drops the events older than Retention, with their deliveries and attempts, a thousand at a time;
// it returns how many events it dropped.
func Clean(ctx context.Context, db *sqlx.DB, now time.Time) (int64, error) {
	var total int64
	for {
		res, err := db.ExecContext(ctx, `DELETE FROM webhook_events WHERE id IN (
			SELECT id FROM webhook_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT 1000)`, now.Add(-Retention))
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
		if n < 1000 {
			return total, nil
		}
	}
}
