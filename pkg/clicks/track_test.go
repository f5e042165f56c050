package clicks

import (
	"context"
	"errors"
	"testing"

	"github.com/reftrack/reftrack/pkg/apikeys"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

// Track refuses a test click whose key and program_id disagree, recording nothing, and records the rest.
func TestTrackChecksTheTestProgram(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	s, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(d.DB, quiet(), 1, 8, nil)
	defer rec.Close()
	other := s.ProgramID + 1
	key := apikeys.Claim{HasKey: true, KeyProgramID: s.ProgramID, Named: &other}

	in := Input{AffiliateURL: s.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua", Test: true}
	if _, err := rec.Track(ctx, in, key); !errors.Is(err, apikeys.ErrProgramMismatch) {
		t.Fatalf("test click naming another program than its key's: %v, want ErrProgramMismatch", err)
	}
	var n int
	if err := d.Get(&n, `SELECT count(*) FROM clicks`); err != nil || n != 0 {
		t.Fatalf("%d clicks recorded after the refusal (%v), want none", n, err)
	}
	key.Named = &s.ProgramID
	if res, err := rec.Track(ctx, in, key); err != nil || res.ProgramID != s.ProgramID {
		t.Fatalf("test click naming its key's program: %+v, %v", res, err)
	}
	// Outside test mode the program named is not checked.
	key.Named = &other
	in.Test, in.IP = false, "10.0.0.2"
	if res, err := rec.Track(ctx, in, key); err != nil || res.ProgramID != s.ProgramID {
		t.Fatalf("real click: %+v, %v", res, err)
	}
}
