-- webhooks_claim leases up to p_limit deliveries due at p_now, of enabled endpoints, until p_lease, and
-- returns each with what its attempt needs. A delivery whose event has no data yet (recover's, of an
-- event no worker had picked up yet) is left for the pick-up to render first (webhooks_pick_up; the worker
-- picks up before it claims). Rows another replica is claiming at that instant are skipped; a lease that
-- ran out (its replica died) is taken.
-- enable_sort and enable_seqscan off: every row here is reached through an index, the due rows in the due
-- index's order, stopping at p_limit. The outbox grows and empties faster than its statistics follow, and
-- PL/pgSQL keeps a plan made when a table was small: counting a handful of due rows (statistics taken
-- before a backlog), the planner gathered and sorted them all, and read every attempt to tell which
-- deliveries had none; each claim then cost 10 ms at 30,000 deliveries, and a drain ran at a quarter of
-- its speed (docs/performance.md). The lease is set by the leased ids (= ANY), not by joining them: a plan
-- made on an empty table joined them by reading the whole table in key order (180 ms a claim at 80,000).

CREATE OR REPLACE FUNCTION webhooks_claim(p_now timestamptz, p_limit int, p_lease timestamptz)
RETURNS TABLE (id bigint, webhook_id text, endpoint_id bigint, attempt_count int, leased_until timestamptz,
    first boolean, event_id bigint, type text, occurred_at timestamptz, data jsonb, url text,
    secret_sealed bytea, previous_secret_sealed bytea, previous_secret_until timestamptz)
LANGUAGE plpgsql SET enable_sort = off SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    claimed bigint[];
BEGIN
    WITH due AS (
        SELECT d.id FROM webhook_deliveries d
        WHERE d.status = 'pending' AND (d.next_attempt_at IS NULL OR d.next_attempt_at <= p_now)
            AND (d.leased_until IS NULL OR d.leased_until <= p_now)
            AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.enabled)
            AND EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.id = d.event_id AND ev.data IS NOT NULL)
        ORDER BY d.next_attempt_at NULLS FIRST, d.id
        LIMIT p_limit
        FOR UPDATE OF d SKIP LOCKED),
    leased AS (
        UPDATE webhook_deliveries d SET leased_until = p_lease WHERE d.id = ANY (ARRAY(SELECT due.id FROM due))
        RETURNING d.id)
    SELECT array_agg(l.id) INTO claimed FROM leased l;

    IF claimed IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT d.id, d.webhook_id, d.endpoint_id, d.attempt_count, d.leased_until,
            (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id LIMIT 1) IS NULL, -- not NOT EXISTS: hashed, it read every attempt
            ev.id, ev.type, ev.occurred_at, ev.data, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_until
        FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = ANY (claimed);
END $$;
