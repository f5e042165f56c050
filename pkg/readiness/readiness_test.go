package readiness_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/accounts"
	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/counting"
	"github.com/reftrack/reftrack/pkg/events"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/synthetic"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fixture is a program as `reftrack init` makes it (no partner yet), with the recorders that the
// synthetic chain and real events go through.
type fixture struct {
	db      *dbtest.Database
	program programs.Program
	clicks  *clicks.Recorder
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	d := dbtest.New(t)
	account, err := accounts.Create(ctx, d.DB, accounts.NewAccount{Email: "brand@example.com", Name: "Brand"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := accounts.CreateWorkspace(ctx, d.DB, "Brand's workspace", account, "brand@example.com")
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := programs.Create(ctx, d.DB, programs.New{WorkspaceID: ws, Name: "Shop", Domain: "shop.example.com",
		CommissionType: "percent", CommissionRate: "20", CreatedBy: account})
	if err != nil {
		t.Fatal(err)
	}
	rec := clicks.NewRecorder(d.DB, quiet(), 1, 8, nil)
	t.Cleanup(rec.Close)
	return fixture{db: d, program: p, clicks: rec}
}

func (f fixture) chain(t *testing.T) {
	t.Helper()
	r := &synthetic.Runner{DB: f.db.DB, Log: quiet(), Click: f.clicks.Record, Now: time.Now}
	ch, err := r.RunChain(context.Background(), f.program.ID)
	if err != nil || !ch.Attributed() {
		t.Fatalf("chain: %+v, %v", ch, err)
	}
}

func (f fixture) report(t *testing.T) readiness.Report {
	t.Helper()
	r, err := readiness.Compute(context.Background(), f.db.DB, f.program.ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func blocker(r readiness.Report) string {
	if r.Blocker == nil {
		return ""
	}
	return *r.Blocker
}

// The payout gate wants a real partner with a link: the synthetic chain's partner and link (never paid)
// do not count.
func TestPayoutGateCountsRealPartnersOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	payout := func(when, want string) {
		t.Helper()
		r := f.report(t)
		if got := r.Gates["payout"].Status; got != want {
			t.Errorf("%s: payout gate %s, want %s", when, got, want)
		}
		if want == readiness.Fail && (r.State != "configuring" || blocker(r) != "payout") {
			t.Errorf("%s: state %s, blocker %q; want configuring, blocked by payout", when, r.State, blocker(r))
		}
	}
	payout("no partner", readiness.Fail)

	f.chain(t)
	list, err := programs.Partners(ctx, f.db.DB, f.program.ID)
	if err != nil || len(list) != 1 || !list[0].Synthetic {
		t.Fatalf("partners after the chain = %+v, %v; want the synthetic one", list, err)
	}
	payout("only the synthetic partner, with its enabled link", readiness.Fail)

	real, err := programs.AddPartner(ctx, f.db.DB, f.program.ID, programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	if err != nil || real.Synthetic {
		t.Fatalf("real partner = %+v, %v", real, err)
	}
	payout("a real partner without a link", readiness.Fail)

	link, err := programs.CreateLink(ctx, f.db.DB, f.program.ID, real.ID, "pat")
	if err != nil {
		t.Fatal(err)
	}
	payout("a real partner with a link", readiness.Pass)
	if r := f.report(t); r.State != "ready" || blocker(r) != "tracking" {
		t.Errorf("with a real partner: state %s, blocker %q; want ready, blocked by tracking", r.State, blocker(r))
	}

	if _, err := programs.SetLinkEnabled(ctx, f.db.DB, link.ID, false); err != nil {
		t.Fatal(err)
	}
	payout("the real partner's link switched off", readiness.Fail)
}

// What `reftrack status` shows: real events since the time asked, real partners, pending commissions.
func TestRecentActivity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	activity := func(since time.Time) readiness.Activity {
		t.Helper()
		a, err := readiness.RecentActivity(ctx, f.db.DB, f.program.ID, since)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	dayAgo := time.Now().Add(-24 * time.Hour)

	f.chain(t) // test events and the synthetic partner: none of it counts
	if got := activity(dayAgo); got != (readiness.Activity{}) {
		t.Errorf("after the synthetic chain: %+v, want nothing", got)
	}

	real, err := programs.AddPartner(ctx, f.db.DB, f.program.ID, programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := programs.CreateLink(ctx, f.db.DB, f.program.ID, real.ID, "pat"); err != nil {
		t.Fatal(err)
	}
	c, err := f.clicks.Record(ctx, clicks.Input{AffiliateURL: "https://shop.example.com/?aff=pat", IP: "10.0.0.1", UserAgent: "ua"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leads.Track(ctx, f.db.DB, quiet(), leads.Input{ProgramID: f.program.ID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: "cust-1", Source: leads.SourceServer}); err != nil {
		t.Fatal(err)
	}
	if _, err := sales.Record(ctx, f.db.DB, quiet(), time.Now, sales.Input{ProgramID: f.program.ID, TransactionID: "order-1",
		AmountCents: 5000, Currency: "USD", CustomerKey: "cust-1", OccurredAt: time.Now(), Source: sales.SourceAPI}); err != nil {
		t.Fatal(err)
	}
	want := readiness.Activity{Clicks: 1, Leads: 1, Sales: 1, ActivePartners: 1, PendingCommissions: 1}
	if got := activity(dayAgo); got != want {
		t.Errorf("after a real click, lead and sale: %+v, want %+v", got, want)
	}
	// Events before the time asked do not count; partners and commissions are not events.
	want = readiness.Activity{ActivePartners: 1, PendingCommissions: 1}
	if got := activity(time.Now().Add(time.Minute)); got != want {
		t.Errorf("since a minute ahead: %+v, want %+v", got, want)
	}
}

// WithDNS puts a DNS check's answer (made on the primary) into a report read elsewhere, touching nothing
// but the domain_verified check and leaving the report it was given as it was. A program the database
// does not have is ErrNoProgram.
func TestWithDNSAndNoProgram(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.report(t)
	domain := func(r readiness.Report) readiness.Check {
		for _, c := range r.Checks {
			if c.ID == "domain_verified" {
				return c
			}
		}
		t.Fatalf("no domain_verified check in %+v", r.Checks)
		return readiness.Check{}
	}
	if c := domain(before); c.Status != readiness.Unknown {
		t.Fatalf("unverified program: %+v", c)
	}
	verified := before.WithDNS(programs.DNSStatus{Verified: true})
	if c := domain(verified); c.Status != readiness.Pass || c.Hint != "Done." {
		t.Errorf("after a verifying DNS check: %+v", c)
	}
	if c := domain(before); c.Status != readiness.Unknown {
		t.Errorf("WithDNS changed the report it was given: %+v", c)
	}
	if verified.State != before.State || blocker(verified) != blocker(before) || len(verified.Checks) != len(before.Checks) {
		t.Errorf("WithDNS changed more than the check: %+v, was %+v", verified, before)
	}
	if again := verified.WithDNS(programs.DNSStatus{Record: programs.DNSRecordOf("shop.example.com", "tok")}); domain(again).Status != readiness.Unknown ||
		domain(again).Hint == "Done." {
		t.Errorf("unverified DNS check: %+v", domain(again))
	}
	if _, err := readiness.Compute(context.Background(), f.db.DB, f.program.ID+1000, time.Now()); !errors.Is(err, readiness.ErrNoProgram) {
		t.Errorf("missing program: %v, want ErrNoProgram", err)
	}
}

// The 24-hour counts add the hourly counts after the cut hour to the rows of the cut hour: they must equal
// the rows themselves, at the edges too (an event just before and just after the start, in the cut hour,
// in whole hours, at now and after it), bots, test events and provisional leads left out.
func TestCountsSinceMatchTheRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	partner, err := programs.AddPartner(ctx, f.db.DB, f.program.ID, programs.NewPartner{Name: "Pat", Email: "pat@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	link, err := programs.CreateLink(ctx, f.db.DB, f.program.ID, partner.ID, "pat")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	since := now.Add(-24 * time.Hour).Truncate(time.Hour).Add(17*time.Minute + 3*time.Second) // inside an hour
	at := []time.Duration{-time.Second, 0, time.Second, 30 * time.Minute, 43 * time.Minute, 3 * time.Hour, 23 * time.Hour, 24*time.Hour + time.Hour}
	var ds []counting.Delta // what the events count for, added as their writers add it
	for i, d := range at {
		key := counting.Key{ProgramID: f.program.ID, Hour: counting.HourOf(since.Add(d)), PartnerID: partner.ID}
		// A settled lead, a provisional one (listed, counted nowhere) and a test one.
		for _, kind := range []struct{ test, provisional bool }{{false, false}, {false, true}, {true, false}} {
			class := counting.Lead(kind.test, kind.provisional)
			if _, err := f.db.Exec(`INSERT INTO leads (program_id, status, source, settled_at, lead_timestamp, is_test, counts_as)
				VALUES ($1, $2, 'server', CASE WHEN $2 = 'settled' THEN $3::timestamptz END, $3, $4, NULLIF($5, ''))`,
				f.program.ID, map[bool]string{true: "provisional", false: "settled"}[kind.provisional], since.Add(d), kind.test, class); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, counting.Delta{Key: key, Measures: counting.LeadMeasures(class)})
		}
		for _, kind := range []struct{ test, bot bool }{{false, false}, {true, false}, {false, true}} {
			ds = append(ds, counting.Delta{Key: key, Measures: counting.Click(kind.test, kind.bot)})
			// A click_id carries the click's month, here the current one (click_month's default).
			if _, err := f.db.Exec(`INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url, click_timestamp, is_test, is_bot)
				VALUES (to_char(now() AT TIME ZONE 'UTC', 'YYMM') || lpad($1, 22, '0'), $2, $3, $4, 'https://shop.example.com/?aff=pat', $5, $6, $7)`,
				"edge-"+time.Duration(i).String()+"-"+map[bool]string{true: "t", false: "r"}[kind.test]+map[bool]string{true: "b", false: "h"}[kind.bot],
				f.program.ID, link.ID, partner.ID, since.Add(d), kind.test, kind.bot); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := events.Add(ctx, f.db.DB, ds...); err != nil {
		t.Fatal(err)
	}
	var want int
	if err := f.db.Get(&want, `SELECT count(*) FROM clicks WHERE program_id = $1 AND NOT is_test AND NOT is_bot AND click_timestamp > $2`, f.program.ID, since); err != nil {
		t.Fatal(err)
	}
	if want != 6 {
		t.Fatalf("the fixture has %d counted clicks after the start, want 6", want)
	}
	var wantLeads int // settled, real: a provisional lead counts nowhere
	if err := f.db.Get(&wantLeads, `SELECT count(*) FROM leads WHERE program_id = $1 AND status = 'settled' AND NOT is_test AND lead_timestamp > $2`,
		f.program.ID, since); err != nil || wantLeads != 6 {
		t.Fatalf("the fixture has %d settled leads after the start (%v), want 6", wantLeads, err)
	}
	a, err := readiness.RecentActivity(ctx, f.db.DB, f.program.ID, since)
	if err != nil {
		t.Fatal(err)
	}
	if a.Clicks != want || a.Leads != wantLeads {
		t.Errorf("counted %d clicks and %d leads since %s, the rows say %d and %d", a.Clicks, a.Leads, since.Format(time.RFC3339), want, wantLeads)
	}
	// The same after the deltas are folded into the hourly table (the server does it every second).
	if _, err := f.db.Exec(`SELECT roll_up_performance()`); err != nil {
		t.Fatal(err)
	}
	if a, err = readiness.RecentActivity(ctx, f.db.DB, f.program.ID, since); err != nil || a.Clicks != want || a.Leads != wantLeads {
		t.Errorf("after the roll-up: %d clicks and %d leads (%v), want %d and %d", a.Clicks, a.Leads, err, want, wantLeads)
	}
}
