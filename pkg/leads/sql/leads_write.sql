-- leads_write writes the planned leads (one array per input, position = ord, NULL for a value not
-- given), each in turn: kind 'provisional' through leads_record_provisional, 'settle' through
-- leads_settle (p_customer NULL: a customer made now from the click). It returns per lead whether it
-- was written, and the settled lead's id.
CREATE OR REPLACE FUNCTION leads_write(p_kind text[], p_customer bigint[], p_version text[], p_program bigint[],
    p_click_ref bigint[], p_click_id text[], p_partner bigint[], p_customer_key text[], p_email text[], p_source text[],
    p_test boolean[])
RETURNS TABLE (ord bigint, written boolean, lead_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    FOR i IN 1 .. cardinality(p_kind) LOOP
        ord := i;
        lead_id := NULL;
        CASE p_kind[i]
        WHEN 'provisional' THEN
            PERFORM leads_record_provisional(p_program[i], p_click_ref[i], p_click_id[i], p_customer_key[i], p_email[i],
                p_source[i], p_test[i]);
        WHEN 'settle' THEN
            lead_id := leads_settle(p_customer[i], p_version[i], p_program[i], p_click_ref[i], p_click_id[i],
                p_partner[i], p_customer_key[i], p_email[i], p_source[i], p_test[i]);
        ELSE
            RAISE EXCEPTION 'leads_write: lead % has kind %, want provisional or settle', i, p_kind[i];
        END CASE;
        written := p_kind[i] = 'provisional' OR lead_id IS NOT NULL;
        RETURN NEXT;
    END LOOP;
END $$;
