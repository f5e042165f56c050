-- webhooks_on_partner_update: partner.updated, in each of its programs, for each partner whose name,
-- email or synthetic mark a statement changed (trigger on partners).
CREATE OR REPLACE FUNCTION webhooks_on_partner_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[];
    watched bigint[];
BEGIN
    changed := ARRAY(SELECT pp.id FROM new_rows n JOIN old_rows o ON o.id = n.id
        JOIN partner_programs pp ON pp.partner_id = n.id
        WHERE (n.name, n.email, n.synthetic) IS DISTINCT FROM (o.name, o.email, o.synthetic));
    IF cardinality(changed) = 0 THEN
        RETURN NULL;
    END IF;
    watched := webhooks_watched(ARRAY(SELECT pp.program_id FROM partner_programs pp WHERE pp.id = ANY (changed)));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(d.program_id), array_agg('partner.updated'::text), array_agg(d.data),
        array_agg(d.is_test))
    FROM webhooks_partner_data(changed) d WHERE d.program_id = ANY (watched)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
