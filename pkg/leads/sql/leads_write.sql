-- leads_write writes the planned leads (parallel arrays, position = ord), each in turn: kind 'provisional'
-- through leads_record_provisional, 'settle' through leads_settle (0 and '' stand for none). It returns
-- per lead whether it was written, and the settled lead's id.
CREATE OR REPLACE FUNCTION leads_write(p_kind text[], p_customer bigint[], p_version text[], p_program bigint[], p_click_ref bigint[],
    p_click_id text[], p_partner bigint[], p_customer_key text[], p_email text[], p_source text[], p_test boolean[])
RETURNS TABLE (ord bigint, written boolean, lead_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    FOR i IN 1 .. cardinality(p_kind) LOOP
        ord := i;
        lead_id := NULL;
        IF p_kind[i] = 'provisional' THEN
            PERFORM leads_record_provisional(p_program[i], p_click_ref[i], p_click_id[i], p_customer_key[i], p_email[i],
                p_source[i], p_test[i]);
        ELSE
            lead_id := leads_settle(p_customer[i], p_version[i], p_program[i], NULLIF(p_click_ref[i], 0), p_click_id[i],
                p_partner[i], p_customer_key[i], p_email[i], p_source[i], p_test[i]);
        END IF;
        written := p_kind[i] = 'provisional' OR lead_id IS NOT NULL;
        RETURN NEXT;
    END LOOP;
END $$;
