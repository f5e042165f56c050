-- Back to an empty database: every table of the baseline (their triggers, indexes, sequences and click
-- partitions go with them), then every function, the baseline's own and those db.ApplyFunctions made
-- (their owners' files would make them again).
DROP VIEW performance_hourly_live, performance_live, performance_monthly_live, performance_program_live;
DROP TABLE
    schema_compatibility, server_instances, synthetic_chains, audit_log, mail_outbox,
    webhook_attempts, webhook_deliveries, webhook_events, webhook_endpoints,
    performance_deltas, performance_program_daily, performance_monthly, performance_daily, performance_hourly,
    processor_events, processor_connections,
    idempotency_keys, commission_clawbacks, commissions, payouts,
    refunds, sales, leads, customers,
    clicks_kept, clicks,
    referral_links, partner_invitations, partner_programs, partners, api_keys, programs,
    partner_sessions, login_tokens, login_sessions, partner_people, workspace_members, workspaces, accounts;

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('DROP FUNCTION %s', f);
    END LOOP;
END $$;
