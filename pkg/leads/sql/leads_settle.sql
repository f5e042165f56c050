-- leads_settle records a settled lead for the customer p_customer at row version p_version, or, when
-- p_customer is NULL, for a customer made now from the click p_click_ref (partner p_partner, key
-- p_customer_key) at status lead: the customer moves to lead (its email kept unless p_email is given),
-- the provisional lead of its click becomes the settled one, else a new one is made, and its click is
-- marked converted, through their owners' functions. NULL is a value not given (no click, no key, no
-- email). It returns the lead's id, or NULL, having written nothing, when the customer changed since it
-- was read or the key was bound meanwhile: the caller decides again on what is stored now.
CREATE OR REPLACE FUNCTION leads_settle(p_customer bigint, p_version text, p_program bigint, p_click_ref bigint,
    p_click_id text, p_partner bigint, p_customer_key text, p_email text, p_source text, p_test boolean) RETURNS bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_customer bigint := p_customer;
    v_id bigint;
BEGIN
    IF v_customer IS NULL THEN
        v_customer := attribution_create_lead(p_program, p_customer_key, p_click_ref, p_partner, p_email, p_test);
        IF v_customer IS NULL THEN
            RETURN NULL;
        END IF;
    ELSIF cardinality(attribution_lock_unchanged(ARRAY[p_customer], ARRAY[p_version])) = 0 THEN
        RETURN NULL;
    ELSE
        PERFORM attribution_mark_lead(v_customer, p_email);
    END IF;
    -- Asked first: an update of leads runs the lead-count trigger (building its transition tables) even when it
    -- changes nothing, and a provisional lead is the exception.
    IF p_click_ref IS NOT NULL AND EXISTS (SELECT 1 FROM leads WHERE click_ref = p_click_ref AND status = 'provisional') THEN
        UPDATE leads SET status = 'settled', settled_at = now(), customer_id = v_customer,
            customer_key = p_customer_key, email = COALESCE(p_email, email), source = p_source,
            is_test = is_test OR p_test
        WHERE click_ref = p_click_ref AND status = 'provisional' RETURNING id INTO v_id;
    END IF;
    IF v_id IS NULL THEN
        INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, email, status, source, settled_at, is_test)
        VALUES (p_program, v_customer, p_click_ref, p_click_id, p_customer_key, p_email, 'settled', p_source, now(), p_test)
        RETURNING id INTO v_id;
    END IF;
    IF p_click_ref IS NOT NULL THEN
        PERFORM clicks_convert(ARRAY[p_click_ref]);
    END IF;
    RETURN v_id;
END $$;
