package mail_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/mail"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
	"github.com/reftrack/reftrack/pkg/testkit/ports"
)

// The outbox (pkg/mail/outbox.go) against a real database and a real SMTP server (Mailpit): a message is
// sent only if the transaction that wrote it committed, once, and again after a failure, on a clock the
// test moves.

// clock is a test's clock: it stands still until the test moves it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// outbox is a migrated database, a clock and a courier of its own on them.
type outbox struct {
	t     *testing.T
	d     *dbtest.Database
	clock *clock
}

func newOutbox(t *testing.T) *outbox {
	t.Helper()
	return &outbox{t: t, d: dbtest.New(t), clock: &clock{t: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)}}
}

func (o *outbox) courier(s mail.Sender) *mail.Courier {
	return &mail.Courier{DB: o.d.DB, Sender: s, Now: o.clock.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// enqueue writes m in a transaction that commits, or rolls back.
func (o *outbox) enqueue(m mail.Message, commit bool) {
	o.t.Helper()
	tx, err := o.d.Beginx()
	if err != nil {
		o.t.Fatal(err)
	}
	if err := mail.Enqueue(context.Background(), tx, m, o.clock.Now()); err != nil {
		o.t.Fatal(err)
	}
	if commit {
		err = tx.Commit()
	} else {
		err = tx.Rollback()
	}
	if err != nil {
		o.t.Fatal(err)
	}
}

// row is a message's outbox row.
type row struct {
	To        string     `db:"to_address"`
	Text      *string    `db:"text_body"`
	HTML      *string    `db:"html_body"`
	Attempts  int        `db:"attempts"`
	NextAt    time.Time  `db:"next_attempt_at"`
	LeasedTo  *time.Time `db:"leased_until"`
	SentAt    *time.Time `db:"sent_at"`
	LastError *string    `db:"last_error"`
}

func (o *outbox) rows() []row {
	o.t.Helper()
	var rows []row
	if err := o.d.Select(&rows, `SELECT to_address, text_body, html_body, attempts, next_attempt_at, leased_until, sent_at, last_error
		FROM mail_outbox ORDER BY id`); err != nil {
		o.t.Fatal(err)
	}
	return rows
}

func (o *outbox) pending() int64 {
	o.t.Helper()
	n, err := mail.Pending(context.Background(), o.d.DB)
	if err != nil {
		o.t.Fatal(err)
	}
	return n
}

func smtp(t *testing.T, addr string) *mail.SMTP {
	t.Helper()
	s, err := mail.NewSMTP("smtp://"+addr, "Reftrack <noreply@reftrack.test>")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func invitation(to string) mail.Message {
	return mail.Message{To: to, Subject: "Acme invites you to its partner program",
		Text: "Accept: https://reftrack.test/partners/invitations/abc", HTML: `<p><a href="https://reftrack.test/partners/invitations/abc">Accept</a></p>`}
}

// A message written in a transaction that rolled back is never sent; one that committed is sent once,
// and then the outbox keeps it without its bodies.
func TestOutboxSendsWhatCommittedOnce(t *testing.T) {
	t.Parallel()
	m := startMailpit(t)
	o := newOutbox(t)
	o.enqueue(invitation("rolled-back@partner.test"), false)
	o.enqueue(invitation("ann@partner.test"), true)
	if n := o.pending(); n != 1 {
		t.Fatalf("pending = %d, want 1", n)
	}
	c := o.courier(smtp(t, m.smtp))
	if err := c.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := m.messages(t)
	if len(got) != 1 {
		t.Fatalf("received %d messages, want 1: %+v", len(got), got)
	}
	if r := got[0]; r.From != "noreply@reftrack.test" || !slices.Equal(r.To, []string{"ann@partner.test"}) ||
		r.Subject != "Acme invites you to its partner program" || strings.TrimSpace(r.Text) != invitation("").Text ||
		!strings.Contains(r.HTML, `href="https://reftrack.test/partners/invitations/abc"`) {
		t.Errorf("received %+v", r)
	}
	rows := o.rows()
	if len(rows) != 1 {
		t.Fatalf("outbox = %+v", rows)
	}
	if r := rows[0]; r.Text != nil || r.HTML != nil || r.SentAt == nil || !r.SentAt.Equal(o.clock.Now()) || r.Attempts != 1 ||
		r.LeasedTo != nil || r.LastError != nil {
		t.Errorf("sent row = %+v", r)
	}
	// A later pass sends nothing again.
	o.clock.Advance(time.Hour)
	if err := c.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(m.messages(t)); n != 1 {
		t.Errorf("after another pass the server has %d messages", n)
	}
	if n := o.pending(); n != 0 {
		t.Errorf("pending = %d", n)
	}
}

// The SMTP server is down: the message keeps its bodies, says why, waits (30 s, then twice as long each
// time) and is sent on a pass after the wait, once the server is back.
func TestOutboxRetriesAfterAFailure(t *testing.T) {
	t.Parallel()
	m := startMailpit(t)
	o := newOutbox(t)
	o.enqueue(invitation("ann@partner.test"), true)
	down := o.courier(smtp(t, ports.Refusing(t)))
	for i, wait := range []time.Duration{30 * time.Second, time.Minute} {
		start := o.clock.Now()
		if err := down.SendAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := o.rows()[0]
		if r.SentAt != nil || r.Attempts != i+1 || r.LastError == nil || !strings.Contains(*r.LastError, "ann@partner.test") ||
			!r.NextAt.Equal(start.Add(wait)) || r.LeasedTo != nil || r.Text == nil || r.HTML == nil {
			t.Fatalf("after failure %d: %+v (last error %v)", i+1, r, r.LastError)
		}
		// Not due yet: a pass before the wait is over tries nothing.
		o.clock.Advance(wait - time.Second)
		if err := down.SendAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		if a := o.rows()[0].Attempts; a != i+1 {
			t.Fatalf("tried again before the wait was over (%d attempts)", a)
		}
		o.clock.Advance(time.Second)
	}
	if n := o.pending(); n != 1 {
		t.Errorf("pending = %d, want 1", n)
	}
	up := o.courier(smtp(t, m.smtp))
	if err := up.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := m.messages(t); len(got) != 1 || got[0].To[0] != "ann@partner.test" {
		t.Fatalf("received %+v", got)
	}
	if r := o.rows()[0]; r.SentAt == nil || r.Attempts != 3 || r.LastError != nil || r.Text != nil {
		t.Errorf("sent after two failures: %+v", r)
	}
}

// failing is a Sender that fails every time.
type failing struct{}

func (failing) Send(context.Context, mail.Message) error { return errors.New("mailbox full") }

// A message that keeps failing waits up to 6 hours between attempts and is given up after MaxAttempts;
// the others are sent meanwhile.
func TestOutboxGivesUp(t *testing.T) {
	t.Parallel()
	o := newOutbox(t)
	o.enqueue(invitation("full@partner.test"), true)
	c := o.courier(failing{})
	var waits []time.Duration
	for range mail.MaxAttempts + 2 {
		start := o.clock.Now()
		if err := c.SendAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		r := o.rows()[0]
		if r.Attempts > len(waits) {
			waits = append(waits, r.NextAt.Sub(start))
		}
		o.clock.Advance(7 * time.Hour)
	}
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, 64 * time.Minute, 128 * time.Minute, 256 * time.Minute, 6 * time.Hour, 6 * time.Hour}
	if !slices.Equal(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	r := o.rows()[0]
	if r.Attempts != mail.MaxAttempts || r.SentAt != nil || r.LastError == nil || *r.LastError != "mailbox full" {
		t.Errorf("given up: %+v", r)
	}
	if n := o.pending(); n != 0 {
		t.Errorf("pending = %d after giving up", n)
	}
	// Another message is sent meanwhile.
	box := mail.NewMailbox("noreply@reftrack.test", 10, o.clock.Now)
	o.enqueue(invitation("bob@partner.test"), true)
	if err := o.courier(box).SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := box.Messages(); len(got) != 1 || got[0].To != "bob@partner.test" {
		t.Errorf("sent %+v", got)
	}
}

// A courier that took a message and died holds it for the lease (2 minutes): another sends it after
// that, not before.
func TestOutboxLeaseOfACourierThatDied(t *testing.T) {
	t.Parallel()
	o := newOutbox(t)
	o.enqueue(invitation("ann@partner.test"), true)
	// The dead courier's pass: it leased the message (an attempt) and never came back.
	ctx, cancel := context.WithCancel(context.Background())
	dead := o.courier(senderFunc(func(context.Context, mail.Message) error { cancel(); return context.Canceled }))
	if _, err := dead.SendDue(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("the dead courier's pass: %v", err)
	}
	if r := o.rows()[0]; r.LeasedTo == nil || !r.LeasedTo.Equal(o.clock.Now().Add(2*time.Minute)) || r.Attempts != 1 || r.SentAt != nil {
		t.Fatalf("leased row = %+v", r)
	}
	box := mail.NewMailbox("noreply@reftrack.test", 10, o.clock.Now)
	other := o.courier(box)
	o.clock.Advance(2*time.Minute - time.Second)
	if err := other.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(box.Messages()); n != 0 {
		t.Fatalf("sent during the lease: %d", n)
	}
	o.clock.Advance(time.Second)
	if err := other.SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := box.Messages(); len(got) != 1 || got[0].To != "ann@partner.test" {
		t.Fatalf("after the lease: %+v", got)
	}
	if r := o.rows()[0]; r.Attempts != 2 || r.SentAt == nil {
		t.Errorf("row = %+v", r)
	}
}

type senderFunc func(context.Context, mail.Message) error

func (f senderFunc) Send(ctx context.Context, m mail.Message) error { return f(ctx, m) }

// counting sends through next and counts what it sent, by recipient.
type counting struct {
	next mail.Sender
	mu   sync.Mutex
	sent map[string]int
}

func (c *counting) Send(ctx context.Context, m mail.Message) error {
	if err := c.next.Send(ctx, m); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent[m.To]++
	return nil
}

// Two couriers (two replicas) passing at once send each message once.
func TestOutboxTwoCouriersSendEachOnce(t *testing.T) {
	t.Parallel()
	m := startMailpit(t)
	o := newOutbox(t)
	const n = 45
	for i := range n {
		o.enqueue(invitation(fmt.Sprintf("p%02d@partner.test", i)), true)
	}
	senders := []*counting{{next: smtp(t, m.smtp), sent: map[string]int{}}, {next: smtp(t, m.smtp), sent: map[string]int{}}}
	var wg sync.WaitGroup
	errs := make([]error, len(senders))
	start := make(chan struct{})
	for i, s := range senders {
		c := o.courier(s)
		wg.Go(func() {
			<-start
			errs[i] = c.SendAll(context.Background())
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	total := map[string]int{}
	for _, s := range senders {
		for to, k := range s.sent {
			total[to] += k
		}
	}
	for i := range n {
		if to := fmt.Sprintf("p%02d@partner.test", i); total[to] != 1 {
			t.Errorf("%s sent %d times", to, total[to])
		}
	}
	got := m.messages(t)
	if len(got) != n {
		t.Errorf("the server received %d messages, want %d", len(got), n)
	}
	for _, r := range o.rows() {
		if r.SentAt == nil || r.Attempts != 1 {
			t.Errorf("row %+v", r)
		}
	}
}

// A subject is a brand's text (its program's name): a line break in it cannot add a header (a Bcc), and
// reaches the recipient encoded, as one subject.
func TestOutboxSubjectAddsNoHeader(t *testing.T) {
	t.Parallel()
	m := startMailpit(t)
	o := newOutbox(t)
	msg := invitation("ann@partner.test")
	msg.Subject = "Acme\r\nBcc: victim@partner.test\r\nX-Injected: 1 invites you to its partner program"
	o.enqueue(msg, true)
	if err := o.courier(smtp(t, m.smtp)).SendAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := m.messages(t)
	if len(got) != 1 || !slices.Equal(got[0].To, []string{"ann@partner.test"}) || !strings.HasPrefix(got[0].Subject, "Acme") ||
		!strings.Contains(got[0].Subject, "invites you to its partner program") {
		t.Fatalf("received %+v", got)
	}
	var raw struct {
		Bcc []struct{ Address string }
	}
	var list struct {
		Messages []struct{ ID string }
	}
	get(t, "http://"+m.api+"/api/v1/messages", &list)
	get(t, "http://"+m.api+"/api/v1/message/"+list.Messages[0].ID, &raw)
	if len(raw.Bcc) != 0 {
		t.Errorf("the subject added a Bcc: %+v", raw.Bcc)
	}
	var headers map[string][]string
	get(t, "http://"+m.api+"/api/v1/message/"+list.Messages[0].ID+"/headers", &headers)
	if _, injected := headers["X-Injected"]; injected || len(headers["Subject"]) != 1 {
		t.Errorf("the subject added a header: %v", headers)
	}
}
