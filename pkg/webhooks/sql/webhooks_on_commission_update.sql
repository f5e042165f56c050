-- webhooks_on_commission_update: commission.updated for each commission whose status or amounts a
-- statement changed (trigger on commissions), with the status it moved to and the one before.
CREATE OR REPLACE FUNCTION webhooks_on_commission_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, status, previous_status, is_test)
    SELECT n.program_id, 'commission.updated', clock_timestamp(), n.id, n.status, o.status, n.is_test
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id)
        AND (n.status, n.amount_cents, n.reversed_amount_cents) IS DISTINCT FROM (o.status, o.amount_cents, o.reversed_amount_cents);
    RETURN NULL;
END $$;
