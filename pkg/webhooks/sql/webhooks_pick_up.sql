-- webhooks_pick_up locks and returns up to p_limit of the events no worker has picked up yet (those
-- without data, through webhook_events_unsent_idx), oldest first, with what rendering them needs. The
-- worker calls it in a transaction, renders the events in Go (their resources read from their owners and
-- shaped as the management API answers them) and stores the data with webhooks_fan_out before it
-- commits: the lock keeps another replica from rendering the same events meanwhile (it skips them).
-- enable_sort and enable_seqscan off, as webhooks_claim: the unsent index read in its order, stopping at
-- p_limit, whatever the statistics said when the plan was made.
CREATE OR REPLACE FUNCTION webhooks_pick_up(p_limit int)
RETURNS TABLE (id bigint, type text, resource_id bigint, status text, previous_status text, refund_id bigint,
    occurred_at timestamptz, is_test boolean)
LANGUAGE plpgsql SET enable_sort = off SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT ev.id, ev.type, ev.resource_id, ev.status, ev.previous_status, ev.refund_id, ev.occurred_at, ev.is_test
        FROM webhook_events ev WHERE ev.data IS NULL ORDER BY ev.id LIMIT p_limit
        FOR UPDATE SKIP LOCKED;
END $$;
