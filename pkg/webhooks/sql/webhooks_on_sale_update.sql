-- webhooks_on_sale_update: sale.refunded for each sale a statement refunded more of (trigger on sales;
-- pkg/sales' sales_refund writes the refund, then the sale's refunded total), naming that refund.
CREATE OR REPLACE FUNCTION webhooks_on_sale_update()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, refund_id, is_test)
    SELECT n.program_id, 'sale.refunded', clock_timestamp(), n.id, (SELECT max(r.id) FROM refunds r WHERE r.sale_id = n.id), n.is_test
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id) AND n.refunded_amount_cents > o.refunded_amount_cents;
    RETURN NULL;
END $$;
