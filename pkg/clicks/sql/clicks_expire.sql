-- clicks_expire drops the months before p_before, first copying into clicks_kept the clicks a customer,
-- lead or sale points at. It returns each dropped month with the clicks kept from it.
CREATE OR REPLACE FUNCTION clicks_expire(p_before date) RETURNS TABLE (month date, kept bigint) LANGUAGE plpgsql AS $$
DECLARE
    part record;
    n bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('reftrack.clicks_partitions'));
    FOR part IN SELECT c.relname, to_date(substr(c.relname, 8), 'YYYY_MM') AS m
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'clicks'::regclass AND c.relname ~ '^clicks_[0-9]{4}_[0-9]{2}$'
        ORDER BY 2
    LOOP
        CONTINUE WHEN part.m >= date_trunc('month', p_before)::date;
        -- A month's ids are one range (clicks_make_id): the references into it are read by the click_ref
        -- indexes, never by scanning the month's clicks.
        EXECUTE format('INSERT INTO clicks_kept SELECT * FROM %I k WHERE k.id IN (
                SELECT c.click_ref FROM customers c WHERE c.click_ref BETWEEN $1 AND $2
                UNION SELECT l.click_ref FROM leads l WHERE l.click_ref BETWEEN $1 AND $2
                UNION SELECT s.click_ref FROM sales s WHERE s.click_ref BETWEEN $1 AND $2)
            ON CONFLICT DO NOTHING', part.relname)
            USING clicks_make_id(part.m, 0), clicks_make_id(part.m, (1::bigint << 40) - 1);
        GET DIAGNOSTICS n = ROW_COUNT;
        EXECUTE format('DROP TABLE %I', part.relname);
        month := part.m;
        kept := n;
        RETURN NEXT;
    END LOOP;
END $$;
