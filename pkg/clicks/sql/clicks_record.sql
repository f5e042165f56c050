-- clicks_record records a batch of clicks: one array per input, position = ord, NULL for a value not
-- sent. It decides each click's outcome, in this one order, which is the click's rule:
--   link_not_found      no referral link has the short link (aff);
--   link_misconfigured  the link has no partner or no program;
--   owner_suspended     the program's workspace has a suspended owner (accounts_suspended_owners);
--   origin_not_allowed  the browser's Origin is not among the program's allowed origins (no Origin passes);
--   link_disabled       the link is turned off;
--   recorded            a new click is stored;
--   repeated            the same visitor (p_visitor) clicked the same link, in the same mode (test or not),
--                       within p_repeat_seconds: that click is the answer and nothing is stored.
-- It returns, per ord, the outcome and, when recorded or repeated, the link's partner and program, the
-- program's cookie window and the click (its row id and click_id). A click is stored in the month its
-- click_id carries (pkg/clicks.NewClickID). What each stored click counts for (p_count_clicks,
-- p_count_bot_clicks: pkg/counting's decision) is added to the counts in the same statement
-- (pkg/events' performance_add), under the link's program and partner at the click's hour.
CREATE OR REPLACE FUNCTION clicks_record(p_aff text[], p_visitor bytea[], p_origin text[], p_test boolean[],
    p_click_id text[], p_affiliate_url text[], p_session_id text[], p_page_url text[], p_page_title text[],
    p_referrer_url text[], p_geo_country text[], p_geo_region text[], p_geo_city text[], p_device_type text[],
    p_device_os text[], p_browser_name text[], p_user_agent text[], p_ip inet[], p_screen_resolution text[],
    p_viewport_size text[], p_language text[], p_timezone text[], p_bot boolean[], p_count_clicks bigint[],
    p_count_bot_clicks bigint[], p_repeat_seconds bigint)
RETURNS TABLE (ord bigint, outcome text, partner_id bigint, program_id bigint, cookie_window_days integer,
    id bigint, click_id text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH input AS (
        SELECT * FROM unnest(p_aff, p_visitor, p_origin, p_test, p_click_id, p_affiliate_url, p_session_id, p_page_url,
            p_page_title, p_referrer_url, p_geo_country, p_geo_region, p_geo_city, p_device_type, p_device_os,
            p_browser_name, p_user_agent, p_ip, p_screen_resolution, p_viewport_size, p_language, p_timezone, p_bot,
            p_count_clicks, p_count_bot_clicks)
        WITH ORDINALITY AS t(aff, visitor, origin, is_test, click_id, affiliate_url, session_id, page_url, page_title,
            referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
            screen_resolution, viewport_size, language, timezone, is_bot, count_clicks, count_bot_clicks, ord)
    ), decided AS (
        SELECT i.*, l.id AS link_id, l.partner_id, l.program_id, p.cookie_window_days,
            CASE
                WHEN l.id IS NULL THEN 'link_not_found'
                WHEN l.partner_id IS NULL OR p.id IS NULL THEN 'link_misconfigured'
                WHEN EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id)) THEN 'owner_suspended'
                WHEN i.origin IS NOT NULL AND NOT i.origin = ANY (p.allowed_origins) THEN 'origin_not_allowed'
                WHEN NOT l.enabled THEN 'link_disabled'
                ELSE 'ok'
            END AS outcome
        FROM input i LEFT JOIN referral_links l ON l.short_link = i.aff LEFT JOIN programs p ON p.id = l.program_id
    ), ok AS (
        SELECT * FROM decided WHERE decided.outcome = 'ok'
    ), prev AS (
        SELECT DISTINCT ON (ok.ord) ok.ord, c.id, c.click_id FROM ok
        JOIN clicks c ON c.link_id = ok.link_id AND c.visitor_hash = ok.visitor AND c.is_test = ok.is_test
            AND c.click_timestamp > now() - p_repeat_seconds * interval '1 second'
            AND c.click_month >= date_trunc('month', (now() - p_repeat_seconds * interval '1 second') AT TIME ZONE 'UTC')::date
        ORDER BY ok.ord, c.click_timestamp DESC
    ), ins AS (
        INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
            referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
            visitor_hash, screen_resolution, viewport_size, language, timezone, is_test, is_bot)
        SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, ok.click_id, ok.program_id, ok.link_id, ok.partner_id,
            ok.affiliate_url, ok.session_id, ok.page_url, ok.page_title, ok.referrer_url, ok.geo_country, ok.geo_region,
            ok.geo_city, ok.device_type, ok.device_os, ok.browser_name, ok.user_agent, ok.ip, ok.visitor,
            ok.screen_resolution, ok.viewport_size, ok.language, ok.timezone, ok.is_test, ok.is_bot
        FROM ok CROSS JOIN LATERAL (SELECT clicks_month(ok.click_id) AS month) m
        WHERE NOT EXISTS (SELECT 1 FROM prev WHERE prev.ord = ok.ord)
        RETURNING id, click_id, click_timestamp
    ), counted AS (
        -- One row whatever was stored, joined to every answer below: so it is evaluated, once.
        SELECT performance_add(p_program => array_agg(ok.program_id), p_hour => array_agg(ins.click_timestamp),
            p_partner => array_agg(ok.partner_id), p_currency => array_agg(''::text), p_clicks => array_agg(ok.count_clicks),
            p_bot_clicks => array_agg(ok.count_bot_clicks), p_leads => NULL, p_provisional_leads => NULL, p_sales => NULL,
            p_customers => NULL, p_revenue => NULL, p_commission => NULL) IS NULL AS done
        FROM ins JOIN ok ON ok.click_id = ins.click_id
    )
    SELECT d.ord,
        CASE WHEN d.outcome <> 'ok' THEN d.outcome WHEN prev.id IS NOT NULL THEN 'repeated' ELSE 'recorded' END,
        d.partner_id, d.program_id, d.cookie_window_days, COALESCE(ins.id, prev.id), COALESCE(ins.click_id, prev.click_id)
    FROM decided d
    CROSS JOIN counted
    LEFT JOIN ins ON ins.click_id = d.click_id
    LEFT JOIN prev ON prev.ord = d.ord;
END $$;
