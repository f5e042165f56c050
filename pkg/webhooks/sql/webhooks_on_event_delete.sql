-- webhooks_on_event_delete: the deliveries of the events a statement deleted go with them (trigger on
-- webhook_events; the outbox has no foreign keys: the schema says why).
CREATE OR REPLACE FUNCTION webhooks_on_event_delete()
RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
    DELETE FROM webhook_deliveries d WHERE d.event_id = ANY (ARRAY(SELECT o.id FROM old_rows o));
    RETURN NULL;
END $$;
