-- webhooks_on_payout_update: payout.paid or payout.failed for each payout a statement marked so (trigger on
-- payouts).
CREATE OR REPLACE FUNCTION webhooks_on_payout_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT n.program_id FROM new_rows n));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(n.program_id), array_agg('payout.' || n.status), array_agg(n.id), array_agg(n.status),
        array_agg(o.status), array_agg(NULL::bigint), array_agg(false))
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.program_id = ANY (watched) AND n.status IN ('paid', 'failed') AND o.status <> n.status
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
