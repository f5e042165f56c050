-- webhooks_on_payout_insert: payout.created for each payout a statement wrote (trigger on payouts).
CREATE OR REPLACE FUNCTION webhooks_on_payout_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, is_test)
    SELECT n.program_id, 'payout.created', clock_timestamp(), n.id, n.status, false
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id);
    RETURN NULL;
END $$;
