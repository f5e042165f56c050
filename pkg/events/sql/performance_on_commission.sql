-- performance_on_commission keeps the commission of the performance counts as commissions are written: a
-- statement-level trigger on commissions adding what each counts for (performance_commission_cents) on its
-- sale's UTC day, for its partner, in its currency. Approvals and payouts change nothing counted: an
-- update writes only the commissions whose part changed.
CREATE OR REPLACE FUNCTION performance_on_commission() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT n.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency,
            sum(performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents))
        FROM new_rows n JOIN sales s ON s.id = n.sale_id
        WHERE performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents) <> 0
        GROUP BY 1, 2, 3, 4;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT o.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, o.partner_id, o.currency,
            -sum(performance_commission_cents(o.status, o.is_test, o.amount_cents, o.reversed_amount_cents))
        FROM old_rows o JOIN sales s ON s.id = o.sale_id
        WHERE performance_commission_cents(o.status, o.is_test, o.amount_cents, o.reversed_amount_cents) <> 0
        GROUP BY 1, 2, 3, 4;
    ELSE
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT d.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, d.partner_id, d.currency, sum(d.cents) FROM (
            SELECT o.program_id, o.sale_id, o.partner_id, o.currency,
                -performance_commission_cents(o.status, o.is_test, o.amount_cents, o.reversed_amount_cents) AS cents
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE (o.program_id, o.sale_id, o.partner_id, o.currency,
                    performance_commission_cents(o.status, o.is_test, o.amount_cents, o.reversed_amount_cents))
                IS DISTINCT FROM (n.program_id, n.sale_id, n.partner_id, n.currency,
                    performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents))
            UNION ALL
            SELECT n.program_id, n.sale_id, n.partner_id, n.currency,
                performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents)
            FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (o.program_id, o.sale_id, o.partner_id, o.currency,
                    performance_commission_cents(o.status, o.is_test, o.amount_cents, o.reversed_amount_cents))
                IS DISTINCT FROM (n.program_id, n.sale_id, n.partner_id, n.currency,
                    performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents))
        ) d JOIN sales s ON s.id = d.sale_id
        GROUP BY 1, 2, 3, 4 HAVING sum(d.cents) <> 0;
    END IF;
    RETURN NULL;
END $$;
