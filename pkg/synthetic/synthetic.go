// Package synthetic runs the CLI's test events: one test click, lead or sale, or a synthetic
// click → lead → sale chain through the real recording paths, all marked is_test, on a fixture partner
// and referral link of the program.
package synthetic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/clicks"
	"github.com/reftrack/reftrack/pkg/leads"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/sales"
	"github.com/reftrack/reftrack/pkg/secret"
)

// ChainsPerHour caps synthetic chains per program.
const ChainsPerHour = 10

// Verdicts of a chain step.
const (
	Attributed   = "attributed"
	Unattributed = "unattributed"
	WrongPartner = "wrong_partner"
	Pending      = "pending"
)

// Markers that every test event recorded here carries, so that a reader of the events list (the
// dashboard) can tell them from other test-mode events without a field the interface does not have: a
// click's session_id, a lead's customer_key and a sale's transaction ID (its processor_event_id) start
// with them. They are only meaningful on is_test events: real events are never synthetic. The sale's
// prefix is not the SDK's test-mode default (test_txn_), which an integrator's own test sales carry.
const (
	SessionPrefix     = "synthetic-"
	CustomerKeyPrefix = "synthetic_"
	TransactionPrefix = "synthetic_txn_"
)

// ErrChainFailed marks a chain that failed on the service's side (anything but its hourly cap).
var ErrChainFailed = errors.New("synthetic chain failed")

// CapError refuses a chain over the hourly cap.
type CapError struct{ RetryAfter time.Duration }

func (e *CapError) Error() string { return "too many synthetic chains" }

// Runner records test events for one program.
type Runner struct {
	DB  *sqlx.DB
	Log *slog.Logger
	// Click records a click through the click endpoint's recorder.
	Click func(context.Context, clicks.Input) (clicks.Result, error)
	Now   func() time.Time
}

// Fixture is the program's synthetic partner and link.
type Fixture struct {
	Program   programs.Program
	PartnerID int64
	ShortLink string
}

// fixture creates (or refreshes: re-enables) the program's synthetic partner (marked synthetic: never
// paid, left out of partner counts) and referral link.
func (r *Runner) fixture(ctx context.Context, programID int64) (Fixture, error) {
	p, err := programs.Get(ctx, r.DB, programID)
	if err != nil {
		return Fixture{}, err
	}
	partner, err := programs.AddPartner(ctx, r.DB, programID, programs.NewPartner{Name: "reftrack synthetic partner",
		Email: "synthetic+" + strconv.FormatInt(programID, 10) + "@reftrack.test", Synthetic: true})
	if err != nil {
		return Fixture{}, err
	}
	short := "rt-synthetic-" + strconv.FormatInt(programID, 10)
	if err := programs.EnsureLink(ctx, r.DB, programID, partner.ID, short); err != nil {
		return Fixture{}, fmt.Errorf("synthetic link: %w", err)
	}
	return Fixture{Program: p, PartnerID: partner.ID, ShortLink: short}, nil
}

func (f Fixture) affiliateURL() string {
	u := url.URL{Scheme: "https", Host: f.Program.Domain, Path: "/", RawQuery: "aff=" + url.QueryEscape(f.ShortLink)}
	if strings.ContainsAny(f.Program.Domain, "/:") {
		if parsed, err := url.Parse(f.Program.Domain); err == nil && parsed.Host != "" {
			u.Host = parsed.Host
		}
	}
	return u.String()
}

// click records a fresh test click on the fixture link (a new synthetic visitor each time).
func (r *Runner) click(ctx context.Context, f Fixture) (clicks.Result, error) {
	visitor, err := secret.RandomString(12)
	if err != nil {
		return clicks.Result{}, err
	}
	return r.Click(ctx, clicks.Input{AffiliateURL: f.affiliateURL(), PageURL: f.affiliateURL(), SessionID: SessionPrefix + visitor,
		UserAgent: "reftrack-synthetic/1 (" + visitor + ")", Test: true})
}

// Single is one test event's outcome.
type Single struct {
	EventType  string
	EventID    int64
	Attributed bool
	Message    string
}

// One records a single test event: a click, a lead (on a new test click) or a sale (on a new test
// click and lead).
func (r *Runner) One(ctx context.Context, programID int64, eventType string) (Single, error) {
	out, err := r.one(ctx, programID, eventType)
	if err != nil {
		// %v, not %w: a refusal met while recording the test event is the event's failure, not the caller's.
		return Single{}, fmt.Errorf("test %s event: %v", eventType, err)
	}
	return out, nil
}

func (r *Runner) one(ctx context.Context, programID int64, eventType string) (Single, error) {
	f, err := r.fixture(ctx, programID)
	if err != nil {
		return Single{}, err
	}
	c, err := r.click(ctx, f)
	if err != nil {
		return Single{}, err
	}
	out := Single{EventType: eventType, EventID: c.ID, Attributed: c.PartnerID == f.PartnerID, Message: "Test click recorded"}
	if eventType == "click" {
		return out, nil
	}
	key := CustomerKeyPrefix + c.ClickID
	l, err := leads.Track(ctx, r.DB, r.Log, leads.Input{ProgramID: programID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: key, Test: true, Source: leads.SourceCLITest})
	if err != nil {
		return Single{}, err
	}
	out.EventID, out.Message = *l.LeadID, "Test lead recorded"
	out.Attributed = l.Attribution.PartnerID != nil && *l.Attribution.PartnerID == f.PartnerID
	if eventType == "lead" {
		return out, nil
	}
	s, err := sales.Record(ctx, r.DB, r.Log, r.Now, sales.Input{ProgramID: programID, TransactionID: r.transactionID(),
		AmountCents: 1000, CustomerKey: key, OccurredAt: r.Now(), Test: true, Source: sales.SourceCLITest})
	if err != nil {
		return Single{}, err
	}
	out.EventID, out.Message = s.SaleID, "Test sale recorded"
	out.Attributed = s.Attribution.PartnerID != nil && *s.Attribution.PartnerID == f.PartnerID
	return out, nil
}

// Chain is a synthetic chain's outcome.
type Chain struct {
	ShortCode   string
	CustomerKey string
	Click       string
	Lead        string
	Sale        string
}

// Attributed reports whether every step reached the fixture partner.
func (c Chain) Attributed() bool {
	return c.Click == Attributed && c.Lead == Attributed && c.Sale == Attributed
}

// RunChain runs click → lead → sale through the real paths and stores the run. The fixture is created or
// refreshed before the hourly cap is checked.
func (r *Runner) RunChain(ctx context.Context, programID int64) (Chain, error) {
	ch, err := r.runChain(ctx, programID)
	var capped *CapError
	if err != nil && !errors.As(err, &capped) {
		// %v, not %w: a refusal met inside the chain is the chain's failure, not the caller's refusal.
		return Chain{}, fmt.Errorf("%w: %v", ErrChainFailed, err)
	}
	return ch, err
}

func (r *Runner) runChain(ctx context.Context, programID int64) (Chain, error) {
	f, err := r.fixture(ctx, programID)
	if err != nil {
		return Chain{}, err
	}
	now := r.Now()
	var runs []time.Time
	if err := r.DB.SelectContext(ctx, &runs, `SELECT created_at FROM synthetic_chains WHERE program_id = $1 AND created_at > $2
		ORDER BY created_at`, programID, now.Add(-time.Hour)); err != nil {
		return Chain{}, err
	}
	if len(runs) >= ChainsPerHour {
		return Chain{}, &CapError{RetryAfter: runs[len(runs)-ChainsPerHour].Add(time.Hour).Sub(now)}
	}

	ch := Chain{ShortCode: f.ShortLink, Click: Pending, Lead: Pending, Sale: Pending}
	c, err := r.click(ctx, f)
	if err != nil {
		return Chain{}, err
	}
	ch.Click = verdict(&c.PartnerID, f.PartnerID)
	ch.CustomerKey = CustomerKeyPrefix + c.ClickID
	l, err := leads.Track(ctx, r.DB, r.Log, leads.Input{ProgramID: programID, ServerMode: true, ClickID: c.ClickID,
		CustomerKey: ch.CustomerKey, Test: true, Source: leads.SourceCLITest})
	if err == nil {
		ch.Lead = verdict(l.Attribution.PartnerID, f.PartnerID)
		s, err := sales.Record(ctx, r.DB, r.Log, r.Now, sales.Input{ProgramID: programID, TransactionID: r.transactionID(),
			AmountCents: 1000, CustomerKey: ch.CustomerKey, OccurredAt: r.Now(), Test: true, Source: sales.SourceCLITest})
		switch {
		case err == nil && s.Window.Expired:
			ch.Sale = Unattributed
		case err == nil:
			ch.Sale = verdict(s.Attribution.PartnerID, f.PartnerID)
		case isAttributionError(err):
			ch.Sale = Unattributed
		default:
			return Chain{}, err
		}
	} else if isLeadRefusal(err) {
		ch.Lead = Unattributed
	} else {
		return Chain{}, err
	}
	if _, err := r.DB.ExecContext(ctx, `INSERT INTO synthetic_chains (program_id, short_code, customer_key, click_verdict, lead_verdict, sale_verdict, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, programID, ch.ShortCode, ch.CustomerKey, ch.Click, ch.Lead, ch.Sale, now); err != nil {
		return Chain{}, err
	}
	return ch, nil
}

// transactionID is a new synthetic sale's transaction ID.
func (r *Runner) transactionID() string {
	return TransactionPrefix + strconv.FormatInt(r.Now().UnixNano(), 10)
}

func verdict(got *int64, want int64) string {
	switch {
	case got == nil:
		return Unattributed
	case *got != want:
		return WrongPartner
	}
	return Attributed
}

func isAttributionError(err error) bool {
	return errors.Is(err, sales.ErrCustomerNotFound) || errors.Is(err, sales.ErrOtherProgram) ||
		errors.Is(err, sales.ErrNoPartnerProgram) || errors.Is(err, sales.ErrNoPartner)
}

func isLeadRefusal(err error) bool {
	var status *leads.StatusError
	return errors.As(err, &status) || errors.Is(err, leads.ErrCustomerNotFound) || errors.Is(err, leads.ErrOtherProgram)
}
