-- reftrack: backward-compatible
-- The change's transaction writes only its events; the delivery worker fans each out to its program's
-- endpoints when it first picks it up, milliseconds later, rendering its data then (webhooks_fan_out).
-- Writing a delivery per endpoint in the change's own statement cost a sale with an endpoint about a
-- tenth of its throughput (docs/performance.md).
-- The events not yet picked up are those without data, found through this index (appended to, as ids
-- grow); it costs the change one entry per event.
CREATE INDEX webhook_events_unsent_idx ON webhook_events (id) WHERE data IS NULL;
-- An endpoint gets the events that happened while it was enabled, as when the change wrote the
-- deliveries: those of a time it was disabled are for recover only, even if the worker picks them up
-- after it is enabled again. enabled_since is by the database's clock, as the events' occurred_at.
-- Endpoints that exist now count as enabled since now, so the previous build's unsent events (those of
-- disabled endpoints) stay unsent. The previous build runs against this schema unchanged: its triggers
-- write deliveries themselves (the fan-out skips those that exist), and it leaves enabled_since as it is
-- when it enables an endpoint again.
ALTER TABLE webhook_endpoints ADD COLUMN enabled_since timestamptz NOT NULL DEFAULT now();
