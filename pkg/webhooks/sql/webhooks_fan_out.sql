-- webhooks_fan_out stores the data of the events p_events that webhooks_pick_up locked (p_data, in the
-- same order: rendered by the worker in Go) and writes a pending delivery of each to every endpoint of
-- its program that takes its type and has been enabled since before it happened (by the database's
-- clock, as occurred_at: the events of a time an endpoint was disabled are for recover). Samples have
-- data from the start, and their one delivery. It returns how many events it stored data for.
-- The change's transaction writes only its events: a delivery per endpoint written there cost a sale with
-- an endpoint about a tenth of its throughput (docs/performance.md).
-- enable_seqscan off: each event's endpoints looked up by its program (OFFSET 0 keeps the lookup a probe: a
-- join planned while webhook_endpoints was small may read all of it for each event), and the events by
-- their key.
CREATE OR REPLACE FUNCTION webhooks_fan_out(p_events bigint[], p_data jsonb[])
RETURNS int
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
    stored int;
BEGIN
    UPDATE webhook_events ev SET data = u.data
    FROM unnest(p_events, p_data) AS u(id, data)
    WHERE ev.id = u.id AND ev.data IS NULL;
    GET DIAGNOSTICS stored = ROW_COUNT;
    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id
    FROM webhook_events ev CROSS JOIN LATERAL (
        SELECT e.id FROM webhook_endpoints e
        WHERE e.program_id = ev.program_id AND e.enabled AND e.enabled_since <= ev.occurred_at
            AND (e.event_types IS NULL OR ev.type = ANY (e.event_types))
        OFFSET 0) e
    WHERE ev.id = ANY (p_events) AND NOT ev.sample
    ON CONFLICT (endpoint_id, event_id) DO NOTHING;
    RETURN stored;
END $$;
