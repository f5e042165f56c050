-- webhooks_on_partner_update: partner.updated, in each of its programs, for each partner whose name,
-- email or synthetic mark a statement changed (trigger on partners).
CREATE OR REPLACE FUNCTION webhooks_on_partner_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT pp.program_id FROM new_rows n JOIN partner_programs pp ON pp.partner_id = n.id));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(pp.program_id), array_agg('partner.updated'::text), array_agg(pp.id), array_agg(NULL::text),
        array_agg(NULL::text), array_agg(NULL::bigint), array_agg(false))
    FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN partner_programs pp ON pp.partner_id = n.id
    WHERE pp.program_id = ANY (watched) AND (n.name, n.email, n.synthetic) IS DISTINCT FROM (o.name, o.email, o.synthetic)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
