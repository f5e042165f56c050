package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// stores runs the same suite against every Store: in process, and Redis when one answers
// (REDIS_URL, default redis://127.0.0.1:6379/0).
func stores(t *testing.T) map[string]func(t *testing.T) Store {
	return map[string]func(t *testing.T) Store{
		"memory": func(*testing.T) Store { return NewMemory() },
		"redis": func(t *testing.T) Store {
			url := os.Getenv("REDIS_URL")
			if url == "" {
				url = "redis://127.0.0.1:6379/0"
			}
			opts, err := redis.ParseURL(url)
			if err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(opts)
			t.Cleanup(func() { c.Close() })
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Skipf("no Redis at %s: %v", url, err)
			}
			var b [6]byte
			_, _ = rand.Read(b[:])
			return NewRedis(c, "reftrack-test:"+hex.EncodeToString(b[:])+":")
		},
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestLimiter(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)}
			l := New(newStore(t), clk.now)
			reset := time.Date(2026, 11, 22, 10, 1, 0, 0, time.UTC)

			for i := 1; i <= 3; i++ {
				r, err := l.Allow(ctx, "click", "ip:1", 3)
				if err != nil {
					t.Fatal(err)
				}
				if !r.Allowed || r.Remaining != 3-i || r.Limit != 3 || !r.Reset.Equal(reset) {
					t.Fatalf("request %d: %+v", i, r)
				}
			}
			r, _ := l.Allow(ctx, "click", "ip:1", 3)
			if r.Allowed || r.Remaining != 0 {
				t.Fatalf("4th request: %+v, want refused", r)
			}
			if got := r.RetryAfter(clk.now()); got != 45 {
				t.Errorf("RetryAfter = %d, want 45", got)
			}
			// Other ids and other buckets have their own counts.
			if r, _ := l.Allow(ctx, "click", "ip:2", 3); !r.Allowed || r.Remaining != 2 {
				t.Errorf("other id: %+v", r)
			}
			if r, _ := l.Allow(ctx, "lead", "ip:1", 3); !r.Allowed || r.Remaining != 2 {
				t.Errorf("other bucket: %+v", r)
			}
			// The next window starts afresh.
			clk.add(45 * time.Second)
			if r, _ := l.Allow(ctx, "click", "ip:1", 3); !r.Allowed || r.Remaining != 2 || !r.Reset.Equal(reset.Add(time.Minute)) {
				t.Errorf("next window: %+v", r)
			}
		})
	}
}

// Concurrent requests are all counted: exactly limit of them pass.
func TestLimiterConcurrent(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			l := New(newStore(t), func() time.Time { return time.Date(2026, 11, 22, 10, 0, 1, 0, time.UTC) })
			var (
				wg      sync.WaitGroup
				mu      sync.Mutex
				allowed int
			)
			for range 200 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r, err := l.Allow(context.Background(), "sale", "key:k", 120)
					if err != nil {
						t.Error(err)
					}
					if r.Allowed {
						mu.Lock()
						allowed++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if allowed != 120 {
				t.Errorf("allowed %d of 200, want 120", allowed)
			}
		})
	}
}

type failing struct{}

func (failing) Increment(context.Context, string, time.Time) (int64, error) {
	return 0, context.DeadlineExceeded
}

func (failing) Decrement(context.Context, string, time.Time) error { return context.DeadlineExceeded }

func (failing) Count(context.Context, string, time.Time) (int64, error) {
	return 0, context.DeadlineExceeded
}

// A unit given back (a 5xx answer) is available again in the same window; an ended window and a count
// at zero are left alone.
func TestGiveBack(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)}
			store := newStore(t)
			l := New(store, clk.now)
			for range 5 { // five requests answered 5xx: each counted, then given back
				r, err := l.Allow(ctx, "sale", "key:a", 3)
				if err != nil || !r.Allowed {
					t.Fatalf("Allow = %+v, %v", r, err)
				}
				back, err := l.GiveBack(ctx, "sale", "key:a", r)
				if err != nil || back.Remaining != 3 {
					t.Fatalf("GiveBack = %+v, %v; want the full budget", back, err)
				}
			}
			for i := 1; i <= 3; i++ { // the full budget is still there
				if r, err := l.Allow(ctx, "sale", "key:a", 3); err != nil || !r.Allowed || r.Remaining != 3-i {
					t.Fatalf("request %d: %+v, %v", i, r, err)
				}
			}
			if r, _ := l.Allow(ctx, "sale", "key:a", 3); r.Allowed {
				t.Fatalf("the 4th request was allowed: %+v", r)
			}
			// Nothing to give back: a never-counted key stays at zero, not below.
			if err := store.Decrement(ctx, "sale:key:b", clk.now().Truncate(Window)); err != nil {
				t.Fatal(err)
			}
			if r, _ := l.Allow(ctx, "sale", "key:b", 1); !r.Allowed || r.Remaining != 0 {
				t.Fatalf("after a give-back at zero: %+v", r)
			}
		})
	}
}

func TestStoreFailureAllows(t *testing.T) {
	t.Parallel()
	r, err := New(failing{}, time.Now).Allow(context.Background(), "click", "ip:1", 60)
	if err == nil || !r.Allowed || r.Remaining != 60 {
		t.Errorf("Allow = %+v, %v; want allowed with the error", r, err)
	}
}

// Spent looks at a bucket without counting: it turns true once the limit is used up, and a new window
// starts it afresh.
func TestSpent(t *testing.T) {
	t.Parallel()
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 15, 0, time.UTC)}
			l := New(newStore(t), clk.now)
			for i := 0; i < 2; i++ {
				if spent, r, err := l.Spent(ctx, "sale", "unknown-token:ip", 2); err != nil || spent || r.Remaining != 2-i {
					t.Fatalf("before request %d: spent %v %+v, %v", i, spent, r, err)
				}
				if _, err := l.Allow(ctx, "sale", "unknown-token:ip", 2); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 { // looking does not count
				if spent, r, err := l.Spent(ctx, "sale", "unknown-token:ip", 2); err != nil || !spent || r.Remaining != 0 {
					t.Fatalf("after the limit: spent %v %+v, %v", spent, r, err)
				}
			}
			clk.t = clk.t.Add(Window)
			if spent, _, err := l.Spent(ctx, "sale", "unknown-token:ip", 2); err != nil || spent {
				t.Fatalf("next window: spent %v, %v", spent, err)
			}
		})
	}
}
