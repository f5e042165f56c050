-- reftrack: backward-compatible
-- Reports (issue 30): what each partner's clicks, leads and sales earned, kept exact by statement-level
-- triggers so that a program's period (7, 30, 90 days or all) is a few hundred rows to add up whatever
-- its number of events. The previous build runs against this schema unchanged: it never reads these
-- tables, and pkg/events' triggers that write them (attached by db.ApplyFunctions, which fills the tables
-- from the events in the same transaction) are not its own.
--
-- The figures, in three tables of the same columns: by program, UTC day, partner and currency
-- (performance_daily: the partners' table reads the days at a period's edges), by program, month, partner
-- and currency (performance_monthly: the months a period covers whole), and by program, day and currency
-- (performance_program_daily: the totals and the days' series, whatever the number of partners).
-- Clicks and leads have no currency (''); sales and their commissions count under the sale's. partner_id
-- 0 is a lead whose click and customer name no partner. revenue_cents is what the sales took less their
-- refunds; commission_cents what their commissions earned less reversals and clawbacks, rejected ones
-- excluded. Test events and bots' clicks are not counted (events_counted); bot_clicks counts the bots'
-- (not test) clicks apart, so that the dashboard can say how many it filtered.
CREATE TABLE performance_daily (
    program_id        bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    day               date   NOT NULL,
    partner_id        bigint NOT NULL,
    currency          text   NOT NULL,
    clicks            bigint NOT NULL DEFAULT 0,
    bot_clicks        bigint NOT NULL DEFAULT 0,
    leads             bigint NOT NULL DEFAULT 0,
    sales             bigint NOT NULL DEFAULT 0,
    revenue_cents     bigint NOT NULL DEFAULT 0,
    commission_cents  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, day, partner_id, currency)
);
-- month is the month's first day.
CREATE TABLE performance_monthly (
    program_id        bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    month             date   NOT NULL,
    partner_id        bigint NOT NULL,
    currency          text   NOT NULL,
    clicks            bigint NOT NULL DEFAULT 0,
    bot_clicks        bigint NOT NULL DEFAULT 0,
    leads             bigint NOT NULL DEFAULT 0,
    sales             bigint NOT NULL DEFAULT 0,
    revenue_cents     bigint NOT NULL DEFAULT 0,
    commission_cents  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, month, partner_id, currency)
);
CREATE TABLE performance_program_daily (
    program_id        bigint NOT NULL REFERENCES programs (id) ON DELETE CASCADE,
    day               date   NOT NULL,
    currency          text   NOT NULL,
    clicks            bigint NOT NULL DEFAULT 0,
    bot_clicks        bigint NOT NULL DEFAULT 0,
    leads             bigint NOT NULL DEFAULT 0,
    sales             bigint NOT NULL DEFAULT 0,
    revenue_cents     bigint NOT NULL DEFAULT 0,
    commission_cents  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (program_id, day, currency)
);

-- As event_count_deltas (migration 000009): the triggers append, roll_up_performance() folds the rows into
-- the three tables every second, and readers add the rows still waiting, so no event's transaction waits
-- on a counter row another holds.
CREATE TABLE performance_deltas (
    program_id        bigint NOT NULL,
    day               date   NOT NULL,
    partner_id        bigint NOT NULL,
    currency          text   NOT NULL,
    clicks            bigint NOT NULL DEFAULT 0,
    bot_clicks        bigint NOT NULL DEFAULT 0,
    leads             bigint NOT NULL DEFAULT 0,
    sales             bigint NOT NULL DEFAULT 0,
    revenue_cents     bigint NOT NULL DEFAULT 0,
    commission_cents  bigint NOT NULL DEFAULT 0
);
CREATE INDEX performance_deltas_program_day_idx ON performance_deltas (program_id, day);

-- What readers use: the folded counts plus the deltas still waiting.
CREATE VIEW performance_live AS
    SELECT program_id, day, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents FROM performance_daily
    UNION ALL
    SELECT program_id, day, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents FROM performance_deltas;
CREATE VIEW performance_monthly_live AS
    SELECT program_id, month, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents FROM performance_monthly
    UNION ALL
    SELECT program_id, date_trunc('month', day)::date, partner_id, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents
    FROM performance_deltas;
CREATE VIEW performance_program_live AS
    SELECT program_id, day, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents FROM performance_program_daily
    UNION ALL
    SELECT program_id, day, currency, clicks, bot_clicks, leads, sales, revenue_cents, commission_cents FROM performance_deltas;
