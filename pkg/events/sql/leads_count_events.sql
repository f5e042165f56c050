-- leads_count_events keeps the lead counts as leads are written: a statement-level trigger on leads.
CREATE OR REPLACE FUNCTION leads_count_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.lead_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o WHERE events_counted(o.is_test, false, false) GROUP BY 1, 2) g;
    ELSIF TG_OP = 'INSERT' THEN
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.lead_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n WHERE events_counted(n.is_test, false, false) GROUP BY 1, 2) g;
    ELSE
        -- Only rows whose counted key changed move between hours (most updates, such as converted, do not).
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT o.program_id AS program_id, date_trunc('hour', o.lead_timestamp, 'UTC') AS hour, -count(*) AS n FROM old_rows o JOIN new_rows n ON n.id = o.id
        WHERE events_counted(o.is_test, false, false) AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2) g;
        PERFORM bump_event_counts(g.program_id, 'lead', g.hour, g.n) FROM (
            SELECT n.program_id AS program_id, date_trunc('hour', n.lead_timestamp, 'UTC') AS hour, count(*) AS n FROM new_rows n JOIN old_rows o ON o.id = n.id
        WHERE events_counted(n.is_test, false, false) AND (o.program_id, o.lead_timestamp, o.is_test) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test) GROUP BY 1, 2) g;
    END IF;
    RETURN NULL;
END $$;
