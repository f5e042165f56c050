package ratelimit

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis counts in Redis, shared by every replica: one key per bucket, id and window, expiring after the
// window is over.
type Redis struct {
	client redis.UniversalClient
	prefix string
}

// NewRedis returns a store on client; keys start with prefix.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

// decrement takes one back from a count that still exists and is above zero (an expired window's key is
// gone: DECR alone would bring it back at -1).
var decrement = redis.NewScript(`
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then return redis.call('DECR', KEYS[1]) end
return 0`)

// Decrement implements Store.
func (r *Redis) Decrement(ctx context.Context, key string, start time.Time) error {
	return decrement.Run(ctx, r.client, []string{r.key(key, start)}).Err()
}

func (r *Redis) key(key string, start time.Time) string {
	return r.prefix + key + ":" + strconv.FormatInt(start.Unix(), 10)
}

// Increment implements Store: INCR and EXPIRE in one round trip.
func (r *Redis) Increment(ctx context.Context, key string, start time.Time) (int64, error) {
	k := r.key(key, start)
	var incr *redis.IntCmd
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, k)
		p.Expire(ctx, k, 2*Window)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return incr.Val(), nil
}

// Count implements Store.
func (r *Redis) Count(ctx context.Context, key string, start time.Time) (int64, error) {
	n, err := r.client.Get(ctx, r.key(key, start)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}
