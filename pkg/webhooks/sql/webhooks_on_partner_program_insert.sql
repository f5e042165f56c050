-- webhooks_on_partner_program_insert: partner.created for each partner a statement added to a program
-- (trigger on partner_programs).
CREATE OR REPLACE FUNCTION webhooks_on_partner_program_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT n.program_id, 'partner.created', clock_timestamp(), n.id, false
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id);
    RETURN NULL;
END $$;
