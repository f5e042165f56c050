DROP FUNCTION IF EXISTS clicks_record(text[], bytea[], text[], boolean[], text[], text[], text[], text[], text[], text[],
    text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], text[], boolean[], bigint);
