-- performance_on_click keeps the clicks of the performance counts (performance_deltas, folded by
-- roll_up_performance) as clicks are written: a statement-level trigger on clicks counting real clicks
-- (events_counted) by UTC day and partner, and the bots' (not test) clicks apart. An update moves only the
-- clicks whose counted key changed.
CREATE OR REPLACE FUNCTION performance_on_click() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, clicks, bot_clicks)
        SELECT n.program_id, (n.click_timestamp AT TIME ZONE 'UTC')::date, n.partner_id, '',
            count(*) FILTER (WHERE events_counted(n.is_test, n.is_bot, false)), count(*) FILTER (WHERE n.is_bot)
        FROM new_rows n WHERE NOT n.is_test GROUP BY 1, 2, 3;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, clicks, bot_clicks)
        SELECT o.program_id, (o.click_timestamp AT TIME ZONE 'UTC')::date, o.partner_id, '',
            -count(*) FILTER (WHERE events_counted(o.is_test, o.is_bot, false)), -count(*) FILTER (WHERE o.is_bot)
        FROM old_rows o WHERE NOT o.is_test GROUP BY 1, 2, 3;
    ELSE
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, clicks, bot_clicks)
        SELECT d.program_id, d.day, d.partner_id, '', sum(d.n), sum(d.bots) FROM (
            SELECT o.program_id, (o.click_timestamp AT TIME ZONE 'UTC')::date AS day, o.partner_id,
                -events_counted(o.is_test, o.is_bot, false)::int AS n, -(NOT o.is_test AND o.is_bot)::int AS bots
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE (o.program_id, o.click_timestamp, o.partner_id, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.partner_id, n.is_test, n.is_bot)
            UNION ALL
            SELECT n.program_id, (n.click_timestamp AT TIME ZONE 'UTC')::date, n.partner_id,
                events_counted(n.is_test, n.is_bot, false)::int, (NOT n.is_test AND n.is_bot)::int
            FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (o.program_id, o.click_timestamp, o.partner_id, o.is_test, o.is_bot) IS DISTINCT FROM (n.program_id, n.click_timestamp, n.partner_id, n.is_test, n.is_bot)
        ) d GROUP BY 1, 2, 3 HAVING sum(d.n) <> 0 OR sum(d.bots) <> 0;
    END IF;
    RETURN NULL;
END $$;
