-- reftrack: backward-compatible
-- The change's transaction writes only its events; the delivery worker fans each out to its program's
-- endpoints when it first picks it up, milliseconds later, rendering its data then (webhooks_claim). The
-- events not yet picked up are those without data, found through this index (appended to, as ids grow).
-- Writing a delivery per endpoint in the change's own statement cost a sale with an endpoint about a
-- tenth of its throughput (docs/performance.md); this index costs it one entry per event. An event the
-- previous build wrote and never sent (its endpoint was disabled) is fanned out to its program's endpoints
-- enabled now, as a recovery would; the previous build runs against this schema unchanged (its triggers
-- write deliveries themselves, and the fan-out skips those that exist).
CREATE INDEX webhook_events_unsent_idx ON webhook_events (id) WHERE data IS NULL;
