-- webhooks_claim first fans out the events not yet picked up (webhooks_events_unsent_idx: those without
-- data), oldest first: renders them (webhooks_render) and writes a pending delivery of each to every
-- endpoint of its program that takes its type and has been enabled since before it happened (samples have
-- data from the start and their one delivery). It fans out p_limit events at a time until that made p_limit
-- deliveries or eight batches were taken, so that a run of events without an enabled endpoint does not
-- hold back those behind it for long. The change's transaction wrote only the event: a delivery row per
-- endpoint there cost a sale with an endpoint a tenth of its throughput (docs/performance.md).
-- Then it leases up to p_limit deliveries due at p_now, of enabled endpoints, until p_lease, and returns
-- each with what its attempt needs, the events sent for the first time rendered (the previous build's
-- triggers wrote deliveries of unrendered events) in the same transaction: a claim that cannot render
-- leases nothing. Rows another replica is claiming or fanning out at that instant are skipped; a lease
-- that ran out (its replica died) is taken.
-- enable_sort and enable_seqscan off: every row here is reached through an index, the due rows in the due
-- index's order, stopping at p_limit. The outbox grows and empties faster than its statistics follow, and
-- PL/pgSQL keeps a plan made when a table was small: counting a handful of due rows (statistics taken
-- before a backlog), the planner gathered and sorted them all, and read every attempt to tell which
-- deliveries had none; each claim then cost 10 ms at 30,000 deliveries, and a drain ran at a quarter of
-- its speed (docs/performance.md).
CREATE OR REPLACE FUNCTION webhooks_claim(p_now timestamptz, p_limit int, p_lease timestamptz)
RETURNS TABLE (id bigint, webhook_id text, endpoint_id bigint, attempt_count int, leased_until timestamptz,
    first boolean, event_id bigint, type text, occurred_at timestamptz, data jsonb, url text,
    secret_sealed bytea, previous_secret_sealed bytea, previous_secret_until timestamptz)
LANGUAGE plpgsql SET enable_sort = off SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    claimed    bigint[];
    unrendered bigint[];
    fresh      bigint[];
    made       int := 0;
    n          int;
BEGIN
    FOR batch IN 1..8 LOOP
        SELECT array_agg(u.id) INTO fresh FROM (
            SELECT ev.id FROM webhook_events ev WHERE ev.data IS NULL ORDER BY ev.id LIMIT p_limit
            FOR UPDATE SKIP LOCKED) u;
        EXIT WHEN fresh IS NULL;
        PERFORM webhooks_render(fresh);
        INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
        SELECT webhooks_message_id(), e.id, ev.id
        FROM webhook_events ev JOIN webhook_endpoints e ON e.program_id = ev.program_id
        WHERE ev.id = ANY (fresh) AND NOT ev.sample AND e.enabled AND e.enabled_since <= ev.occurred_at
            AND (e.event_types IS NULL OR ev.type = ANY (e.event_types))
        ON CONFLICT (endpoint_id, event_id) DO NOTHING;
        GET DIAGNOSTICS n = ROW_COUNT;
        made := made + n;
        EXIT WHEN made >= p_limit OR cardinality(fresh) < p_limit;
    END LOOP;

    WITH due AS (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= p_now)
            AND (d.leased_until IS NULL OR d.leased_until <= p_now)
            AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
        ORDER BY d.next_attempt_at NULLS FIRST, d.id
        LIMIT p_limit
        FOR UPDATE OF d SKIP LOCKED),
    leased AS (
        UPDATE webhook_deliveries d SET leased_until = p_lease FROM due WHERE d.id = due.id
        RETURNING d.id, d.event_id)
    SELECT array_agg(l.id), array_agg(DISTINCT l.event_id) FILTER (WHERE ev.data IS NULL)
    INTO claimed, unrendered
    FROM leased l JOIN webhook_events ev ON ev.id = l.event_id;

    IF claimed IS NULL THEN
        RETURN;
    END IF;
    IF unrendered IS NOT NULL THEN
        PERFORM webhooks_render(unrendered);
    END IF;
    RETURN QUERY SELECT d.id, d.webhook_id, d.endpoint_id, d.attempt_count, d.leased_until,
            (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id LIMIT 1) IS NULL, -- not NOT EXISTS: hashed, it read every attempt
            ev.id, ev.type, ev.occurred_at, ev.data, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_until
        FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ANY (claimed);
END $$;
