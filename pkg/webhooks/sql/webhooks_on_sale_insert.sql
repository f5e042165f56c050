-- webhooks_on_sale_insert: sale.created for each sale a statement wrote (trigger on sales).
CREATE OR REPLACE FUNCTION webhooks_on_sale_insert()
RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_events (program_id, type, occurred_at, resource_id, is_test)
    SELECT n.program_id, 'sale.created', clock_timestamp(), n.id, n.is_test
    FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.program_id = n.program_id);
    RETURN NULL;
END $$;
