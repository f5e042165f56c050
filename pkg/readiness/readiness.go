// Package readiness tells an integrator, gate by gate and check by check, what a program still needs
// before it goes live.
package readiness

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/programs"
)

// Gate and check statuses.
const (
	Pass    = "pass"
	Fail    = "fail"
	Unknown = "unknown"
)

// GateNames in the order they are passed.
var GateNames = []string{"profile", "economics", "payout", "tracking", "live"}

// Gate is one stage of going live.
type Gate struct {
	Status     string
	NextAction *string
	// Verdict is the last synthetic chain's verdict per step (live gate only, once a chain ran).
	Verdict *Verdict
}

// Verdict is a synthetic chain's verdict per step.
type Verdict struct {
	Click string `db:"click_verdict"`
	Lead  string `db:"lead_verdict"`
	Sale  string `db:"sale_verdict"`
}

// Check is one thing the integration must have done.
type Check struct {
	ID     string
	Status string
	Hint   string
}

// Report is a program's readiness.
type Report struct {
	ProgramID           int64
	State               string
	IntegrationVerified bool
	Blocker             *string
	Gates               map[string]Gate
	Checks              []Check
	LastClick           *time.Time
	LastLead            *time.Time
	LastSale            *time.Time
	Clicks24h           int
	Leads24h            int
	Sales24h            int
	KeyRotatedAt        *time.Time
}

// PollSeconds is how often a client may poll readiness.
const PollSeconds = 30

// ErrNoProgram means the program is not in the database read: deleted, or, on a replica, created less
// than the replica's lag ago.
var ErrNoProgram = errors.New("readiness: no such program")

// Compute reads the program's facts (readFacts) and passes them through the gates (report). The
// 24-hour counts end at now.
func Compute(ctx context.Context, db *sqlx.DB, programID int64, now time.Time) (Report, error) {
	f, err := readFacts(ctx, db, programID, now)
	if err != nil {
		return Report{}, err
	}
	return report(programID, f), nil
}

// Sources is where Assess reads: the primary, which the DNS check writes to, the resolver it asks, and
// the database the rest of the report is read from (a replica may trail the primary; nil: the primary).
type Sources struct {
	Primary *sqlx.DB
	Read    *sqlx.DB
	DNS     programs.TXTResolver
}

// Assess checks the program's domain in DNS (programs.CheckDNS, on the primary) and reports its
// readiness from src.Read, with the DNS check's own answer, which a replica may not have yet. A program
// created less than the replica's lag ago is read from the primary.
func Assess(ctx context.Context, src Sources, programID int64, now time.Time) (Report, error) {
	dns, err := programs.CheckDNS(ctx, src.Primary, src.DNS, programID, now)
	if err != nil {
		return Report{}, err
	}
	read := src.Read
	if read == nil {
		read = src.Primary
	}
	r, err := Compute(ctx, read, programID, now)
	if errors.Is(err, ErrNoProgram) && read != src.Primary {
		r, err = Compute(ctx, src.Primary, programID, now)
	}
	if err != nil {
		return Report{}, err
	}
	return r.WithDNS(dns), nil
}

// domainCheck is the optional domain_verified check: pass once verified, else unknown with the record to
// publish.
func domainCheck(verified bool, rec programs.DNSRecord) Check {
	if verified {
		return Check{ID: "domain_verified", Status: Pass, Hint: "Done."}
	}
	return Check{ID: "domain_verified", Status: Unknown, Hint: dnsHint(rec)}
}

// WithDNS is r with its domain_verified check as st, a DNS check made on the primary, says: that check
// may have just recorded the verification, which a report read from a replica does not show yet. The
// check is optional and in no gate, so nothing else changes.
func (r Report) WithDNS(st programs.DNSStatus) Report {
	r.Checks = slices.Clone(r.Checks)
	for i, c := range r.Checks {
		if c.ID == "domain_verified" {
			r.Checks[i] = domainCheck(st.Verified, st.Record)
		}
	}
	return r
}

// dnsHint says which DNS record proves the program's domain.
func dnsHint(r programs.DNSRecord) string {
	return "Optional: prove the domain is yours with a DNS TXT record " + r.Name + " whose value is " + r.Value + "."
}
