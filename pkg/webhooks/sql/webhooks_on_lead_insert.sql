-- webhooks_on_lead_insert: lead.created for each lead a statement wrote (trigger on leads).
CREATE OR REPLACE FUNCTION webhooks_on_lead_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT n.program_id, 'lead.created', clock_timestamp(), n.id, n.is_test
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id);
    RETURN NULL;
END $$;
