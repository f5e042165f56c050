-- Counters off hot rows. The count triggers (000004) upserted event_counts and event_counts_daily inside
-- the event's transaction: one row per program, type and hour (and day), locked until commit, so every
-- sale or lead of a program waited for the previous one's commit. Now the triggers append a row to
-- event_count_deltas (no conflict, no wait) and roll_up_event_counts() folds the deltas into the two
-- tables in one transaction; the server calls it every second. Readers add up the tables and the
-- deltas not yet folded in (the *_live views), so every count stays exact at every moment.
CREATE TABLE event_count_deltas (
    program_id  bigint      NOT NULL,
    event_type  text        NOT NULL,
    hour        timestamptz NOT NULL,
    n           bigint      NOT NULL
);
CREATE INDEX event_count_deltas_program_hour_idx ON event_count_deltas (program_id, hour);

CREATE OR REPLACE FUNCTION bump_event_counts(p_program bigint, p_type text, p_hour timestamptz, p_delta bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO event_count_deltas (program_id, event_type, hour, n) VALUES (p_program, p_type, p_hour, p_delta);
$$;

-- roll_up_event_counts folds the deltas present into the hourly and daily counts and returns how many it
-- folded. Concurrent calls (several replicas) take disjoint deltas (SKIP LOCKED); rows are upserted in key
-- order so that two calls cannot deadlock.
CREATE FUNCTION roll_up_event_counts() RETURNS bigint
LANGUAGE sql AS $$
    WITH moved AS (
        DELETE FROM event_count_deltas WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM event_count_deltas LIMIT 100000 FOR UPDATE SKIP LOCKED))
        RETURNING program_id, event_type, hour, n
    ), hourly AS (
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT program_id, event_type, hour, sum(n) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n
    ), daily AS (
        INSERT INTO event_counts_daily AS c (program_id, event_type, day, n)
        SELECT program_id, event_type, (hour AT TIME ZONE 'UTC')::date, sum(n) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (program_id, event_type, day) DO UPDATE SET n = c.n + EXCLUDED.n
    )
    SELECT count(*) FROM moved;
$$;

-- What readers use: the folded counts plus the deltas still waiting.
CREATE VIEW event_counts_live AS
    SELECT program_id, event_type, hour, n FROM event_counts
    UNION ALL
    SELECT program_id, event_type, hour, n FROM event_count_deltas;
CREATE VIEW event_counts_daily_live AS
    SELECT program_id, event_type, day, n FROM event_counts_daily
    UNION ALL
    SELECT program_id, event_type, (hour AT TIME ZONE 'UTC')::date, n FROM event_count_deltas;

-- The partner-program counters were written after every lead and sale (another hot row each) and read
-- by nothing: a partner's leads and sales are counted from their rows where needed.
ALTER TABLE partner_programs DROP COLUMN leads_count, DROP COLUMN sales_count;
