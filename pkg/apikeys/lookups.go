package apikeys

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/accounts"
	apikeyssql "github.com/reftrack/reftrack/pkg/apikeys/sql"
	"github.com/reftrack/reftrack/pkg/platform/batch"
	"github.com/reftrack/reftrack/pkg/platform/pgcall"
	"github.com/reftrack/reftrack/pkg/secret"
)

// Key lookups in batches: every sale and refund, and most leads, authenticate a key first. Lookups that
// arrive together share one statement instead of each paying a round trip and a query plan. Each lookup
// still reads the database after its request arrived, so a regenerated key stops matching at once.
const (
	LookupWriters  = 2
	LookupMaxBatch = 64
)

// Lookups authenticates keys in batches.
type Lookups struct {
	db    sqlx.QueryerContext
	queue *batch.Queue[*lookup]
}

type lookup struct {
	hash []byte
	key  Key
	err  error
	done chan struct{}
}

// NewLookups starts writers goroutines looking up to maxBatch keys at a time.
func NewLookups(db sqlx.QueryerContext, writers, maxBatch int) *Lookups {
	l := &Lookups{db: db}
	l.queue = batch.Start(writers, maxBatch, l.run)
	return l
}

// Authenticate is the package's Authenticate, in the next batch.
func (l *Lookups) Authenticate(ctx context.Context, token string) (Key, error) {
	lk := &lookup{hash: secret.Hash(token), done: make(chan struct{})}
	if err := l.queue.Put(ctx, lk); err != nil {
		return Key{}, err
	}
	select {
	case <-lk.done:
		return lk.key, lk.err
	case <-ctx.Done():
		return Key{}, ctx.Err() // a read: nothing is left half done
	}
}

// Close stops the lookups once every queued one is answered.
func (l *Lookups) Close() { l.queue.Close() }

// lookupCall finds the active keys among hashes and whether each program's owner is suspended, in the
// same statement (the key lookup is on the hot path of every sale, so the check adds no round trip),
// through the database function apikeys_lookup (pkg/apikeys/sql), whose plan PostgreSQL keeps per
// connection: planning the query cost more than running it. The owner-suspended rule is pkg/accounts'
// accounts_suspended_owners.
var lookupCall = pgcall.New[lookupInput, pgcall.None](apikeyssql.Lookup)

// lookupInput is apikeys_lookup's input for one key.
type lookupInput struct {
	Hash []byte `pg:"p_hash"`
}

func (l *Lookups) run(next func() ([]*lookup, bool)) {
	for {
		batch, ok := next()
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lookUp(ctx, l.db, batch)
		cancel()
		for _, lk := range batch {
			close(lk.done)
		}
	}
}

// lookUp answers each lookup of batch (its key, or ErrUnknown, accounts.ErrSuspended or the database's
// error) with one statement.
func lookUp(ctx context.Context, db sqlx.QueryerContext, batch []*lookup) {
	in := make([]lookupInput, len(batch))
	for i, lk := range batch {
		in[i].Hash = lk.hash
	}
	var rows []struct {
		Hash []byte `db:"key_hash"`
		Key
		OwnerSuspended bool `db:"owner_suspended"`
	}
	if err := lookupCall.Select(ctx, db, &rows, in, pgcall.None{}); err != nil {
		for _, lk := range batch {
			lk.err = fmt.Errorf("authenticate api key: %w", err)
		}
		return
	}
	found := make(map[string]int, len(rows))
	for i, r := range rows {
		found[string(r.Hash)] = i
	}
	for _, lk := range batch {
		i, ok := found[string(lk.hash)]
		switch {
		case !ok:
			lk.err = ErrUnknown
		case rows[i].OwnerSuspended:
			lk.err = accounts.ErrSuspended
		default:
			lk.key = rows[i].Key
		}
	}
}
