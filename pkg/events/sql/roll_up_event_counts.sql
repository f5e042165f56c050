-- roll_up_event_counts folds the deltas present into the hourly and daily counts and returns how many it
-- folded. Concurrent calls (several replicas) take disjoint deltas (SKIP LOCKED); rows are upserted in key
-- order so that two calls cannot deadlock.
CREATE OR REPLACE FUNCTION roll_up_event_counts() RETURNS bigint
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
