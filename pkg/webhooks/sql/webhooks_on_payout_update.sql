-- webhooks_on_payout_update: payout.paid or payout.failed for each payout a statement marked so (trigger on
-- payouts).
CREATE OR REPLACE FUNCTION webhooks_on_payout_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, previous_status, is_test)
        SELECT n.program_id, 'payout.' || n.status, clock_timestamp(), n.id, n.status, o.status, false
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id) AND n.status IN ('paid', 'failed') AND o.status <> n.status
        RETURNING id, program_id, type)
    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id FROM ev JOIN webhook_endpoints e ON e.program_id = ev.program_id
    WHERE e.enabled AND (e.event_types IS NULL OR ev.type = ANY (e.event_types));
    RETURN NULL;
END $$;
