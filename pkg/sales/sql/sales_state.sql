-- sales_state reads, for each sale (one array per input, position = ord; NULL for a customer_key or
-- click_id not sent), what the rules need: a used transaction_id, the program's terms (rate, duration,
-- hold, approval) and currencies, the customer (by customer_key, else, without a key, the first made from the click) with
-- its row version, its click, its partner's enrollment status and its first sale, and the click behind
-- click_id with its partner's enrollment. Nothing locked; nothing decided (pkg/sales and pkg/commission
-- decide).
CREATE OR REPLACE FUNCTION sales_state(p_program bigint[], p_txn text[], p_customer_key text[], p_click_id text[])
RETURNS TABLE (ord bigint, duplicate_id bigint, program_found boolean, currencies text[], default_currency text,
    commission_type text, commission_rate text, commission_duration_months integer, attribution_window_days integer, hold_days integer, commission_approval text,
    customer_id bigint, customer_version text, customer_key text, customer_click_ref bigint, customer_click_id text,
    customer_click_timestamp timestamptz, partner_id bigint, partner_program_id bigint, partner_status text, status text,
    signed_up_at timestamptz, converted_at timestamptz, customer_test boolean, first_sale timestamptz, click_ref bigint,
    click_program_id bigint, click_partner_id bigint, click_timestamp timestamptz, click_test boolean,
    click_partner_program_id bigint, click_partner_status text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT i.ord,
        (SELECT s.id FROM sales s WHERE s.program_id = i.program_id AND s.processor_event_id = i.txn) AS duplicate_id,
        p.id IS NOT NULL AS program_found, p.currencies, p.default_currency, p.commission_type, p.commission_rate::text AS commission_rate,
        p.commission_duration_months, p.attribution_window_days, p.hold_days, p.commission_approval,
        cu.id AS customer_id, cu.version AS customer_version, cu.customer_key, cu.click_ref AS customer_click_ref,
        cc.click_id AS customer_click_id, cc.click_timestamp AS customer_click_timestamp, cu.partner_id,
        cu.partner_program_id, cpp.status AS partner_status, cu.status, cu.signed_up_at, cu.converted_at,
        cu.is_test AS customer_test,
        (SELECT min(s.sale_date) FROM sales s WHERE s.customer_id = cu.id) AS first_sale,
        k.id AS click_ref, k.program_id AS click_program_id, k.partner_id AS click_partner_id,
        k.click_timestamp, k.is_test AS click_test, kpp.id AS click_partner_program_id, kpp.status AS click_partner_status
        FROM unnest(p_program, p_txn, p_customer_key, p_click_id) WITH ORDINALITY AS i(program_id, txn, customer_key, click_id, ord)
        LEFT JOIN programs p ON p.id = i.program_id
        LEFT JOIN LATERAL (
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks x
        WHERE x.click_id = i.click_id AND x.click_month = clicks_month(i.click_id)
        UNION ALL
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks_kept x
        WHERE x.click_id = i.click_id
        LIMIT 1) k ON true
        LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE c.program_id = i.program_id AND c.customer_key = i.customer_key
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.partner_program_id, c.status,
        c.signed_up_at, c.converted_at, c.is_test
        FROM customers c WHERE i.customer_key IS NULL AND c.program_id = i.program_id AND c.click_ref = k.id ORDER BY c.id LIMIT 1)
        ) cu ON true
        LEFT JOIN LATERAL (
        SELECT x.click_id, x.click_timestamp FROM clicks x
        WHERE x.id = cu.click_ref AND x.click_month = clicks_ref_month(cu.click_ref)
        UNION ALL
        SELECT x.click_id, x.click_timestamp FROM clicks_kept x WHERE x.id = cu.click_ref
        LIMIT 1) cc ON true
        LEFT JOIN partner_programs cpp ON cpp.id = cu.partner_program_id
        LEFT JOIN partner_programs kpp ON kpp.partner_id = k.partner_id AND kpp.program_id = i.program_id
        ORDER BY i.ord;
END $$;
