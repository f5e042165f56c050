-- roll_up_performance folds the performance deltas present into the per-day, per-month and per-program
-- counts and returns how many it folded. As roll_up_event_counts: concurrent calls take disjoint deltas
-- (SKIP LOCKED) and upsert in key order, so two cannot deadlock.
CREATE OR REPLACE FUNCTION roll_up_performance() RETURNS bigint
LANGUAGE sql AS $$
    WITH moved AS (
        DELETE FROM performance_deltas WHERE ctid = ANY (ARRAY(
            SELECT ctid FROM performance_deltas LIMIT 100000 FOR UPDATE SKIP LOCKED))
        RETURNING program_id, day, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents
    ), daily AS (
        INSERT INTO performance_daily AS p (program_id, day, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents)
        SELECT program_id, day, partner_id, currency, sum(clicks), sum(bot_clicks), sum(leads), sum(sales), sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (program_id, day, partner_id, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            sales = p.sales + EXCLUDED.sales, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    ), monthly AS (
        INSERT INTO performance_monthly AS p (program_id, month, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents)
        SELECT program_id, date_trunc('month', day)::date, partner_id, currency, sum(clicks), sum(bot_clicks), sum(leads), sum(sales),
            sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
        ON CONFLICT (program_id, month, partner_id, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            sales = p.sales + EXCLUDED.sales, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    ), program AS (
        INSERT INTO performance_program_daily AS p (program_id, day, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents)
        SELECT program_id, day, currency, sum(clicks), sum(bot_clicks), sum(leads), sum(sales), sum(revenue_cents), sum(commission_cents)
        FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT (program_id, day, currency) DO UPDATE SET
            clicks = p.clicks + EXCLUDED.clicks, bot_clicks = p.bot_clicks + EXCLUDED.bot_clicks, leads = p.leads + EXCLUDED.leads,
            sales = p.sales + EXCLUDED.sales, revenue_cents = p.revenue_cents + EXCLUDED.revenue_cents,
            commission_cents = p.commission_cents + EXCLUDED.commission_cents
    )
    SELECT count(*) FROM moved;
$$;
