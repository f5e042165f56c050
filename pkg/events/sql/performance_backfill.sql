-- performance_backfill counts the rows of p_table already there into the performance counts, as its
-- performance trigger would have: db.ApplyFunctions calls it when it attaches the table's INSERT trigger, in
-- that transaction (pkg/events/sql.Triggers).
CREATE OR REPLACE FUNCTION performance_backfill(p_table text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF p_table = 'clicks' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, clicks, bot_clicks)
        SELECT n.program_id, (n.click_timestamp AT TIME ZONE 'UTC')::date, n.partner_id, '',
            count(*) FILTER (WHERE events_counted(n.is_test, n.is_bot, false)), count(*) FILTER (WHERE n.is_bot)
        FROM clicks n WHERE NOT n.is_test GROUP BY 1, 2, 3;
    ELSIF p_table = 'leads' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, leads)
        SELECT n.program_id, (n.lead_timestamp AT TIME ZONE 'UTC')::date, performance_lead_partner(n.click_ref, n.customer_id), '', count(*)
        FROM leads n WHERE events_counted(n.is_test, false, false) GROUP BY 1, 2, 3;
    ELSIF p_table = 'sales' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, sales, revenue_cents)
        SELECT n.program_id, (n.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency, count(*),
            sum(n.amount_cents - n.refunded_amount_cents)
        FROM sales n WHERE events_counted(n.is_test, false, false) GROUP BY 1, 2, 3, 4;
    ELSIF p_table = 'commissions' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT n.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency,
            sum(performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents))
        FROM commissions n JOIN sales s ON s.id = n.sale_id
        WHERE performance_commission_cents(n.status, n.is_test, n.amount_cents, n.reversed_amount_cents) <> 0
        GROUP BY 1, 2, 3, 4;
    ELSIF p_table = 'commission_clawbacks' THEN
        INSERT INTO performance_deltas (program_id, day, partner_id, currency, commission_cents)
        SELECT n.program_id, (s.sale_date AT TIME ZONE 'UTC')::date, n.partner_id, n.currency, -sum(n.amount_cents)
        FROM commission_clawbacks n JOIN commissions c ON c.id = n.commission_id JOIN sales s ON s.id = c.sale_id
        WHERE NOT n.is_test GROUP BY 1, 2, 3, 4;
    ELSE
        RAISE EXCEPTION 'performance_backfill: no table %', p_table;
    END IF;
END $$;
