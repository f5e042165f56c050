// Package origins knows which browser origins some program allows, for the CORS answers of the browser
// routes. The set is cached and reloaded at most every TTL; a reload never holds the lock while it
// queries the database, and a failed reload keeps answering from the last good set.
package origins

import (
	"context"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/programs"
)

// TTL bounds how stale the set may be on another replica after a program's allowed origins change (this
// replica forgets it at once).
const TTL = 10 * time.Second

// loadTimeout bounds a reload: it runs on behalf of every waiting request, not one request's context.
const loadTimeout = 2 * time.Second

// retryAfterFailure is how long a failed reload is not tried again: meanwhile requests answer from the
// last good set at once, instead of each waiting for its own attempt against a database that is down.
const retryAfterFailure = time.Second

// Cache is the set of origins listed by any program.
type Cache struct {
	db  sqlx.QueryerContext
	now func() time.Time

	mu      sync.Mutex
	set     map[string]bool
	loaded  time.Time
	loading chan struct{} // closed when the reload under way ends; nil when none is
	gen     uint64        // bumped by Forget, so a reload that started before it is not kept as fresh
	failed  time.Time     // when the last reload failed
}

// New is an empty cache over db, aged by now.
func New(db sqlx.QueryerContext, now func() time.Time) *Cache {
	return &Cache{db: db, now: now}
}

// Known reports whether some program allows origin.
func (c *Cache) Known(ctx context.Context, origin string) bool {
	c.mu.Lock()
	for c.set == nil || c.now().Sub(c.loaded) > TTL {
		if !c.failed.IsZero() && c.now().Sub(c.failed) < retryAfterFailure {
			break // answer from the last good set (none after a failed first load)
		}
		if c.loading != nil {
			// Another request is reloading: wait for it rather than query twice.
			wait := c.loading
			c.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return false
			}
			c.mu.Lock()
			continue
		}
		if !c.reload() {
			break // answer from the last good set (none after a failed first load)
		}
	}
	known := c.set[origin]
	c.mu.Unlock()
	return known
}

// reload queries the set with c.mu released and reports whether the query succeeded. It is called, and
// returns, with c.mu held.
func (c *Cache) reload() bool {
	done := make(chan struct{})
	c.loading = done
	gen := c.gen
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), loadTimeout)
	list, err := programs.KnownOrigins(ctx, c.db)
	cancel()

	c.mu.Lock()
	c.loading = nil
	close(done)
	if err != nil {
		c.failed = c.now()
		return false
	}
	c.failed = time.Time{}
	if gen != c.gen {
		return true // forgotten meanwhile: the caller loads again
	}
	set := make(map[string]bool, len(list))
	for _, v := range list {
		set[v] = true
	}
	c.set, c.loaded = set, c.now()
	return true
}

// Forget drops the cached set (after this replica changed a program's origins).
func (c *Cache) Forget() {
	c.mu.Lock()
	c.set = nil
	c.gen++
	c.mu.Unlock()
}
