-- webhooks_on_endpoint_delete: the deliveries to the endpoints a statement deleted go with them (trigger
-- on webhook_endpoints; the outbox has no foreign keys: the schema says why).
CREATE OR REPLACE FUNCTION webhooks_on_endpoint_delete()
RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM webhook_deliveries d WHERE d.endpoint_id = ANY (ARRAY(SELECT o.id FROM old_rows o));
    RETURN NULL;
END $$;
