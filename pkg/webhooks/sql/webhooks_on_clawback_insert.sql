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
    PERFORM webhooks_emit(array_agg(d.program_id), array_agg('commission.updated'::text),
        array_agg(d.data || jsonb_build_object('previous_status', d.data->'status')), array_agg(d.is_test))
    FROM webhooks_commission_data(ARRAY(SELECT DISTINCT n.commission_id FROM new_rows n
        WHERE n.program_id = ANY (watched))) d
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
