DROP FUNCTION IF EXISTS apikeys_lookup(bytea[]);
CREATE INDEX IF NOT EXISTS sales_customer_idx ON sales (customer_id);
DROP INDEX IF EXISTS sales_customer_date_idx;
DROP FUNCTION IF EXISTS sales_record(bigint[], bigint[], text[], text[], bigint[], text[], bigint[], bigint[], boolean[], text[],
    bigint[], text[], text[], boolean[], text[], text[], text[], text[], text[], text[], text[], timestamptz[], boolean[], bigint[]);
DROP FUNCTION IF EXISTS sales_state(bigint[], text[], text[], text[]);
DROP FUNCTION IF EXISTS clicks_convert(bigint[]);
DROP FUNCTION IF EXISTS leads_convert(bigint[]);
DROP FUNCTION IF EXISTS attribution_convert(bigint[], timestamptz[]);
DROP FUNCTION IF EXISTS attribution_create_converted(bigint[], bigint[], text[], bigint[], bigint[], bigint[], boolean[], timestamptz[]);
DROP FUNCTION IF EXISTS attribution_lock_unchanged(bigint[], text[]);
