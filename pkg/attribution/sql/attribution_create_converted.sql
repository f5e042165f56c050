-- attribution_create_converted makes one customer per row (one array per input; p_key NULL: no key to
-- bind), from its click and already converted by a sale at p_at, and returns the customers made. A
-- customer_key bound meanwhile by a concurrent request makes nothing (the caller decides again with that
-- customer).
CREATE OR REPLACE FUNCTION attribution_create_converted(p_program bigint[], p_key text[], p_click_ref bigint[],
    p_partner bigint[], p_partner_program bigint[], p_test boolean[], p_at timestamptz[])
RETURNS TABLE (id bigint, program_id bigint, customer_key text, click_ref bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    INSERT INTO customers AS cu (program_id, customer_key, click_ref, partner_id, partner_program_id, is_test, status, converted_at)
    SELECT i.program_id, i.customer_key, i.click_ref, i.partner_id, i.partner_program_id, i.is_test, 'converted', i.at
    FROM unnest(p_program, p_key, p_click_ref, p_partner, p_partner_program, p_test, p_at)
        AS i(program_id, customer_key, click_ref, partner_id, partner_program_id, is_test, at)
    ON CONFLICT (program_id, customer_key) DO NOTHING
    RETURNING cu.id, cu.program_id, cu.customer_key, cu.click_ref;
END $$;
