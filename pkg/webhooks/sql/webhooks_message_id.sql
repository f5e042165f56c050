-- webhooks_message_id is a new delivery's webhook-id: msg_ and 128 random bits in hex, the same for every
-- attempt of that delivery (Standard Webhooks' message id). Every writer of webhook_deliveries uses it.
CREATE OR REPLACE FUNCTION webhooks_message_id()
RETURNS text
LANGUAGE sql VOLATILE AS $$
    SELECT 'msg_' || replace(gen_random_uuid()::text, '-', '')
$$;
