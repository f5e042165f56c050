// Package peers keeps the list of reftrackd processes serving one database: each announces itself
// every Interval, and a process that stopped announcing is forgotten after Expiry. A replica learns how
// many others serve with it, which is what it needs to warn that rate limits kept in process (no
// REDIS_URL) multiply with the replicas.
package peers

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Interval is how often a process announces itself; Expiry is how long it counts as serving after its
// last announcement.
const (
	Interval = 10 * time.Second
	Expiry   = 3 * Interval
)

// Self is one process.
type Self struct {
	ID, Hostname string
	// SharedLimits reports whether it counts rate limits with the others (REDIS_URL).
	SharedLimits bool
	Started      time.Time
}

// Others are the other processes serving, as seen by one announcement.
type Others struct {
	// Serving is how many other processes announced themselves within Expiry.
	Serving int
	// Unshared is how many of them keep rate limits in process (no REDIS_URL).
	Unshared int
}

// Announce records that self serves at now, forgets processes silent for longer than Expiry and
// reports the others.
func Announce(ctx context.Context, db *sqlx.DB, self Self, now time.Time) (Others, error) {
	var o Others
	err := db.QueryRowxContext(ctx, `WITH me AS (
			INSERT INTO server_instances (id, hostname, shared_limits, started_at, seen_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at
		), gone AS (
			DELETE FROM server_instances WHERE seen_at < $6 AND id <> $1
		)
		SELECT count(*), count(*) FILTER (WHERE NOT shared_limits) FROM server_instances
		WHERE id <> $1 AND seen_at >= $6`,
		self.ID, self.Hostname, self.SharedLimits, self.Started, now, now.Add(-Expiry)).Scan(&o.Serving, &o.Unshared)
	if err != nil {
		return Others{}, fmt.Errorf("announce this server: %w", err)
	}
	return o, nil
}

// Leave removes self from the list (at a graceful stop).
func Leave(ctx context.Context, db *sqlx.DB, id string) error {
	_, err := db.ExecContext(ctx, `DELETE FROM server_instances WHERE id = $1`, id)
	return err
}
