-- reftrack: backward-compatible
-- History that stays fast (issue 19): clicks are partitioned by month, so a year of clicks is a dozen
-- tables whose indexes stay the size of a month, and old months are dropped whole (clicks_expire), never
-- deleted row by row.
--
-- click_month is the partition key. Every click's id says its month: the click_id the server hands out
-- starts with it (YYMM, then 22 characters of 128 random bits: pkg/clicks.NewClickID), and the row id
-- carries it in its high bits (clicks_make_id). So a lookup by click_id or by id names its partition and
-- stays one index probe (partition pruning at execution), and UNIQUE (click_id, click_month) keeps
-- click_id unique across partitions. A click_id without a month (made before this migration, or inserted
-- by hand) is noted in clicks_legacy, whose primary key keeps those unique and whose row says the month.
-- Existing clicks are renumbered into the new ids, and the rows that point at them follow.
--
-- Retention drops months, but never what attribution needs: clicks_expire copies the clicks a customer,
-- lead or sale points at into clicks_kept before it drops their month, and the lookups fall back to it,
-- so a customer's click (and a recurring commission's partner) outlives its month. The click_ref columns
-- therefore no longer have foreign keys: a reference may point at clicks or at clicks_kept.
--
-- Backward compatible: the previous build's statements (clicks_record with the same arguments, the
-- state functions, clicks_convert) keep their signatures and work on the new table; a click it makes
-- (an id without a month) lands in the current month and in clicks_legacy.

CREATE FUNCTION clicks_month(p_click_id text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN length(p_click_id) = 26 AND substr(p_click_id, 1, 4) ~ '^[0-9][0-9](0[1-9]|1[0-2])$'
        THEN make_date(2000 + substr(p_click_id, 1, 2)::int, substr(p_click_id, 3, 2)::int, 1) END
$$;

CREATE FUNCTION clicks_make_id(p_month date, p_seq bigint) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (((extract(year FROM p_month)::bigint - 2000) * 12 + extract(month FROM p_month)::bigint - 1) << 40) | p_seq
$$;

CREATE FUNCTION clicks_ref_month(p_id bigint) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT make_date(2000 + ((p_id >> 40) / 12)::int, ((p_id >> 40) % 12)::int + 1, 1)
$$;

CREATE TABLE clicks_legacy (
    click_id    text PRIMARY KEY,
    click_month date NOT NULL
);

CREATE FUNCTION clicks_lookup_month(p_click_id text) RETURNS date LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT COALESCE(clicks_month(p_click_id), (SELECT l.click_month FROM clicks_legacy l WHERE l.click_id = p_click_id))
$$;

ALTER TABLE customers DROP CONSTRAINT customers_click_ref_fkey;
ALTER TABLE leads DROP CONSTRAINT leads_click_ref_fkey;
ALTER TABLE sales DROP CONSTRAINT sales_click_ref_fkey;

ALTER TABLE clicks RENAME TO clicks_unpartitioned;
ALTER SEQUENCE clicks_id_seq OWNED BY NONE;

CREATE TABLE clicks (
    id                 bigint      NOT NULL DEFAULT clicks_make_id(date_trunc('month', now() AT TIME ZONE 'UTC')::date, nextval('clicks_id_seq')),
    click_month        date        NOT NULL DEFAULT date_trunc('month', now() AT TIME ZONE 'UTC')::date,
    click_id           text        NOT NULL,
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
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (id, click_month),
    UNIQUE (click_id, click_month),
    CONSTRAINT clicks_id_month CHECK (clicks_ref_month(id) = click_month),
    -- (A click_id without a month passes: COALESCE, so the month is read once per row.)
    CONSTRAINT clicks_click_id_month CHECK (COALESCE(clicks_month(click_id), click_month) = click_month)
) PARTITION BY RANGE (click_month);
ALTER SEQUENCE clicks_id_seq OWNED BY clicks.id;

-- owner: pkg/clicks
-- clicks_prepare makes the monthly partitions from p_from's month on, p_months of them (the server calls
-- it at start and every hour; replicas may race, hence the lock, held to the end of the transaction).
CREATE FUNCTION clicks_prepare(p_from date, p_months integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    m date;
    made integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('reftrack.clicks_partitions'));
    FOR i IN 0 .. p_months - 1 LOOP
        m := (date_trunc('month', p_from) + make_interval(months => i))::date;
        IF to_regclass('clicks_' || to_char(m, 'YYYY_MM')) IS NULL THEN
            EXECUTE format('CREATE TABLE %I PARTITION OF clicks FOR VALUES FROM (%L) TO (%L)',
                'clicks_' || to_char(m, 'YYYY_MM'), m, (m + interval '1 month')::date);
            made := made + 1;
        END IF;
    END LOOP;
    RETURN made;
END $$;

-- Months the existing clicks need, and the current one with three ahead.
SELECT clicks_prepare(m, 1) FROM (SELECT DISTINCT date_trunc('month', click_timestamp AT TIME ZONE 'UTC')::date AS m
    FROM clicks_unpartitioned) x;
SELECT clicks_prepare(date_trunc('month', now() AT TIME ZONE 'UTC')::date, 4);

INSERT INTO clicks (id, click_month, click_id, program_id, link_id, partner_id, click_timestamp, affiliate_url, session_id, page_url, page_title, referrer_url, geo_country, geo_region, geo_city, device_type, device_os, browser_name, user_agent, ip, visitor_hash, screen_resolution, viewport_size, language, timezone, converted, is_test, is_bot, created_at)
SELECT clicks_make_id(m.month, c.id), m.month, c.click_id, c.program_id, c.link_id, c.partner_id, c.click_timestamp, c.affiliate_url, c.session_id, c.page_url, c.page_title, c.referrer_url, c.geo_country, c.geo_region, c.geo_city, c.device_type, c.device_os, c.browser_name, c.user_agent, c.ip, c.visitor_hash, c.screen_resolution, c.viewport_size, c.language, c.timezone, c.converted, c.is_test, c.is_bot, c.created_at
FROM clicks_unpartitioned c CROSS JOIN LATERAL (SELECT date_trunc('month', c.click_timestamp AT TIME ZONE 'UTC')::date AS month) m;
INSERT INTO clicks_legacy (click_id, click_month)
SELECT click_id, click_month FROM clicks WHERE clicks_month(click_id) IS NULL;
UPDATE customers c SET click_ref = k.id FROM clicks k WHERE c.click_ref IS NOT NULL AND c.click_ref = (k.id & ((1::bigint << 40) - 1)) AND k.id <> c.click_ref;
UPDATE leads l SET click_ref = k.id FROM clicks k WHERE l.click_ref IS NOT NULL AND l.click_ref = (k.id & ((1::bigint << 40) - 1)) AND k.id <> l.click_ref;
UPDATE sales s SET click_ref = k.id FROM clicks k WHERE s.click_ref IS NOT NULL AND s.click_ref = (k.id & ((1::bigint << 40) - 1)) AND k.id <> s.click_ref;
DROP TABLE clicks_unpartitioned;

-- Events list and counts: real clicks of a program, newest first; the test-data view's; repeat visitors.
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

-- owner: pkg/clicks
-- A click whose click_id carries no month is noted in clicks_legacy (which also keeps those unique).
CREATE FUNCTION clicks_note_legacy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO clicks_legacy (click_id, click_month)
    SELECT n.click_id, n.click_month FROM new_rows n WHERE clicks_month(n.click_id) IS NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER clicks_legacy_insert AFTER INSERT ON clicks REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clicks_note_legacy();

-- Clicks kept past their month's retention because a customer, lead or sale points at them.
CREATE TABLE clicks_kept (LIKE clicks INCLUDING DEFAULTS);
ALTER TABLE clicks_kept ADD PRIMARY KEY (id), ADD UNIQUE (click_id);

-- owner: pkg/clicks
-- clicks_expire drops the months before p_before, first copying into clicks_kept the clicks a customer,
-- lead or sale points at. It returns each dropped month with the clicks kept from it.
CREATE FUNCTION clicks_expire(p_before date) RETURNS TABLE (month date, kept bigint) LANGUAGE plpgsql AS $$
DECLARE
    part record;
    n bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('reftrack.clicks_partitions'));
    FOR part IN SELECT c.relname, to_date(substr(c.relname, 8), 'YYYY_MM') AS m
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'clicks'::regclass AND c.relname ~ '^clicks_[0-9]{4}_[0-9]{2}$'
        ORDER BY 2
    LOOP
        CONTINUE WHEN part.m >= date_trunc('month', p_before)::date;
        -- A month's ids are one range (clicks_make_id): the references into it are read by the click_ref
        -- indexes, never by scanning the month's clicks.
        EXECUTE format('INSERT INTO clicks_kept SELECT * FROM %I k WHERE k.id IN (
                SELECT c.click_ref FROM customers c WHERE c.click_ref BETWEEN $1 AND $2
                UNION SELECT l.click_ref FROM leads l WHERE l.click_ref BETWEEN $1 AND $2
                UNION SELECT s.click_ref FROM sales s WHERE s.click_ref BETWEEN $1 AND $2)
            ON CONFLICT DO NOTHING', part.relname)
            USING clicks_make_id(part.m, 0), clicks_make_id(part.m, (1::bigint << 40) - 1);
        GET DIAGNOSTICS n = ROW_COUNT;
        DELETE FROM clicks_legacy l WHERE l.click_month = part.m
            AND NOT EXISTS (SELECT 1 FROM clicks_kept k WHERE k.click_id = l.click_id);
        EXECUTE format('DROP TABLE %I', part.relname);
        month := part.m;
        kept := n;
        RETURN NEXT;
    END LOOP;
END $$;

-- owner: pkg/clicks
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

-- owner: pkg/sales
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
        LEFT JOIN LATERAL (
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks x
        WHERE x.click_id = NULLIF(i.click_id, '') AND x.click_month = clicks_lookup_month(NULLIF(i.click_id, ''))
        UNION ALL
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks_kept x
        WHERE x.click_id = NULLIF(i.click_id, '')
        LIMIT 1) k ON true
        LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE c.program_id = i.program_id AND c.customer_key = NULLIF(i.customer_key, '')
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE i.customer_key = '' AND c.program_id = i.program_id AND c.click_ref = k.id ORDER BY c.id LIMIT 1)
        ) cu ON true
        LEFT JOIN LATERAL (
        SELECT x.click_id, x.click_timestamp FROM clicks x
        WHERE x.id = cu.click_ref AND x.click_month = clicks_ref_month(cu.click_ref)
        UNION ALL
        SELECT x.click_id, x.click_timestamp FROM clicks_kept x WHERE x.id = cu.click_ref
        LIMIT 1) cc ON true
        ORDER BY i.ord;
END $$;

-- owner: pkg/leads
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
    LEFT JOIN LATERAL (
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks x
        WHERE x.click_id = NULLIF(i.click_id, '') AND x.click_month = clicks_lookup_month(NULLIF(i.click_id, ''))
        UNION ALL
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks_kept x
        WHERE x.click_id = NULLIF(i.click_id, '')
        LIMIT 1) k ON true
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
    LEFT JOIN LATERAL (
        SELECT x.click_id, x.click_timestamp FROM clicks x
        WHERE x.id = cu.click_ref AND x.click_month = clicks_ref_month(cu.click_ref)
        UNION ALL
        SELECT x.click_id, x.click_timestamp FROM clicks_kept x WHERE x.id = cu.click_ref
        LIMIT 1) cc ON true
    ORDER BY i.ord;
END $$;

-- owner: pkg/clicks
CREATE OR REPLACE FUNCTION clicks_convert(p_click bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE clicks SET converted = true WHERE id = ANY (p_click) AND NOT converted
        AND click_month = ANY (ARRAY(SELECT DISTINCT clicks_ref_month(c) FROM unnest(p_click) c));
    UPDATE clicks_kept SET converted = true WHERE id = ANY (p_click) AND NOT converted;
END $$;

-- CREATE OR REPLACE cleared the settings migration 000015 gave these.
ALTER FUNCTION clicks_convert SET enable_seqscan = off;
ALTER FUNCTION sales_state SET enable_seqscan = off;
ALTER FUNCTION leads_state SET enable_seqscan = off;
