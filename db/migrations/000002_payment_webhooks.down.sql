DROP INDEX IF EXISTS sales_provider_payment_idx;
ALTER TABLE processor_events DROP CONSTRAINT processor_events_program_event_key;
ALTER TABLE processor_events ADD CONSTRAINT processor_events_provider_event_id_key UNIQUE (provider, event_id);
