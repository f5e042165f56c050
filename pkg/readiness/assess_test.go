package readiness_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/payments"
	"github.com/reftrack/reftrack/pkg/programs"
	"github.com/reftrack/reftrack/pkg/readiness"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// txt answers TXT lookups from its map.
type txt map[string][]string

func (r txt) LookupTXT(_ context.Context, name string) ([]string, error) {
	if v, ok := r[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func domainCheck(t *testing.T, r readiness.Report) readiness.Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.ID == "domain_verified" {
			return c
		}
	}
	t.Fatalf("no domain_verified check in %+v", r.Checks)
	return readiness.Check{}
}

// Assess checks DNS on the primary, reads the report where asked, and reads a program the read pool
// does not have (yet) from the primary.
func TestAssess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	var token string
	if err := f.db.Get(&token, `SELECT dns_token FROM programs WHERE id = $1`, f.program.ID); err != nil {
		t.Fatal(err)
	}
	rec := programs.DNSRecordOf(f.program.Domain, token)

	r, err := readiness.Assess(ctx, readiness.Sources{Primary: f.db.DB, DNS: txt{}}, f.program.ID, time.Now())
	if err != nil || r.ProgramID != f.program.ID || domainCheck(t, r).Status != readiness.Unknown {
		t.Fatalf("no record published: %+v, %v", r, err)
	}
	// A read pool without the program (a replica behind the primary): the primary answers.
	behind := dbtest.New(t)
	r, err = readiness.Assess(ctx, readiness.Sources{Primary: f.db.DB, Read: behind.DB, DNS: txt{rec.Name: {rec.Value}}}, f.program.ID,
		time.Now().Add(programs.DNSCheckInterval))
	if err != nil || r.ProgramID != f.program.ID || domainCheck(t, r).Status != readiness.Pass {
		t.Fatalf("record published, read pool behind: %+v, %v", r, err)
	}
	if _, err := readiness.Assess(ctx, readiness.Sources{Primary: f.db.DB}, f.program.ID+1000, time.Now()); !errors.Is(err, programs.ErrNotFound) {
		t.Errorf("no such program: %v, want programs.ErrNotFound", err)
	}
}

// ReadStatus: the program, its DNS check, the last day's activity and its Stripe connection.
func TestReadStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	st, err := readiness.ReadStatus(ctx, f.db.DB, txt{}, f.program.ID, time.Now())
	if err != nil || st.Program.ID != f.program.ID || st.DNS.Verified || st.DNS.Record.Name != "_reftrack.shop.example.com" ||
		st.Activity != (readiness.Activity{}) || st.Stripe != nil {
		t.Fatalf("a new program: %+v, %v", st, err)
	}
	if _, err := payments.Connect(ctx, f.db.DB, f.program.ID, payments.ProviderStripe, "whsec_test"); err != nil {
		t.Fatal(err)
	}
	if st, err = readiness.ReadStatus(ctx, f.db.DB, txt{}, f.program.ID, time.Now()); err != nil || st.Stripe == nil || st.Stripe.ChargesEnabled {
		t.Errorf("connected to Stripe: %+v, %v", st, err)
	}
	if _, err := readiness.ReadStatus(ctx, f.db.DB, txt{}, f.program.ID+1000, time.Now()); !errors.Is(err, programs.ErrNotFound) {
		t.Errorf("no such program: %v, want programs.ErrNotFound", err)
	}
}
