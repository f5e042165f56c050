-- webhooks_on_commission_update: commission.updated for each commission whose status or amounts a
-- statement changed (trigger on commissions), with the status it moved to and the one before.
CREATE OR REPLACE FUNCTION webhooks_on_commission_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, previous_status, is_test)
        SELECT n.program_id, 'commission.updated', clock_timestamp(), n.id, n.status, o.status, n.is_test
        FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id)
            AND (n.status, n.amount_cents, n.reversed_amount_cents) IS DISTINCT FROM (o.status, o.amount_cents, o.reversed_amount_cents)
        RETURNING id, program_id, type)
    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id FROM ev JOIN webhook_endpoints e ON e.program_id = ev.program_id
    WHERE e.enabled AND (e.event_types IS NULL OR ev.type = ANY (e.event_types));
    RETURN NULL;
END $$;
