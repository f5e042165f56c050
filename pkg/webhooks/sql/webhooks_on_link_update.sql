-- webhooks_on_link_update: link.updated for each link whose state a statement changed (trigger on
-- referral_links).
CREATE OR REPLACE FUNCTION webhooks_on_link_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT n.program_id, 'link.updated', clock_timestamp(), n.id, false
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id)
        AND (n.short_link, n.partner_id, n.program_id, n.enabled) IS DISTINCT FROM (o.short_link, o.partner_id, o.program_id, o.enabled);
    RETURN NULL;
END $$;
