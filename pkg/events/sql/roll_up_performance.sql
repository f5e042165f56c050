-- roll_up_performance folds the deltas present into the hourly (per program), daily, monthly and
-- per-program daily counts and returns how many it folded. Concurrent calls (several replicas) take
-- disjoint deltas (SKIP LOCKED) and upsert in key order, so two cannot deadlock.
CREATE OR REPLACE FUNCTION roll_up_performance() RETURNS bigint
LANGUAGE sql AS $$
    WITH moved AS (
        DELETE FROM performance_deltas WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM performance_deltas LIMIT 100000 FOR UPDATE SKIP LOCKED))
        RETURNING program_id, hour, (hour AT TIME ZONE 'UTC')::date AS day, partner_id, currency, clicks, bot_clicks, leads,
            provisional_leads, sales, customers, revenue_cents, commission_cents
    ), hourly AS (
        INSERT INTO performance_hourly AS p (program_id, hour, clicks, leads, provisional_leads, sales)
        SELECT program_id, hour, sum(clicks), sum(leads), sum(provisional_leads), sum(sales)
        FROM moved GROUP BY 1, 2
        HAVING sum(clicks) <> 0 OR sum(leads) <> 0 OR sum(provisional_leads) <> 0 OR sum(sales) <> 0
        ORDER BY 1, 2
        ON CONFLICT (program_id, hour) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, leads = p.leads + EXCLUDED.leads,
            provisional_leads = p.provisional_leads + EXCLUDED.provisional_leads, sales = p.sales + EXCLUDED.sales
    ), daily AS (
        INSERT INTO performance_daily AS p (program_id, day, partner_id, currency, clicks, bot_clicks, leads, provisional_leads, sales,
            customers, revenue_cents, commission_cents)
        SELECT program_id, day, partner_id, currency, sum(clicks), sum(bot_clicks), sum(leads), sum(provisional_leads), sum(sales),
            sum(customers), sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (program_id, day, partner_id, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            provisional_leads = p.provisional_leads + EXCLUDED.provisional_leads, sales = p.sales + EXCLUDED.sales,
            customers = p.customers + EXCLUDED.customers, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    ), monthly AS (
        INSERT INTO performance_monthly AS p (program_id, month, partner_id, currency, clicks, bot_clicks, leads, provisional_leads,
            sales, customers, revenue_cents, commission_cents)
        SELECT program_id, date_trunc('month', day)::date, partner_id, currency, sum(clicks), sum(bot_clicks), sum(leads),
            sum(provisional_leads), sum(sales), sum(customers), sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (program_id, month, partner_id, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            provisional_leads = p.provisional_leads + EXCLUDED.provisional_leads, sales = p.sales + EXCLUDED.sales,
            customers = p.customers + EXCLUDED.customers, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    ), program AS (
        INSERT INTO performance_program_daily AS p (program_id, day, currency, clicks, bot_clicks, leads, provisional_leads, sales,
            customers, revenue_cents, commission_cents)
        SELECT program_id, day, currency, sum(clicks), sum(bot_clicks), sum(leads), sum(provisional_leads), sum(sales),
            sum(customers), sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (program_id, day, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            provisional_leads = p.provisional_leads + EXCLUDED.provisional_leads, sales = p.sales + EXCLUDED.sales,
            customers = p.customers + EXCLUDED.customers, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    )
    SELECT count(*) FROM moved;
$$;
