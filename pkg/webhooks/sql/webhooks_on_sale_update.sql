-- webhooks_on_sale_update: sale.refunded for each sale a statement refunded more of (trigger on sales;
-- pkg/sales' sales_refund_v2 writes the refund, then the sale's refunded total), naming that refund.
CREATE OR REPLACE FUNCTION webhooks_on_sale_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    watched bigint[];
BEGIN
    watched := webhooks_watched(ARRAY(SELECT n.program_id FROM new_rows n));
    IF watched IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM webhooks_emit(array_agg(n.program_id), array_agg('sale.refunded'::text), array_agg(n.id), array_agg(NULL::text),
        array_agg(NULL::text), array_agg((SELECT max(r.id) FROM refunds r WHERE r.sale_id = n.id)), array_agg(n.is_test))
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.program_id = ANY (watched) AND n.refunded_amount_cents > o.refunded_amount_cents
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
