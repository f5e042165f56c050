DROP FUNCTION IF EXISTS leads_write(text[], bigint[], text[], bigint[], bigint[], text[], bigint[], text[], text[], text[], boolean[]);
DROP FUNCTION IF EXISTS leads_record_provisional(bigint, bigint, text, text, text, text, boolean);
DROP FUNCTION IF EXISTS leads_settle(bigint, text, bigint, bigint, text, bigint, text, text, text, boolean);
DROP FUNCTION IF EXISTS attribution_mark_lead(bigint, text);
DROP FUNCTION IF EXISTS attribution_create_lead(bigint, text, bigint, bigint, text, boolean);
DROP FUNCTION IF EXISTS leads_state(text[], bigint[], text[], boolean[]);
