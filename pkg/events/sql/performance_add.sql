-- performance_add appends deltas of the counts (one array per measure, position = one delta; a measure's
-- array NULL when it adds nothing): added up per program, hour (p_hour truncated to its UTC hour),
-- partner and currency, and only those that change something. Writers call it in the statement that
-- writes their events, with what pkg/counting decided each event counts for; it decides nothing.
-- roll_up_performance folds the deltas into the counts.
CREATE OR REPLACE FUNCTION performance_add(p_program bigint[], p_hour timestamptz[], p_partner bigint[], p_currency text[],
    p_clicks bigint[], p_bot_clicks bigint[], p_leads bigint[], p_provisional_leads bigint[], p_sales bigint[],
    p_customers bigint[], p_revenue bigint[], p_commission bigint[])
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    INSERT INTO performance_deltas (program_id, hour, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales,
        customers, revenue_cents, commission_cents)
    SELECT d.program_id, d.hour, d.partner_id, d.currency, d.clicks, d.bot_clicks, d.leads, d.provisional_leads, d.sales,
        d.customers, d.revenue, d.commission
    FROM (
        SELECT u.program_id, date_trunc('hour', u.hour, 'UTC') AS hour, u.partner_id, u.currency,
            sum(COALESCE(u.clicks, 0)) AS clicks, sum(COALESCE(u.bot_clicks, 0)) AS bot_clicks, sum(COALESCE(u.leads, 0)) AS leads,
            sum(COALESCE(u.provisional_leads, 0)) AS provisional_leads, sum(COALESCE(u.sales, 0)) AS sales,
            sum(COALESCE(u.customers, 0)) AS customers, sum(COALESCE(u.revenue, 0)) AS revenue,
            sum(COALESCE(u.commission, 0)) AS commission
        FROM unnest(p_program, p_hour, p_partner, p_currency, p_clicks, p_bot_clicks, p_leads, p_provisional_leads, p_sales,
            p_customers, p_revenue, p_commission)
            AS u(program_id, hour, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales, customers, revenue,
                commission)
        GROUP BY 1, 2, 3, 4
    ) d
    WHERE (d.clicks, d.bot_clicks, d.leads, d.provisional_leads, d.sales, d.customers, d.revenue, d.commission)
        <> (0, 0, 0, 0, 0, 0, 0, 0)
    ORDER BY 1, 2, 3, 4;
END $$;
