-- webhooks_on_delivery_delete: the attempts of the deliveries a statement deleted go with them (trigger on
-- webhook_deliveries; the outbox has no foreign keys: the schema says why).
CREATE OR REPLACE FUNCTION webhooks_on_delivery_delete()
RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM webhook_attempts a WHERE a.delivery_id = ANY (ARRAY(SELECT o.id FROM old_rows o));
    RETURN NULL;
END $$;
