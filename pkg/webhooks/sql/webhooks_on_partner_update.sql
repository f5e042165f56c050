-- webhooks_on_partner_update: partner.updated, in each of its programs, for each partner whose name,
-- email or synthetic mark a statement changed (trigger on partners).
CREATE OR REPLACE FUNCTION webhooks_on_partner_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT pp.program_id, 'partner.updated', clock_timestamp(), pp.id, false
    FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN partner_programs pp ON pp.partner_id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = pp.program_id) AND (n.name, n.email, n.synthetic) IS DISTINCT FROM (o.name, o.email, o.synthetic);
    RETURN NULL;
END $$;
