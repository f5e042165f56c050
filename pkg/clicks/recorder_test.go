package clicks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testJob builds what Record queues, with a chosen click id, for driving flush directly.
func testJob(t *testing.T, in Input, clickID string) *job {
	t.Helper()
	j, err := newJob(in)
	if err != nil {
		t.Fatal(err)
	}
	j.clickID = clickID
	return j
}

func TestOneBatchAnswersEachClickOnItsOwn(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	ok, err := seed.Run(ctx, d.DB, seed.Options{Origins: []string{"https://www.shop.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	off, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`UPDATE referral_links SET enabled = false WHERE id = $1`, off.LinkID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO referral_links (short_link) VALUES ('orphan')`); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(d.DB, quiet(), 1, 128, nil)
	defer rec.Close()

	// An earlier click of one visitor, which the batch must answer again.
	earlier, err := rec.Record(ctx, Input{AffiliateURL: ok.AffiliateURL, IP: "10.0.0.9", UserAgent: "ua"})
	if err != nil || !earlier.Created {
		t.Fatalf("earlier click: %+v, %v", earlier, err)
	}
	cases := []struct {
		in      Input
		wantErr error
		repeat  bool
	}{
		{in: Input{AffiliateURL: ok.AffiliateURL, IP: "10.0.0.1", UserAgent: "ua"}},
		{in: Input{AffiliateURL: "https://shop.example.com/?aff=nope", IP: "10.0.0.2"}, wantErr: ErrLinkNotFound},
		{in: Input{AffiliateURL: off.AffiliateURL, IP: "10.0.0.3"}, wantErr: ErrLinkDisabled},
		{in: Input{AffiliateURL: "https://shop.example.com/?aff=orphan", IP: "10.0.0.4"}, wantErr: ErrLinkMisconfigured},
		{in: Input{AffiliateURL: ok.AffiliateURL, IP: "10.0.0.5", Origin: "https://evil.example"}, wantErr: ErrOriginNotAllowed},
		{in: Input{AffiliateURL: ok.AffiliateURL, IP: "10.0.0.6", Origin: "https://www.shop.example.com", Test: true}},
		{in: Input{AffiliateURL: ok.AffiliateURL, IP: "10.0.0.9", UserAgent: "ua"}, repeat: true},
		{in: Input{AffiliateURL: ok.AffiliateURL, IP: "not an ip", UserAgent: "ua"}},
	}
	batch := make([]*job, len(cases))
	for i, c := range cases {
		id, _ := NewClickID(time.Now())
		batch[i] = testJob(t, c.in, id)
	}
	rec.flush(batch)
	for i, c := range cases {
		o := <-batch[i].done
		switch {
		case c.wantErr != nil:
			if !errors.Is(o.err, c.wantErr) {
				t.Errorf("case %d: err = %v, want %v", i, o.err, c.wantErr)
			}
		case o.err != nil:
			t.Errorf("case %d: %v", i, o.err)
		case c.repeat:
			if o.res.Created || o.res.ClickID != earlier.ClickID {
				t.Errorf("case %d: repeat visitor got %+v, want the earlier click %s", i, o.res, earlier.ClickID)
			}
		default:
			if !o.res.Created || o.res.ClickID != batch[i].clickID || o.res.ProgramID != ok.ProgramID || o.res.CookieWindowDays != 60 {
				t.Errorf("case %d: %+v", i, o.res)
			}
			var test bool
			if err := d.Get(&test, `SELECT is_test FROM clicks WHERE id = $1 AND click_id = $2`, o.res.ID, o.res.ClickID); err != nil || test != c.in.Test {
				t.Errorf("case %d: stored row: test %v, %v", i, test, err)
			}
		}
	}
	var n int
	_ = d.Get(&n, `SELECT count(*) FROM clicks`)
	if n != 4 { // the earlier one and three new
		t.Errorf("%d clicks stored, want 4", n)
	}
}

// A batch that fails as a whole is written click by click, so only the bad click fails.
func TestFailedBatchFallsBackToSingleClicks(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	r, err := seed.Run(context.Background(), d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(d.DB, quiet(), 1, 128, nil)
	defer rec.Close()
	same, _ := NewClickID(time.Now())
	other, _ := NewClickID(time.Now())
	a := testJob(t, Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.1"}, same)
	b := testJob(t, Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.2"}, same) // violates click_id's uniqueness
	c := testJob(t, Input{AffiliateURL: r.AffiliateURL, IP: "10.0.0.3"}, other)
	rec.flush([]*job{a, b, c})
	oa, ob, oc := <-a.done, <-b.done, <-c.done
	if oa.err != nil || oc.err != nil || ob.err == nil {
		t.Errorf("outcomes: a %v, b %v, c %v; want only b to fail", oa.err, ob.err, oc.err)
	}
	var n int
	_ = d.Get(&n, `SELECT count(*) FROM clicks`)
	if n != 2 {
		t.Errorf("%d clicks stored, want 2", n)
	}
}

// Concurrent clicks are all written and answered; Close waits for the queue to drain.
func TestConcurrentClicksAndClose(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	r, err := seed.Run(context.Background(), d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		batches []int
	)
	rec := NewRecorder(d.DB, quiet(), 1, 16, func(size int, _ time.Duration) {
		mu.Lock()
		batches = append(batches, size)
		mu.Unlock()
	})
	const n = 200
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rec.Record(context.Background(), Input{AffiliateURL: r.AffiliateURL, IP: fmt.Sprintf("10.1.%d.%d", i/200, i%200+1)})
			if err != nil {
				t.Error(err)
				return
			}
			ids <- res.ClickID
		}()
	}
	wg.Wait()
	rec.Close()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	var stored int
	_ = d.Get(&stored, `SELECT count(*) FROM clicks`)
	if len(seen) != n || stored != n {
		t.Errorf("%d distinct answers, %d stored; want %d", len(seen), stored, n)
	}
	total, largest := 0, 0
	for _, s := range batches {
		total += s
		largest = max(largest, s)
	}
	if total != n || largest > 16 {
		t.Errorf("batches %v: total %d, largest %d; want %d in batches of at most 16", batches, total, largest, n)
	}
	// Closed twice is fine; a click after Close is refused by the closed queue (a programming error).
	rec.Close()
}
