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

CREATE FUNCTION clicks_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'click', date_trunc('hour', o.click_timestamp), -count(*) FROM old_rows o WHERE NOT o.is_test AND NOT o.is_bot GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'click', date_trunc('hour', n.click_timestamp), count(*) FROM new_rows n WHERE NOT n.is_test AND NOT n.is_bot GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'click', date_trunc('hour', o.click_timestamp), -count(*) FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND NOT o.is_bot AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'click', date_trunc('hour', n.click_timestamp), count(*) FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND NOT n.is_bot AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
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
SELECT n.program_id, 'click', date_trunc('hour', n.click_timestamp), count(*) FROM clicks n WHERE NOT n.is_test AND NOT n.is_bot GROUP BY 1, 2, 3;

CREATE FUNCTION leads_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'lead', date_trunc('hour', o.lead_timestamp), -count(*) FROM old_rows o WHERE NOT o.is_test GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'lead', date_trunc('hour', n.lead_timestamp), count(*) FROM new_rows n WHERE NOT n.is_test GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'lead', date_trunc('hour', o.lead_timestamp), -count(*) FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'lead', date_trunc('hour', n.lead_timestamp), count(*) FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
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
SELECT n.program_id, 'lead', date_trunc('hour', n.lead_timestamp), count(*) FROM leads n WHERE NOT n.is_test GROUP BY 1, 2, 3;

CREATE FUNCTION sales_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'conversion', date_trunc('hour', o.sale_date), -count(*) FROM old_rows o WHERE NOT o.is_test GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'conversion', date_trunc('hour', n.sale_date), count(*) FROM new_rows n WHERE NOT n.is_test GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT o.program_id, 'conversion', date_trunc('hour', o.sale_date), -count(*) FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE NOT o.is_test AND (o.program_id, o.sale_date, o.is_test) IS DISTINCT FROM (n.program_id, n.sale_date, n.is_test) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
        INSERT INTO event_counts AS c (program_id, event_type, hour, n)
        SELECT n.program_id, 'conversion', date_trunc('hour', n.sale_date), count(*) FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE NOT n.is_test AND (o.program_id, o.sale_date, o.is_test) IS DISTINCT FROM (n.program_id, n.sale_date, n.is_test) GROUP BY 1, 2, 3
        ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
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
SELECT n.program_id, 'conversion', date_trunc('hour', n.sale_date), count(*) FROM sales n WHERE NOT n.is_test GROUP BY 1, 2, 3;
