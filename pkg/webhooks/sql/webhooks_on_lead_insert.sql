-- webhooks_on_lead_insert: lead.created for each lead a statement wrote (trigger on leads).
CREATE OR REPLACE FUNCTION webhooks_on_lead_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    WITH ev AS (
        INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
        SELECT n.program_id, 'lead.created', clock_timestamp(), n.id, n.is_test
        FROM new_rows n
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id)
        RETURNING id, program_id, type)
    INSERT INTO webhook_deliveries (webhook_id, endpoint_id, event_id)
    SELECT webhooks_message_id(), e.id, ev.id FROM ev JOIN webhook_endpoints e ON e.program_id = ev.program_id
    WHERE e.enabled AND (e.event_types IS NULL OR ev.type = ANY (e.event_types));
    RETURN NULL;
END $$;
