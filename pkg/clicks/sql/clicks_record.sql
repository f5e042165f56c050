-- clicks_record records a batch of clicks (parallel arrays, position = ord; '' stands for none): each
-- click's link is looked up and the refusals applied (unknown link, link without partner or program,
-- origin not allowed, owner suspended, link turned off); a visitor's click on the same link within
-- p_repeat_seconds is answered instead of a new one. It returns, per ord, what the link says and the
-- new or earlier click. The suspension rule is accounts_suspended_owners's.
CREATE OR REPLACE FUNCTION clicks_record(p_aff text[], p_visitor bytea[], p_origin text[], p_test boolean[], p_click_id text[],
    p_affiliate_url text[], p_session_id text[], p_page_url text[], p_page_title text[], p_referrer_url text[],
    p_geo_country text[], p_geo_region text[], p_geo_city text[], p_device_type text[], p_device_os text[],
    p_browser_name text[], p_user_agent text[], p_ip text[], p_screen_resolution text[], p_viewport_size text[],
    p_language text[], p_timezone text[], p_bot boolean[], p_repeat_seconds bigint)
RETURNS TABLE (ord bigint, found boolean, enabled boolean, partner_id bigint, program_id bigint,
    cookie_window_days integer, origin_ok boolean, suspended boolean, new_id bigint, old_id bigint, old_click text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH input AS (
        SELECT t.aff, t.visitor, t.origin, t.is_test, t.click_id, NULLIF(t.affiliate_url, '') AS affiliate_url,
            NULLIF(t.session_id, '') AS session_id, NULLIF(t.page_url, '') AS page_url, NULLIF(t.page_title, '') AS page_title,
            NULLIF(t.referrer_url, '') AS referrer_url, NULLIF(t.geo_country, '') AS geo_country,
            NULLIF(t.geo_region, '') AS geo_region, NULLIF(t.geo_city, '') AS geo_city,
            NULLIF(t.device_type, '') AS device_type, NULLIF(t.device_os, '') AS device_os,
            NULLIF(t.browser_name, '') AS browser_name, NULLIF(t.user_agent, '') AS user_agent,
            NULLIF(t.ip, '')::inet AS ip, NULLIF(t.screen_resolution, '') AS screen_resolution,
            NULLIF(t.viewport_size, '') AS viewport_size, NULLIF(t.language, '') AS language,
            NULLIF(t.timezone, '') AS timezone, t.is_bot, t.ord
        FROM unnest(p_aff, p_visitor, p_origin, p_test, p_click_id, p_affiliate_url, p_session_id, p_page_url,
            p_page_title, p_referrer_url, p_geo_country, p_geo_region, p_geo_city, p_device_type, p_device_os,
            p_browser_name, p_user_agent, p_ip, p_screen_resolution, p_viewport_size, p_language, p_timezone, p_bot)
        WITH ORDINALITY AS t(aff, visitor, origin, is_test, click_id, affiliate_url, session_id, page_url, page_title,
            referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
            screen_resolution, viewport_size, language, timezone, is_bot, ord)
    ), link AS (
        SELECT i.*, l.id AS link_id, l.enabled, l.partner_id, l.program_id, p.cookie_window_days,
            COALESCE(i.origin = '' OR i.origin = ANY (p.allowed_origins), false) AS origin_ok,
            EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id)) AS suspended
        FROM input i JOIN referral_links l ON l.short_link = i.aff LEFT JOIN programs p ON p.id = l.program_id
    ), ok AS (
        SELECT * FROM link WHERE link.enabled AND link.origin_ok AND NOT link.suspended AND link.partner_id IS NOT NULL
            AND link.program_id IS NOT NULL
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
        SELECT clicks_make_id(m.month, nextval('clicks_id_seq')), m.month, ok.click_id, ok.program_id, ok.link_id, ok.partner_id, ok.affiliate_url, ok.session_id, ok.page_url,
            ok.page_title, ok.referrer_url, ok.geo_country, ok.geo_region, ok.geo_city, ok.device_type, ok.device_os,
            ok.browser_name, ok.user_agent, ok.ip, ok.visitor, ok.screen_resolution, ok.viewport_size, ok.language,
            ok.timezone, ok.is_test, ok.is_bot
        FROM ok CROSS JOIN LATERAL (SELECT COALESCE(clicks_month(ok.click_id),
            date_trunc('month', now() AT TIME ZONE 'UTC')::date) AS month) m
        WHERE NOT EXISTS (SELECT 1 FROM prev WHERE prev.ord = ok.ord)
        RETURNING id, click_id
    )
    SELECT i.ord, (link.link_id IS NOT NULL), COALESCE(link.enabled, false), link.partner_id, link.program_id,
        link.cookie_window_days, COALESCE(link.origin_ok, false), COALESCE(link.suspended, false),
        ins.id, prev.id, prev.click_id
    FROM input i
    LEFT JOIN link ON link.ord = i.ord
    LEFT JOIN ins ON ins.click_id = i.click_id
    LEFT JOIN prev ON prev.ord = i.ord;
END $$;
