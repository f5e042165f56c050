-- attribution_create_lead makes a customer of the click's program at status lead (signed up now),
-- attributed to the click's partner (and its partner-program relationship when there is one), with the key
-- bound when given (p_key NULL: none) and the email when given (p_email NULL: none), and returns its id;
-- NULL when a concurrent request bound the key first (the caller decides again).
CREATE OR REPLACE FUNCTION attribution_create_lead(p_program bigint, p_key text, p_click_ref bigint, p_partner bigint,
    p_email text, p_test boolean) RETURNS bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO customers (program_id, customer_key, click_ref, partner_id, partner_program_id, email, is_test,
        status, signed_up_at)
    SELECT p_program, p_key, p_click_ref, p_partner,
        (SELECT pp.id FROM partner_programs pp WHERE pp.partner_id = p_partner AND pp.program_id = p_program),
        p_email, p_test, 'lead', now()
    ON CONFLICT (program_id, customer_key) DO NOTHING
    RETURNING id INTO v_id;
    RETURN v_id;
END $$;
