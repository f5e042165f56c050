-- webhooks_fan_out picks up to p_limit of the events no worker has picked up yet (those without data,
-- through webhook_events_unsent_idx), oldest first, and returns how many it picked: it renders them
-- (webhooks_render) and writes a pending delivery of each to every endpoint of its program that takes its
-- type and has been enabled since before it happened (by the database's clock, as occurred_at: the events
-- of a time an endpoint was disabled are for recover). Samples have data from the start, and their one
-- delivery. Events another replica is picking up at that instant are skipped.
-- The change's transaction writes only its events: a delivery per endpoint written there cost a sale with
-- an endpoint about a tenth of its throughput (docs/performance.md).
-- enable_sort and enable_seqscan off, as webhooks_claim: the unsent index read in its order, stopping at
-- p_limit, whatever the statistics said when the plan was made; and each event's endpoints looked up by
-- its program (OFFSET 0 keeps the lookup a probe: a join planned while webhook_endpoints was small may
-- read all of it for each event).

CREATE OR REPLACE FUNCTION webhooks_fan_out(p_limit int)
RETURNS int
LANGUAGE plpgsql SET enable_sort = off SET enable_seqscan = off AS $$
DECLARE
    fresh bigint[];
BEGIN
    SELECT array_agg(u.id) INTO fresh FROM (
        SELECT ev.id FROM webhook_events ev WHERE ev.data IS NULL ORDER BY ev.id LIMIT p_limit
        FOR UPDATE SKIP LOCKED) u;
    IF fresh IS NULL THEN
        RETURN 0;
    END IF;
    PERFORM webhooks_render(fresh);
    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id
    FROM webhook_events ev CROSS JOIN LATERAL (
        SELECT e.id FROM webhook_endpoints e
        WHERE e.program_id = ev.program_id AND e.enabled AND e.enabled_since <= ev.occurred_at
            AND (e.event_types IS NULL OR ev.type = ANY (e.event_types))
        OFFSET 0) e
    WHERE ev.id = ANY (fresh) AND NOT ev.sample
    ON CONFLICT (endpoint_id, event_id) DO NOTHING;
    RETURN cardinality(fresh);
END $$;
