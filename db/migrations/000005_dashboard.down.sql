DROP INDEX IF EXISTS sales_program_test_events_idx;
DROP INDEX IF EXISTS leads_program_test_events_idx;
DROP INDEX IF EXISTS clicks_program_test_events_idx;
ALTER TABLE login_sessions
    DROP CONSTRAINT IF EXISTS login_sessions_dashboard_bound,
    DROP COLUMN IF EXISTS browser_hash,
    DROP COLUMN IF EXISTS purpose;
