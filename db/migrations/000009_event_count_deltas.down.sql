ALTER TABLE partner_programs ADD COLUMN leads_count bigint NOT NULL DEFAULT 0, ADD COLUMN sales_count bigint NOT NULL DEFAULT 0;
UPDATE partner_programs pp SET
    leads_count = (SELECT count(*) FROM leads l JOIN customers cu ON cu.id = l.customer_id
        WHERE cu.partner_program_id = pp.id),
    sales_count = (SELECT count(*) FROM sales s JOIN customers cu ON cu.id = s.customer_id
        WHERE cu.partner_program_id = pp.id);

DROP VIEW IF EXISTS event_counts_daily_live;
DROP VIEW IF EXISTS event_counts_live;
SELECT roll_up_event_counts();
DROP FUNCTION IF EXISTS roll_up_event_counts();
CREATE OR REPLACE FUNCTION bump_event_counts(p_program bigint, p_type text, p_hour timestamptz, p_delta bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO event_counts AS c (program_id, event_type, hour, n) VALUES (p_program, p_type, p_hour, p_delta)
    ON CONFLICT (program_id, event_type, hour) DO UPDATE SET n = c.n + EXCLUDED.n;
    INSERT INTO event_counts_daily AS c (program_id, event_type, day, n) VALUES (p_program, p_type, (p_hour AT TIME ZONE 'UTC')::date, p_delta)
    ON CONFLICT (program_id, event_type, day) DO UPDATE SET n = c.n + EXCLUDED.n;
$$;
DROP TABLE IF EXISTS event_count_deltas;
