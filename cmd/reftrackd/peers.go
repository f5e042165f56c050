package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/reftrack/reftrack/pkg/platform/config"
	"github.com/reftrack/reftrack/pkg/platform/peers"
	"github.com/reftrack/reftrack/pkg/secret"
)

// announce tells the other replicas of this database that this one serves, at once and then every
// peers.Interval until the returned stop is called, and warns when rate limits multiply with the
// replicas: this one counts in process (no REDIS_URL) while others serve, or others do while this one
// shares. stop leaves the list.
func announce(ctx context.Context, cfg config.Config, pool *sqlx.DB, logger *slog.Logger, clock func() time.Time) (stop func()) {
	id, err := secret.RandomString(16)
	if err != nil {
		logger.Warn("peers: no id", "err", err)
		return func() {}
	}
	host, _ := os.Hostname()
	self := peers.Self{ID: id, Hostname: host, SharedLimits: cfg.RedisURL != "", Started: clock()}
	var warnedAlone, warnedOthers bool
	check := func(ctx context.Context) {
		o, err := peers.Announce(ctx, pool, self, clock())
		if err != nil {
			logger.Warn("peers: announce", "err", err)
			return
		}
		if !self.SharedLimits && o.Serving > 0 && !warnedAlone {
			warnedAlone = true
			logger.Warn("rate limits are per replica: REDIS_URL is not set and other reftrackd processes serve this database, "+
				"so each one allows the whole limit; set REDIS_URL on every replica", "replicas", o.Serving+1)
		}
		if self.SharedLimits && o.Unshared > 0 && !warnedOthers {
			warnedOthers = true
			logger.Warn("rate limits leak: other reftrackd processes serve this database without REDIS_URL and count in process",
				"without_redis", o.Unshared)
		}
	}
	check(ctx)
	stopLoop := every(ctx, peers.Interval, false, check)
	return func() {
		stopLoop()
		leaveCtx, cancelLeave := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancelLeave()
		if err := peers.Leave(leaveCtx, pool, id); err != nil {
			logger.Warn("peers: leave", "err", err)
		}
	}
}
