-- leads_state reads, for each lead (one array per input, position = ord, NULL for a value not given),
-- what the rules need: the click behind p_click_id, the program (the click's when p_click_decides and the
-- click exists, else p_program) and that program's customer, by p_customer_key when one is given, else
-- the first made from the click, with its row version; and the provisional lead of the click a settled
-- lead would be made on (the customer's, else the one read), with what it counts for. Nothing locked.
CREATE OR REPLACE FUNCTION leads_state(p_click_id text[], p_program bigint[], p_customer_key text[], p_click_decides boolean[])
RETURNS TABLE (ord bigint, click_ref bigint, click_id text, click_program_id bigint, click_partner_id bigint,
    click_test boolean, program_id bigint, lead_auth text, allowed_origins text[], owner_suspended boolean,
    customer_id bigint, customer_version text, customer_key text, customer_click_ref bigint, customer_click_id text,
    customer_partner_id bigint, customer_status text, customer_test boolean, provisional_id bigint,
    provisional_test boolean, provisional_counts_as text)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.ord, k.id, k.click_id, k.program_id, k.partner_id, k.is_test,
        p.id, p.lead_auth, p.allowed_origins,
        EXISTS (SELECT FROM accounts_suspended_owners(p.workspace_id)),
        cu.id, cu.version, cu.customer_key, cu.click_ref, cc.click_id, cu.partner_id, cu.status, cu.is_test,
        pl.id, pl.is_test, pl.counts_as
    FROM unnest(p_click_id, p_program, p_customer_key, p_click_decides) WITH ORDINALITY
        AS i(click_id, program_id, customer_key, click_decides, ord)
    LEFT JOIN LATERAL (
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks x
        WHERE x.click_id = i.click_id AND x.click_month = clicks_month(i.click_id)
        UNION ALL
        SELECT x.id, x.click_id, x.program_id, x.partner_id, x.click_timestamp, x.is_test FROM clicks_kept x
        WHERE x.click_id = i.click_id
        LIMIT 1) k ON true
    CROSS JOIN LATERAL (SELECT CASE WHEN i.click_decides AND k.id IS NOT NULL THEN k.program_id ELSE i.program_id END AS id) v
    LEFT JOIN programs p ON p.id = v.id
    LEFT JOIN LATERAL (
        SELECT c.id, c.xmin::text AS version, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key IS NOT NULL AND c.program_id = v.id AND c.customer_key = i.customer_key
        UNION ALL
        (SELECT c.id, c.xmin::text, c.customer_key, c.click_ref, c.partner_id, c.status, c.is_test
        FROM customers c WHERE i.customer_key IS NULL AND k.id IS NOT NULL AND c.program_id = v.id AND c.click_ref = k.id
        ORDER BY c.id LIMIT 1)
    ) cu ON true
    LEFT JOIN LATERAL (
        SELECT x.click_id, x.click_timestamp FROM clicks x
        WHERE x.id = cu.click_ref AND x.click_month = clicks_ref_month(cu.click_ref)
        UNION ALL
        SELECT x.click_id, x.click_timestamp FROM clicks_kept x WHERE x.id = cu.click_ref
        LIMIT 1) cc ON true
    -- The click the settled lead is made on: its customer's, else (a customer made now) the one read.
    LEFT JOIN leads pl ON pl.click_ref = COALESCE(cu.click_ref, k.id) AND pl.status = 'provisional'
    ORDER BY i.ord;
END $$;
