-- clicks_prepare makes the monthly partitions from p_from's month on, p_months of them (the server calls
-- it at start and every hour; replicas may race, hence the lock, held to the end of the transaction).
CREATE OR REPLACE FUNCTION clicks_prepare(p_from date, p_months integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    m date;
    made integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('reftrack.clicks_partitions'));
    FOR i IN 0 .. p_months - 1 LOOP
        m := (date_trunc('month', p_from) + make_interval(months => i))::date;
        IF to_regclass('clicks_' || to_char(m, 'YYYY_MM')) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF clicks FOR VALUES FROM (%L) TO (%L)',
                'clicks_' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END $$;
