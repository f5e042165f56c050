-- The sale's statements as PL/pgSQL functions: PostgreSQL keeps a function's plans for the life of its
-- connection (here the generic plan, set per function), where a statement sent as text is parsed and
-- planned on every call, and planning cost more than running (docs/performance.md). No session state
-- and no named prepared statement is involved, so this holds through a transaction-pooling PgBouncer.
--
-- Each function that writes names its owner, the package that alone writes those tables (db/ownership_test.go
-- holds the functions to it, as it holds Go code): the sale's write calls the functions of attribution,
-- leads and clicks for their tables. The rules stay in Go (pkg/sales/rules.go); these only read and write.

-- owner: pkg/attribution
-- attribution_lock_unchanged locks, in id order, the customers among ids whose row version (xmin) is
-- still the one given, and returns their ids. A customer changed since it was read (a lead, another
-- sale) is left out: what was decided on its old state is decided again. A concurrent change is waited
-- for, then seen (READ COMMITTED re-checks a locked row's newest version).
CREATE FUNCTION attribution_lock_unchanged(p_id bigint[], p_version text[]) RETURNS bigint[]
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    locked bigint[];
BEGIN
    SELECT array_agg(l.id) INTO locked FROM (
        SELECT cu.id FROM customers cu JOIN unnest(p_id, p_version) AS i(id, version)
            ON cu.id = i.id AND cu.xmin::text = i.version
        ORDER BY cu.id FOR UPDATE OF cu) l;
    RETURN COALESCE(locked, '{}');
END $$;

-- owner: pkg/attribution
-- attribution_create_converted makes the customers of the rows whose p_id is 0, from their click and
-- already converted by a sale at p_at, and returns them. A customer_key bound meanwhile by a concurrent
-- request makes nothing (the caller decides again with that customer).
CREATE FUNCTION attribution_create_converted(p_id bigint[], p_program bigint[], p_key text[], p_click_ref bigint[],
    p_partner bigint[], p_partner_program bigint[], p_test boolean[], p_at timestamptz[])
RETURNS TABLE (id bigint, program_id bigint, customer_key text, click_ref bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    INSERT INTO customers AS cu (program_id, customer_key, click_ref, partner_id, partner_program_id, is_test, status, converted_at)
    SELECT i.program_id, NULLIF(i.customer_key, ''), i.click_ref, i.partner_id, i.partner_program_id, i.is_test, 'converted', i.at
    FROM unnest(p_id, p_program, p_key, p_click_ref, p_partner, p_partner_program, p_test, p_at)
        AS i(id, program_id, customer_key, click_ref, partner_id, partner_program_id, is_test, at)
    WHERE i.id = 0
    ON CONFLICT (program_id, customer_key) DO NOTHING
    RETURNING cu.id, cu.program_id, cu.customer_key, cu.click_ref;
END $$;

-- owner: pkg/attribution
-- attribution_convert moves the customers to converted; a first conversion is dated by its sale.
CREATE FUNCTION attribution_convert(p_id bigint[], p_at timestamptz[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE customers cu SET status = 'converted', converted_at = COALESCE(cu.converted_at, i.at), updated_at = now()
    FROM unnest(p_id, p_at) AS i(id, at) WHERE cu.id = i.id;
END $$;

-- owner: pkg/leads
-- leads_convert marks converted the leads of the customers (a sale was recorded).
CREATE FUNCTION leads_convert(p_customer bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE leads SET converted = true WHERE customer_id = ANY (p_customer) AND NOT converted;
END $$;

-- owner: pkg/clicks
-- clicks_convert marks the clicks converted (their customer bought).
CREATE FUNCTION clicks_convert(p_click bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
BEGIN
    UPDATE clicks SET converted = true WHERE id = ANY (p_click) AND NOT converted;
END $$;

-- owner: pkg/sales
-- sales_state reads, for each sale (parallel arrays; ord is the position), what the rules need: a used
-- transaction_id, the program's terms, the customer (by customer_key, else the first made from the
-- click) with its row version, its click and first sale, and the click behind click_id. Nothing locked.
CREATE FUNCTION sales_state(p_program bigint[], p_txn text[], p_customer_key text[], p_click_id text[])
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

-- owner: pkg/sales
-- sales_record writes the planned sales (parallel arrays, position = ord): each sale whose customer is
-- still at the version its decision rested on (locked meanwhile) or is made now, and whose
-- transaction_id is free in its program, with its commission (p_commission -1: none), then converts the
-- customer, its leads and its click through their owners' functions. It returns the sales written; a
-- missing ord was not written (decide it again). One statement for the caller: all or nothing.
CREATE FUNCTION sales_record(p_program bigint[], p_customer bigint[], p_version text[], p_customer_key text[],
    p_click_ref bigint[], p_click_id text[], p_partner bigint[], p_partner_program bigint[], p_customer_test boolean[],
    p_txn text[], p_amount bigint[], p_currency text[], p_sale_type text[], p_recurring boolean[], p_provider text[],
    p_payment_id text[], p_livemode text[], p_event_name text[], p_subscription text[], p_interval text[],
    p_source text[], p_sale_date timestamptz[], p_test boolean[], p_commission bigint[])
RETURNS TABLE (ord bigint, sale_id bigint, commission_id bigint, amount_cents bigint, reversed_amount_cents bigint,
    currency text, status text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    locked   bigint[];
    buyers   bigint[];
    o_ord    bigint[];
    o_sale   bigint[];
    o_comm   bigint[];
    o_amount bigint[];
    o_rev    bigint[];
    o_cur    text[];
    o_status text[];
    o_buyer  bigint[];
    o_click  bigint[];
    o_date   timestamptz[];
BEGIN
    locked := attribution_lock_unchanged(p_customer, p_version);
    -- Each row's buyer: its locked customer, or the one made now from its click; 0 when neither.
    WITH made AS (
        SELECT * FROM attribution_create_converted(p_customer, p_program, p_customer_key, p_click_ref, p_partner,
            p_partner_program, p_customer_test, p_sale_date)
    )
    SELECT array_agg(COALESCE(CASE WHEN i.customer_id = ANY (locked) THEN i.customer_id END, m.id, 0) ORDER BY i.ord) INTO buyers
    FROM unnest(p_program, p_customer, p_customer_key, p_click_ref) WITH ORDINALITY AS i(program_id, customer_id, customer_key, click_ref, ord)
    LEFT JOIN made m ON i.customer_id = 0 AND m.program_id = i.program_id AND m.click_ref = i.click_ref
        AND m.customer_key IS NOT DISTINCT FROM NULLIF(i.customer_key, '');

    WITH input AS (
        SELECT * FROM unnest(buyers, p_program, p_click_ref, p_click_id, p_partner, p_partner_program, p_txn, p_amount,
            p_currency, p_sale_type, p_recurring, p_provider, p_payment_id, p_livemode, p_event_name, p_subscription,
            p_interval, p_source, p_sale_date, p_test, p_commission)
        WITH ORDINALITY AS t(buyer, program_id, click_ref, click_id, partner_id, partner_program_id, txn, amount_cents,
            currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
            subscription_interval, source, sale_date, is_test, commission_cents, ord)
    ), sale AS (
        INSERT INTO sales (program_id, customer_id, partner_id, click_ref, click_id, processor_event_id, amount_cents,
            currency, sale_type, is_recurring, provider, provider_payment_id, livemode, event_name, subscription_id,
            subscription_interval, source, sale_date, is_test)
        SELECT i.program_id, i.buyer, i.partner_id, NULLIF(i.click_ref, 0), NULLIF(i.click_id, ''), i.txn, i.amount_cents,
            i.currency, i.sale_type, i.is_recurring, NULLIF(i.provider, ''), NULLIF(i.provider_payment_id, ''),
            NULLIF(i.livemode, '')::boolean, NULLIF(i.event_name, ''), NULLIF(i.subscription_id, ''),
            NULLIF(i.subscription_interval, ''), i.source, i.sale_date, i.is_test
        FROM input i WHERE i.buyer <> 0
        ON CONFLICT (program_id, processor_event_id) DO NOTHING
        RETURNING id, program_id, processor_event_id, customer_id, click_ref, sale_date
    ), commission AS (
        INSERT INTO commissions (sale_id, program_id, partner_id, partner_program_id, amount_cents, currency, is_test)
        SELECT s.id, i.program_id, i.partner_id, i.partner_program_id, i.commission_cents, i.currency, i.is_test
        FROM sale s JOIN input i ON i.program_id = s.program_id AND i.txn = s.processor_event_id
        WHERE i.commission_cents <> -1
        RETURNING id, sale_id, amount_cents, reversed_amount_cents, currency, status
    )
    SELECT array_agg(i.ord), array_agg(s.id), array_agg(c.id), array_agg(c.amount_cents), array_agg(c.reversed_amount_cents),
        array_agg(c.currency), array_agg(c.status), array_agg(s.customer_id), array_agg(s.click_ref) FILTER (WHERE s.click_ref IS NOT NULL),
        array_agg(s.sale_date)
    INTO o_ord, o_sale, o_comm, o_amount, o_rev, o_cur, o_status, o_buyer, o_click, o_date
    FROM input i JOIN sale s ON s.program_id = i.program_id AND s.processor_event_id = i.txn
    LEFT JOIN commission c ON c.sale_id = s.id;

    IF o_sale IS NULL THEN
        RETURN;
    END IF;
    PERFORM attribution_convert(o_buyer, o_date);
    PERFORM leads_convert(o_buyer);
    IF o_click IS NOT NULL THEN
        PERFORM clicks_convert(o_click);
    END IF;
    RETURN QUERY SELECT * FROM unnest(o_ord, o_sale, o_comm, o_amount, o_rev, o_cur, o_status);
END $$;

-- owner: pkg/apikeys
-- apikeys_lookup finds the active keys among the hashes and, for each, whether its program's owner is
-- suspended (every sale and refund authenticates its key first).
CREATE FUNCTION apikeys_lookup(p_hash bytea[])
RETURNS TABLE (key_hash bytea, id bigint, program_id bigint, last4 text, created_at timestamptz,
    rotation_marked_at timestamptz, rotate_by timestamptz, owner_suspended boolean)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT k.key_hash, k.id, k.program_id, k.last4, k.created_at, k.rotation_marked_at, k.rotate_by,
        EXISTS (SELECT 1 FROM workspace_members sm JOIN accounts sa ON sa.id = sm.account_id
            WHERE sm.workspace_id = p.workspace_id AND sm.role = 'owner' AND sa.suspended_at IS NOT NULL)
    FROM api_keys k JOIN programs p ON p.id = k.program_id
    WHERE k.key_hash = ANY (p_hash) AND k.revoked_at IS NULL;
END $$;

-- first_sale is one index probe: (customer_id, sale_date) replaces the index on customer_id alone.
CREATE INDEX sales_customer_date_idx ON sales (customer_id, sale_date);
DROP INDEX sales_customer_idx;
