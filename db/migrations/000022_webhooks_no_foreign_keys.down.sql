-- The keys again (NOT VALID: a row a cascade missed meanwhile does not stop the way back), and without the
-- triggers that cascaded in their place.
DROP TRIGGER IF EXISTS webhooks_events_delete ON webhook_events;
DROP TRIGGER IF EXISTS webhooks_endpoints_delete ON webhook_endpoints;
DROP TRIGGER IF EXISTS webhooks_deliveries_delete ON webhook_deliveries;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey
    FOREIGN KEY (event_id) REFERENCES webhook_events (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
    FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_delivery_id_fkey
    FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id) ON DELETE CASCADE NOT VALID;
