-- The dashboard signs in through the same login sessions as the CLI. A dashboard session is bound to the
-- browser that started it (the hash of a secret kept in that browser's short-lived cookie), so a login
-- link sent to someone else cannot sign their browser in to the sender's account.
ALTER TABLE login_sessions
    ADD COLUMN purpose      text  NOT NULL DEFAULT 'cli' CHECK (purpose IN ('cli', 'dashboard')),
    ADD COLUMN browser_hash bytea CHECK (browser_hash IS NULL OR length(browser_hash) = 32),
    ADD CONSTRAINT login_sessions_dashboard_bound CHECK (purpose = 'cli' OR browser_hash IS NOT NULL);

-- The dashboard's test-data view lists test events, newest first, as the real ones are.
CREATE INDEX clicks_program_test_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE is_test AND NOT is_bot;
CREATE INDEX leads_program_test_events_idx ON leads (program_id, lead_timestamp DESC, id DESC) WHERE is_test;
CREATE INDEX sales_program_test_events_idx ON sales (program_id, sale_date DESC, id DESC) WHERE is_test;
