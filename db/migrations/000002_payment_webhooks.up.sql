-- One Stripe account may send the same event to the webhook endpoints of several programs: an event is
-- processed once per program, not once overall.
ALTER TABLE processor_events DROP CONSTRAINT processor_events_provider_event_id_key;
ALTER TABLE processor_events ADD CONSTRAINT processor_events_program_event_key UNIQUE (provider, program_id, event_id);

-- Refund and dispute events name the payment (payment intent or charge), not our transaction id.
CREATE INDEX sales_provider_payment_idx ON sales (program_id, provider_payment_id) WHERE provider_payment_id IS NOT NULL;
