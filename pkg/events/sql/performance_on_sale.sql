-- performance_on_sale keeps the sales and revenue of the performance counts as sales are written: a
-- statement-level trigger on sales counting real sales by UTC day, partner and currency, and what they
-- took less their refunds. An update (a refund, a move) takes the old row's part out and puts the new one's
-- in; a sale moved to another day takes its commission's part (less its clawbacks) along, as that is
-- counted on the sale's day.
CREATE OR REPLACE FUNCTION performance_on_sale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, sales, revenue_cents)
        SELECT n.program_id, (n.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency, count(*),
            sum(n.amount_cents - n.refunded_amount_cents)
        FROM new_rows n WHERE events_counted(n.is_test, false, false) GROUP BY 1, 2, 3, 4;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, sales, revenue_cents)
        SELECT o.program_id, (o.sale_date AT TIME ZONE 'UTC')::date, o.partner_id, o.currency, -count(*),
            -sum(o.amount_cents - o.refunded_amount_cents)
        FROM old_rows o WHERE events_counted(o.is_test, false, false) GROUP BY 1, 2, 3, 4;
    ELSE
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, sales, revenue_cents)
        SELECT d.program_id, d.day, d.partner_id, d.currency, sum(d.n), sum(d.cents) FROM (
            SELECT o.program_id, (o.sale_date AT TIME ZONE 'UTC')::date AS day, o.partner_id, o.currency,
                -1 AS n, -(o.amount_cents - o.refunded_amount_cents) AS cents
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            WHERE events_counted(o.is_test, false, false)
                AND (o.program_id, o.sale_date, o.partner_id, o.currency, o.is_test, o.amount_cents, o.refunded_amount_cents)
                    IS DISTINCT FROM (n.program_id, n.sale_date, n.partner_id, n.currency, n.is_test, n.amount_cents, n.refunded_amount_cents)
            UNION ALL
            SELECT n.program_id, (n.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency,
                1, n.amount_cents - n.refunded_amount_cents
            FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE events_counted(n.is_test, false, false)
                AND (o.program_id, o.sale_date, o.partner_id, o.currency, o.is_test, o.amount_cents, o.refunded_amount_cents)
                    IS DISTINCT FROM (n.program_id, n.sale_date, n.partner_id, n.currency, n.is_test, n.amount_cents, n.refunded_amount_cents)
        ) d GROUP BY 1, 2, 3, 4 HAVING sum(d.n) <> 0 OR sum(d.cents) <> 0;
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT m.program_id, m.day, m.partner_id, m.currency, sum(m.cents) FROM (
            SELECT c.program_id, x.day, c.partner_id, c.currency, x.sign * (
                performance_commission_cents(c.status, c.is_test, c.amount_cents, c.reversed_amount_cents)
                - COALESCE((SELECT sum(k.amount_cents) FROM commission_clawbacks k WHERE k.commission_id = c.id AND NOT k.is_test), 0)) AS cents
            FROM old_rows o JOIN new_rows n ON n.id = o.id
            CROSS JOIN LATERAL (VALUES (-1, (o.sale_date AT TIME ZONE 'UTC')::date), (1, (n.sale_date AT TIME ZONE 'UTC')::date)) AS x(sign, day)
            JOIN commissions c ON c.sale_id = o.id
            WHERE (o.sale_date AT TIME ZONE 'UTC')::date <> (n.sale_date AT TIME ZONE 'UTC')::date
        ) m GROUP BY 1, 2, 3, 4 HAVING sum(m.cents) <> 0;
    END IF;
    RETURN NULL;
END $$;
