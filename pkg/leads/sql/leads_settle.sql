-- leads_settle records a settled lead for the customer p_customer at row version p_version, or, when
-- p_customer is NULL, for a customer made now from the click p_click_ref (partner p_partner, key
-- p_customer_key) at status lead: the customer moves to lead (its email kept unless p_email is given),
-- the click's provisional lead p_provisional (read when the lead was decided) becomes the settled one,
-- else (NULL) a new one is made, and its click is marked converted, through their owners' functions. The
-- lead is stored with what it counts for (p_counts_as, pkg/counting's decision). NULL is a value not given
-- (no click, no key, no email). It returns the lead's id and time, or no row, having written nothing, when
-- what the lead was decided on changed: the customer since it was read, its key bound meanwhile, or the
-- click's provisional lead (settled, or made, meanwhile). The caller decides again on what is stored now.
CREATE OR REPLACE FUNCTION leads_settle(p_customer bigint, p_version text, p_program bigint, p_click_ref bigint,
    p_click_id text, p_partner bigint, p_customer_key text, p_email text, p_source text, p_test boolean,
    p_provisional bigint, p_counts_as text)
RETURNS TABLE (lead_id bigint, lead_at timestamptz)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
#variable_conflict use_column
DECLARE
    v_customer bigint := p_customer;
BEGIN
    IF p_click_ref IS NOT NULL AND p_provisional IS DISTINCT FROM
        (SELECT l.id FROM leads l WHERE l.click_ref = p_click_ref AND l.status = 'provisional') THEN
        RETURN;
    END IF;
    IF v_customer IS NULL THEN
        v_customer := attribution_create_lead(p_program, p_customer_key, p_click_ref, p_partner, p_email, p_test);
        IF v_customer IS NULL THEN
            RETURN;
        END IF;
    ELSIF cardinality(attribution_lock_unchanged(ARRAY[p_customer], ARRAY[p_version])) = 0 THEN
        RETURN;
    ELSE
        PERFORM attribution_mark_lead(v_customer, p_email);
    END IF;
    IF p_provisional IS NOT NULL THEN
        RETURN QUERY
        WITH u AS (
            UPDATE leads l SET status = 'settled', settled_at = now(), customer_id = v_customer,
                customer_key = p_customer_key, email = COALESCE(p_email, l.email), source = p_source,
                is_test = l.is_test OR p_test, counts_as = p_counts_as
            WHERE l.id = p_provisional RETURNING l.id, l.lead_timestamp)
        SELECT u.id, u.lead_timestamp FROM u;
    ELSE
        RETURN QUERY
        WITH n AS (
            INSERT INTO leads (program_id, customer_id, click_ref, click_id, customer_key, email, status, source, settled_at,
                is_test, counts_as)
            VALUES (p_program, v_customer, p_click_ref, p_click_id, p_customer_key, p_email, 'settled', p_source, now(), p_test,
                p_counts_as)
            RETURNING id, lead_timestamp)
        SELECT n.id, n.lead_timestamp FROM n;
    END IF;
    IF p_click_ref IS NOT NULL THEN
        PERFORM clicks_convert(ARRAY[p_click_ref]);
    END IF;
END $$;
