-- clicks_count_events keeps the click counts (event_count_deltas, folded by roll_up_event_counts) as
-- clicks are written: a statement-level trigger on clicks, counting real clicks (not test, not bots).
CREATE OR REPLACE FUNCTION clicks_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.click_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o WHERE events_counted(o.is_test, o.is_bot, false) GROUP BY 1, 2) g;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.click_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n WHERE events_counted(n.is_test, n.is_bot, false) GROUP BY 1, 2) g;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.click_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE events_counted(o.is_test, o.is_bot, false) AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2) g;
        PERFORM bump_event_counts(g.program_id, 'click', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.click_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE events_counted(n.is_test, n.is_bot, false) AND (o.program_id, o.click_timestamp, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.is_test, n.is_bot) GROUP BY 1, 2) g;
    END IF;
    RETURN NULL;
END $$;
