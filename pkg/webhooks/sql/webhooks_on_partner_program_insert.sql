-- webhooks_on_partner_program_insert: partner.created for each partner a statement added to a program
-- (trigger on partner_programs).
CREATE OR REPLACE FUNCTION webhooks_on_partner_program_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT n.program_id FROM new_rows n));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(n.program_id), array_agg('partner.created'::text), array_agg(n.id), array_agg(NULL::text),
        array_agg(NULL::text), array_agg(NULL::bigint), array_agg(false))
    FROM new_rows n WHERE n.program_id = ANY (watched)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
