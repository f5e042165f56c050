-- Hourly counts of each program's listed events (real clicks, leads and conversions), kept exact by
-- statement-level triggers: the events list counts its total and finds a deep page's hour from them
-- instead of scanning millions of rows.
CREATE TABLE event_counts (
    program_id  bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    event_type  text        NOT NULL CHECK (event_type IN ('click', 'lead', 'conversion')),
    hour        timestamptz NOT NULL,
    n           bigint      NOT NULL,
    PRIMARY KEY (program_id, event_type, hour)
);
-- Opening one day into its hours reads 24 × 3 rows by this index instead of scanning the program's year.
CREATE INDEX event_counts_program_hour_idx ON event_counts (program_id, hour);
-- The same by UTC day: a year is 365 rows to add up, not 8 760.
CREATE TABLE event_counts_daily (
    program_id  bigint      NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    event_type  text        NOT NULL CHECK (event_type IN ('click', 'lead', 'conversion')),
    day         date        NOT NULL,
    n           bigint      NOT NULL,
    PRIMARY KEY (program_id, event_type, day)
);

-- bump_event_counts adds delta events of a type at ts to both tables.
CREATE FUNCTION bump_event_counts(p_program bigint, p_type text, p_hour timestamptz, p_delta bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO event_counts AS c (program_id, event_type, hour, n) VALUES (p_program, p_type, p_hour, p_delta)
    ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    INSERT INTO event_counts_daily AS c (program_id, event_type, day, n) VALUES (p_program, p_type, (p_hour AT TIME ZONE 'UTC')::date, p_delta)
    ON CONFLICT (program_id, event_type, day) DO UPDATE SET n = c.n + EXCLUDED.n;
$$;

CREATE FUNCTION clicks_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.click_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o WHERE NOT o.is_test AND NOT o.is_bot GROUP BY 1, 2) g;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.click_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n WHERE NOT n.is_test AND NOT n.is_bot GROUP BY 1, 2) g;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.click_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND NOT o.is_bot AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2) g;
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.click_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND NOT n.is_bot AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2) g;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER clicks_count_insert AFTER INSERT ON clicks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
CREATE TRIGGER clicks_count_update AFTER UPDATE ON clicks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
CREATE TRIGGER clicks_count_delete AFTER DELETE ON clicks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
INSERT INTO event_counts (program_id, event_type, hour, n)
SELECT n.program_id, 'click', date_trunc('hour', n.click_timestamp, 'UTC'), count(*) FROM clicks n WHERE NOT n.is_test AND NOT n.is_bot GROUP BY 1, 2, 3;

CREATE FUNCTION leads_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.lead_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o WHERE NOT o.is_test GROUP BY 1, 2) g;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.lead_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n WHERE NOT n.is_test GROUP BY 1, 2) g;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.lead_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2) g;
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.lead_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2) g;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER leads_count_insert AFTER INSERT ON leads REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION leads_count_events();
CREATE TRIGGER leads_count_update AFTER UPDATE ON leads REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION leads_count_events();
CREATE TRIGGER leads_count_delete AFTER DELETE ON leads REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION leads_count_events();
INSERT INTO event_counts (program_id, event_type, hour, n)
SELECT n.program_id, 'lead', date_trunc('hour', n.lead_timestamp, 'UTC'), count(*) FROM leads n WHERE NOT n.is_test GROUP BY 1, 2, 3;

CREATE FUNCTION sales_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM bump_event_counts(g.program_id, 'conversion', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.sale_date, 'UTC') AS hour, -count(*) AS n FROM old_rows o WHERE NOT o.is_test GROUP BY 1, 2) g;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM bump_event_counts(g.program_id, 'conversion', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.sale_date, 'UTC') AS hour, count(*) AS n FROM new_rows n WHERE NOT n.is_test GROUP BY 1, 2) g;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        PERFORM bump_event_counts(g.program_id, 'conversion', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.sale_date, 'UTC') AS hour, -count(*) AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND (o.program_id, o.sale_date, o.is_test) IS DISTINCT FROM (n.program_id, n.sale_date, n.is_test) GROUP BY 1, 2) g;
        PERFORM bump_event_counts(g.program_id, 'conversion', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.sale_date, 'UTC') AS hour, count(*) AS n FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND (o.program_id, o.sale_date, o.is_test) IS DISTINCT FROM (n.program_id, n.sale_date, n.is_test) GROUP BY 1, 2) g;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER sales_count_insert AFTER INSERT ON sales REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sales_count_events();
CREATE TRIGGER sales_count_update AFTER UPDATE ON sales REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sales_count_events();
CREATE TRIGGER sales_count_delete AFTER DELETE ON sales REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION sales_count_events();
INSERT INTO event_counts (program_id, event_type, hour, n)
SELECT n.program_id, 'conversion', date_trunc('hour', n.sale_date, 'UTC'), count(*) FROM sales n WHERE NOT n.is_test GROUP BY 1, 2, 3;
INSERT INTO event_counts_daily (program_id, event_type, day, n)
SELECT program_id, event_type, (hour AT TIME ZONE 'UTC')::date, sum(n) FROM event_counts GROUP BY 1, 2, 3;
