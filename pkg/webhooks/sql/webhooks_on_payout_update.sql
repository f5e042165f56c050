-- webhooks_on_payout_update: payout.paid or payout.failed for each payout a statement marked so (trigger on
-- payouts).
CREATE OR REPLACE FUNCTION webhooks_on_payout_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, previous_status, is_test)
    SELECT n.program_id, 'payout.' || n.status, clock_timestamp(), n.id, n.status, o.status, false
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id) AND n.status IN ('paid', 'failed') AND o.status <> n.status;
    RETURN NULL;
END $$;
