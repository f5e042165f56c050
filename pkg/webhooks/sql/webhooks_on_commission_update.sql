-- webhooks_on_commission_update: commission.updated for each commission whose status or amounts a
-- statement changed (trigger on commissions), with the status it moved to and the one before.
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
    PERFORM webhooks_emit(array_agg(n.program_id), array_agg('commission.updated'::text), array_agg(n.id), array_agg(n.status),
        array_agg(o.status), array_agg(NULL::bigint), array_agg(n.is_test))
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.program_id = ANY (watched)
        AND (n.status, n.amount_cents, n.reversed_amount_cents) IS DISTINCT FROM (o.status, o.amount_cents, o.reversed_amount_cents)
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
