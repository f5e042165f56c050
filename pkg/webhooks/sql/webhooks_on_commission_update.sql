-- webhooks_on_commission_update: commission.updated for each commission whose status or amounts a
-- statement changed (trigger on commissions), with data.previous_status, the status written before.
CREATE OR REPLACE FUNCTION webhooks_on_commission_update()
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
        array_agg(d.data || jsonb_build_object('previous_status', c.previous_status)), array_agg(d.is_test))
    FROM (SELECT n.id, o.status AS previous_status FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.program_id = ANY (watched)
            AND (n.status, n.amount_cents, n.reversed_amount_cents) IS DISTINCT FROM
                (o.status, o.amount_cents, o.reversed_amount_cents)) c
    JOIN webhooks_commission_data(ARRAY(SELECT n.id FROM new_rows n WHERE n.program_id = ANY (watched))) d ON d.id = c.id
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
