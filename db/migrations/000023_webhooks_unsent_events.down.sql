DROP INDEX webhook_events_unsent_idx;
