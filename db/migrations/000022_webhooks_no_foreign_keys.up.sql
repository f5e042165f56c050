-- The outbox's rows carry no foreign keys (River's jobs neither). Each was checked at every insert, with a
-- row lock: every sale's statement locked its program's endpoint and each new event (FOR KEY SHARE; one
-- endpoint shared by concurrent sales makes multixacts), and every recorded attempt its delivery. Worse,
-- PostgreSQL keeps each check's plan for the session: made while a table was nearly empty it reads the
-- whole table, and until autovacuum next analyzes it each check did (4.5 ms per attempt at 78,000
-- deliveries: a drain at 360 a second instead of 1,500, docs/performance.md). The writers are pkg/webhooks'
-- functions, which write deliveries only for endpoints and events they have just read, and the deletes
-- cascade through pkg/webhooks' triggers (webhooks_on_*_delete), attached by db.ApplyFunctions.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
