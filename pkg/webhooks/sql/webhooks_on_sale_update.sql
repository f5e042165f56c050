-- webhooks_on_sale_update: sale.refunded for each sale a statement refunded more of (trigger on sales;
-- pkg/sales' sales_refund_v2 writes the refund, then the sale's refunded total), with the refund.
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
    PERFORM webhooks_emit(array_agg(d.program_id), array_agg('sale.refunded'::text),
        array_agg(d.data || jsonb_build_object('refund', (
            SELECT jsonb_build_object('id', r.id, 'amount_cents', r.amount_cents, 'reason', r.reason,
                'refund_reason', r.refund_reason, 'commission_reversed_cents', r.commission_reversed_cents,
                'created_at', r.created_at)
            FROM refunds r WHERE r.sale_id = d.id ORDER BY r.id DESC LIMIT 1))),
        array_agg(d.is_test))
    FROM webhooks_sale_data(ARRAY(SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE n.program_id = ANY (watched) AND n.refunded_amount_cents > o.refunded_amount_cents)) d
    HAVING count(*) > 0;
    RETURN NULL;
END $$;
