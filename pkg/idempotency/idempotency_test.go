package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/idempotency"
	"github.com/reftrack/reftrack/pkg/seed"
	"github.com/reftrack/reftrack/pkg/testkit/dbtest"
)

func TestNew(t *testing.T) {
	t.Parallel()
	if k, err := idempotency.New(1, ""); k != nil || err != nil {
		t.Errorf("no key: %v, %v", k, err)
	}
	for _, bad := range []string{strings.Repeat("k", 256), "\xff"} {
		if _, err := idempotency.New(1, bad); !errors.Is(err, idempotency.ErrKeyInvalid) {
			t.Errorf("key %q: %v", bad, err)
		}
	}
	a, _ := idempotency.New(1, strings.Repeat("é", 255), []byte("op"), []byte("ab"), []byte("c"))
	b, _ := idempotency.New(1, "k", []byte("op"), []byte("a"), []byte("bc"))
	c, _ := idempotency.New(1, "k", []byte("op"), []byte("ab"), []byte("c"))
	if a == nil || string(b.Hash) == string(c.Hash) || string(a.Hash) != string(c.Hash) {
		t.Error("parts are not told apart by the hash, or the same parts hash differently")
	}
}

// Requests with one key at once: exactly one acts, the others answer its answer; a request that fails
// leaves the key free; another request with the key is refused; a day later the key is free again.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := dbtest.New(t)
	s, err := seed.Run(ctx, d.DB, seed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var account int64
	if err := d.Get(&account, `SELECT id FROM accounts WHERE email = $1`, s.AccountEmail); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	k, _ := idempotency.New(account, "key-1", []byte("op"), []byte(`{"a":1}`))
	type answer struct{ N int64 }
	var acted atomic.Int64
	act := func(tx *sqlx.Tx) (answer, error) {
		return answer{N: acted.Add(1)}, nil
	}
	failing, _ := idempotency.New(account, "key-2", []byte("op"))
	if _, err := idempotency.Run(ctx, d.DB, failing, now, func(*sqlx.Tx) (answer, error) { return answer{}, errors.New("refused") }); err == nil {
		t.Fatal("the failing action's error was lost")
	}
	if got, err := idempotency.Run(ctx, d.DB, failing, now, act); err != nil || got.N != 1 {
		t.Fatalf("after a failure the key is free: %+v, %v", got, err)
	}
	var wg sync.WaitGroup
	answers := make([]answer, 8)
	for i := range answers {
		wg.Go(func() {
			a, err := idempotency.Run(ctx, d.DB, k, now, act)
			if err != nil {
				t.Error(err)
			}
			answers[i] = a
		})
	}
	wg.Wait()
	if acted.Load() != 2 {
		t.Fatalf("acted %d times, want once more", acted.Load())
	}
	for _, a := range answers {
		if a.N != 2 {
			t.Errorf("answer %+v, want the first's (2)", a)
		}
	}
	other, _ := idempotency.New(account, "key-1", []byte("op"), []byte(`{"a":2}`))
	if _, err := idempotency.Run(ctx, d.DB, other, now, act); !errors.Is(err, idempotency.ErrKeyReused) {
		t.Errorf("another request: %v", err)
	}
	if a, err := idempotency.Run(ctx, d.DB, k, now.Add(idempotency.Window), act); err != nil || a.N != 3 {
		t.Errorf("a day later: %+v, %v; want a new action", a, err)
	}
	if a, err := idempotency.Run(ctx, d.DB, nil, now, act); err != nil || a.N != 4 {
		t.Errorf("no key: %+v, %v", a, err)
	}
}
