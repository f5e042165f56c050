-- Back to one clicks table (the kept clicks rejoin it), with the foreign keys and the functions of
-- migrations 000010, 000011 and 000013. Ids keep their new values.
DROP FUNCTION clicks_expire(date);
DROP FUNCTION clicks_prepare(date, integer);
ALTER TABLE clicks RENAME TO clicks_partitioned;
ALTER SEQUENCE clicks_id_seq OWNED BY NONE;
CREATE TABLE clicks (
    id                 bigint      PRIMARY KEY DEFAULT nextval('clicks_id_seq'),
    click_id           text        NOT NULL UNIQUE,
    program_id         bigint      NOT NULL CONSTRAINT clicks_program_id_fkey REFERENCES programs (id),
    link_id            bigint      NOT NULL CONSTRAINT clicks_link_id_fkey REFERENCES referral_links (id),
    partner_id         bigint      NOT NULL CONSTRAINT clicks_partner_id_fkey REFERENCES partners (id),
    click_timestamp    timestamptz NOT NULL DEFAULT now(),
    affiliate_url      text        NOT NULL,
    session_id         text,
    page_url           text,
    page_title         text,
    referrer_url       text,
    geo_country        text,
    geo_region         text,
    geo_city           text,
    device_type        text,
    device_os          text,
    browser_name       text,
    user_agent         text,
    ip                 inet,
    visitor_hash       bytea,
    screen_resolution  text,
    viewport_size      text,
    language           text,
    timezone           text,
    converted          boolean     NOT NULL DEFAULT false,
    is_test            boolean     NOT NULL DEFAULT false,
    is_bot             boolean     NOT NULL DEFAULT false,
    created_at         timestamptz NOT NULL DEFAULT now()
);
ALTER SEQUENCE clicks_id_seq OWNED BY clicks.id;
INSERT INTO clicks (id, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, session_id, page_url, page_title, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip, visitor_hash, screen_resolution, viewport_size, language, timezone, converted, is_test, is_bot, created_at) SELECT id, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, session_id, page_url, page_title, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip, visitor_hash, screen_resolution, viewport_size, language, timezone, converted, is_test, is_bot, created_at FROM clicks_partitioned;
INSERT INTO clicks (id, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, session_id, page_url, page_title, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip, visitor_hash, screen_resolution, viewport_size, language, timezone, converted, is_test, is_bot, created_at) SELECT id, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, session_id, page_url, page_title, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip, visitor_hash, screen_resolution, viewport_size, language, timezone, converted, is_test, is_bot, created_at FROM clicks_kept ON CONFLICT DO NOTHING;
DROP TABLE clicks_partitioned;
DROP TABLE clicks_kept;
DROP FUNCTION clicks_note_legacy();
DROP FUNCTION clicks_lookup_month(text);
DROP TABLE clicks_legacy;
CREATE INDEX clicks_program_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE NOT is_test AND NOT is_bot;
CREATE INDEX clicks_program_test_events_idx ON clicks (program_id, click_timestamp DESC, id DESC)
    WHERE is_test AND NOT is_bot;
CREATE INDEX clicks_visitor_idx ON clicks (link_id, visitor_hash, click_timestamp DESC)
    WHERE visitor_hash IS NOT NULL;
CREATE TRIGGER clicks_count_insert AFTER INSERT ON clicks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
CREATE TRIGGER clicks_count_update AFTER UPDATE ON clicks REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
CREATE TRIGGER clicks_count_delete AFTER DELETE ON clicks REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_count_events();
ALTER TABLE customers ADD CONSTRAINT customers_click_ref_fkey FOREIGN KEY (click_ref) REFERENCES clicks (id);
ALTER TABLE leads ADD CONSTRAINT leads_click_ref_fkey FOREIGN KEY (click_ref) REFERENCES clicks (id);
ALTER TABLE sales ADD CONSTRAINT sales_click_ref_fkey FOREIGN KEY (click_ref) REFERENCES clicks (id);

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
            COALESCE(EXISTS (SELECT 1 FROM workspace_members sm JOIN accounts sa ON sa.id = sm.account_id
                WHERE sm.workspace_id = p.workspace_id AND sm.role = 'owner' AND sa.suspended_at IS NOT NULL), false) AS suspended
        FROM input i JOIN referral_links l ON l.short_link = i.aff LEFT JOIN programs p ON p.id = l.program_id
    ), ok AS (
        SELECT * FROM link WHERE link.enabled AND link.origin_ok AND NOT link.suspended AND link.partner_id IS NOT NULL
            AND link.program_id IS NOT NULL
    ), prev AS (
        SELECT DISTINCT ON (ok.ord) ok.ord, c.id, c.click_id FROM ok
        JOIN clicks c ON c.link_id = ok.link_id AND c.visitor_hash = ok.visitor AND c.is_test = ok.is_test
            AND c.click_timestamp > now() - p_repeat_seconds * interval '1 second'
        ORDER BY ok.ord, c.click_timestamp DESC
    ), ins AS (
        INSERT INTO clicks (click_id, program_id, link_id, partner_id, affiliate_url, session_id, page_url, page_title,
            referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip,
            visitor_hash, screen_resolution, viewport_size, language, timezone, is_test, is_bot)
        SELECT ok.click_id, ok.program_id, ok.link_id, ok.partner_id, ok.affiliate_url, ok.session_id, ok.page_url,
            ok.page_title, ok.referrer_url, ok.geo_country, ok.geo_region, ok.geo_city, ok.device_type, ok.device_os,
            ok.browser_name, ok.user_agent, ok.ip, ok.visitor, ok.screen_resolution, ok.viewport_size, ok.language,
            ok.timezone, ok.is_test, ok.is_bot
        FROM ok WHERE NOT EXISTS (SELECT 1 FROM prev WHERE prev.ord = ok.ord)
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

CREATE OR REPLACE FUNCTION sales_state(p_program bigint[], p_txn text[], p_customer_key text[], p_click_id text[])
RETURNS TABLE (ord bigint, duplicate_id bigint, program_found boolean, commission_type text, commission_rate text,
    commission_duration_months integer, attribution_window_days integer, customer_id bigint, customer_version text,
    customer_key text, customer_click_ref bigint, customer_click_id text, customer_click_timestamp timestamptz,
    partner_id bigint, partner_program_id bigint, status text, signed_up_at timestamptz, converted_at timestamptz,
    customer_test boolean, first_sale timestamptz, click_ref bigint, click_program_id bigint, click_partner_id bigint,
    click_timestamp timestamptz, click_test boolean, click_partner_program_id bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT i.ord,
        (SELECT s.id FROM sales s WHERE s.program_id = i.program_id AND s.processor_event_id = i.txn) AS duplicate_id,
        p.id IS NOT NULL AS program_found, p.commission_type, p.commission_rate::text AS commission_rate,
        p.commission_duration_months, p.attribution_window_days,
        cu.id AS customer_id, cu.version AS customer_version, cu.customer_key, cu.click_ref AS customer_click_ref,
        cc.click_id AS customer_click_id, cc.click_timestamp AS customer_click_timestamp, cu.partner_id,
        cu.partner_program_id, cu.status, cu.signed_up_at, cu.converted_at, cu.is_test AS customer_test,
        (SELECT min(s.sale_date) FROM sales s WHERE s.customer_id = cu.id) AS first_sale,
        k.id AS click_ref, k.program_id AS click_program_id, k.partner_id AS click_partner_id,
        k.click_timestamp, k.is_test AS click_test,
        (SELECT pp.id FROM partner_programs pp WHERE pp.partner_id = k.partner_id AND pp.program_id = i.program_id) AS click_partner_program_id
        FROM unnest(p_program, p_txn, p_customer_key, p_click_id) WITH ORDINALITY AS i(program_id, txn, customer_key, click_id, ord)
        LEFT JOIN programs p ON p.id = i.program_id
        LEFT JOIN clicks k ON k.click_id = NULLIF(i.click_id, '')
        LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE c.program_id = i.program_id AND c.customer_key = NULLIF(i.customer_key, '')
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE i.customer_key = '' AND c.program_id = i.program_id AND c.click_ref = k.id ORDER BY c.id LIMIT 1)
        ) cu ON true
        LEFT JOIN clicks cc ON cc.id = cu.click_ref
        ORDER BY i.ord;
END $$;

CREATE OR REPLACE FUNCTION leads_state(p_click_id text[], p_program bigint[], p_customer_key text[], p_click_decides boolean[])
RETURNS TABLE (ord bigint, click_ref bigint, click_id text, click_program_id bigint, click_partner_id bigint,
    click_test boolean, program_id bigint, lead_auth text, allowed_origins text[], owner_suspended boolean,
    customer_id bigint, customer_version text, customer_key text, customer_click_ref bigint, customer_click_id text,
    customer_partner_id bigint, customer_status text, customer_test boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.ord, k.id, k.click_id, k.program_id, k.partner_id, k.is_test,
        p.id, p.lead_auth, p.allowed_origins,
        COALESCE(EXISTS (SELECT 1 FROM workspace_members sm JOIN accounts sa ON sa.id = sm.account_id
            WHERE sm.workspace_id = p.workspace_id AND sm.role = 'owner' AND sa.suspended_at IS NOT NULL), false),
        cu.id, cu.version, cu.customer_key, cu.click_ref, cc.click_id, cu.partner_id, cu.status, cu.is_test
    FROM unnest(p_click_id, p_program, p_customer_key, p_click_decides) WITH ORDINALITY
        AS i(click_id, program_id, customer_key, click_decides, ord)
    LEFT JOIN clicks k ON k.click_id = NULLIF(i.click_id, '')
    CROSS JOIN LATERAL (SELECT CASE WHEN i.click_decides AND k.id IS NOT NULL THEN k.program_id ELSE i.program_id END AS id) v
    LEFT JOIN programs p ON p.id = v.id
    LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key <> '' AND c.program_id = v.id AND c.customer_key = i.customer_key
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key = '' AND k.id IS NOT NULL AND c.program_id = v.id AND c.click_ref = k.id
        ORDER BY c.id LIMIT 1)
    ) cu ON true
    LEFT JOIN clicks cc ON cc.id = cu.click_ref
    ORDER BY i.ord;
END $$;

CREATE OR REPLACE FUNCTION clicks_convert(p_click bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE clicks SET converted = true WHERE id = ANY (p_click) AND NOT converted;
END $$;

ALTER FUNCTION clicks_convert SET enable_seqscan = off;
ALTER FUNCTION sales_state SET enable_seqscan = off;
ALTER FUNCTION leads_state SET enable_seqscan = off;
DROP FUNCTION clicks_ref_month(bigint);
DROP FUNCTION clicks_make_id(date, bigint);
DROP FUNCTION clicks_month(text);
