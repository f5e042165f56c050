ALTER TABLE webhook_endpoints DROP COLUMN enabled_since;
DROP INDEX webhook_events_unsent_idx;
