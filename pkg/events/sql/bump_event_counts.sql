-- bump_event_counts adds delta events of a type at ts to both tables.
CREATE OR REPLACE FUNCTION bump_event_counts(p_program bigint, p_type text, p_hour timestamptz, p_delta bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO event_count_deltas (program_id, event_type, hour, n) VALUES (p_program, p_type, p_hour, p_delta);
$$;
