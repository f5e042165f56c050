-- webhooks_on_clawback_insert: commission.updated for each commission a statement clawed back from
-- (trigger on commission_clawbacks; its clawback_cents changed, its status did not).
CREATE OR REPLACE FUNCTION webhooks_on_clawback_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT n.program_id FROM new_rows n));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(c.program_id), array_agg('commission.updated'::text), array_agg(c.id), array_agg(c.status),
        array_agg(c.status), array_agg(NULL::bigint), array_agg(c.is_test))
    FROM commissions c WHERE c.id IN (SELECT n.commission_id FROM new_rows n WHERE n.program_id = ANY (watched))
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
