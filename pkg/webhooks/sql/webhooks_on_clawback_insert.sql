-- webhooks_on_clawback_insert: commission.updated for each commission a statement clawed back from
-- (trigger on commission_clawbacks; its clawback_cents changed, its status did not).
CREATE OR REPLACE FUNCTION webhooks_on_clawback_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, previous_status, is_test)
    SELECT c.program_id, 'commission.updated', clock_timestamp(), c.id, c.status, c.status, c.is_test
    FROM commissions c
    WHERE c.id IN (SELECT n.commission_id FROM new_rows n WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id));
    RETURN NULL;
END $$;
