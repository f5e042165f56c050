-- webhooks_on_commission_insert: commission.created for each commission a statement wrote (trigger on
-- commissions).
CREATE OR REPLACE FUNCTION webhooks_on_commission_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, is_test)
    SELECT n.program_id, 'commission.created', clock_timestamp(), n.id, n.status, n.is_test
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id);
    RETURN NULL;
END $$;
