-- reftrack: backward-compatible
-- The reftrackd processes serving this database, each announcing itself every few seconds
-- (pkg/platform/peers): a replica without shared rate limits (REDIS_URL) warns when it has peers, since
-- each of them then allows the whole limit.
CREATE TABLE server_instances (
    id text PRIMARY KEY,
    hostname text NOT NULL,
    shared_limits boolean NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
);
