-- webhooks_on_link_update: link.updated for each link whose state a statement changed (trigger on
-- referral_links).
CREATE OR REPLACE FUNCTION webhooks_on_link_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT n.program_id FROM new_rows n WHERE n.program_id IS NOT NULL));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(n.program_id), array_agg('link.updated'::text), array_agg(n.id), array_agg(NULL::text),
        array_agg(NULL::text), array_agg(NULL::bigint), array_agg(false))
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.program_id = ANY (watched)
        AND (n.short_link, n.partner_id, n.program_id, n.enabled) IS DISTINCT FROM (o.short_link, o.partner_id, o.program_id, o.enabled)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
