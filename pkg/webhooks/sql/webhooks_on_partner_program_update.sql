-- webhooks_on_partner_program_update: partner.updated for each partner whose enrollment in a program a
-- statement changed (approved, rejected, banned; trigger on partner_programs).
CREATE OR REPLACE FUNCTION webhooks_on_partner_program_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT n.program_id, 'partner.updated', clock_timestamp(), n.id, false
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id)
        AND (n.status, n.status_reason) IS DISTINCT FROM (o.status, o.status_reason);
    RETURN NULL;
END $$;
