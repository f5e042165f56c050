-- performance_on_lead keeps the leads of the performance counts as leads are written: a statement-level
-- trigger on leads counting real leads by UTC day and partner (performance_lead_partner).
CREATE OR REPLACE FUNCTION performance_on_lead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, leads)
        SELECT n.program_id, (n.lead_timestamp AT TIME ZONE 'UTC')::date, performance_lead_partner(n.click_ref, n.customer_id), '', count(*)
        FROM new_rows n WHERE events_counted(n.is_test, false, false) GROUP BY 1, 2, 3;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, leads)
        SELECT o.program_id, (o.lead_timestamp AT TIME ZONE 'UTC')::date, performance_lead_partner(o.click_ref, o.customer_id), '', -count(*)
        FROM old_rows o WHERE events_counted(o.is_test, false, false) GROUP BY 1, 2, 3;
    ELSE
        -- A lead settling (its customer set) or moving: only rows whose counted key changed, and then the
        -- partner is looked up for both sides (the old customer's or click's partner as it is now, which
        -- is what it was: neither changes partner).
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, leads)
        SELECT d.program_id, d.day, d.partner_id, '', sum(d.n) FROM (
            SELECT o.program_id, (o.lead_timestamp AT TIME ZONE 'UTC')::date AS day,
                performance_lead_partner(o.click_ref, o.customer_id) AS partner_id, -1 AS n
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE events_counted(o.is_test, false, false)
                AND (o.program_id, o.lead_timestamp, o.is_test, o.click_ref, o.customer_id) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test, n.click_ref, n.customer_id)
            UNION ALL
            SELECT n.program_id, (n.lead_timestamp AT TIME ZONE 'UTC')::date, performance_lead_partner(n.click_ref, n.customer_id), 1
            FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE events_counted(n.is_test, false, false)
                AND (o.program_id, o.lead_timestamp, o.is_test, o.click_ref, o.customer_id) IS DISTINCT FROM (n.program_id, n.lead_timestamp, n.is_test, n.click_ref, n.customer_id)
        ) d GROUP BY 1, 2, 3 HAVING sum(d.n) <> 0;
    END IF;
    RETURN NULL;
END $$;
