-- leads_write writes the planned leads (one array per input, position = ord, NULL for a value not
-- given), each in turn: kind 'provisional' through leads_record_provisional, 'settle' through
-- leads_settle (p_customer NULL: a customer made now from the click), each stored with what it counts for
-- (p_counts_as); then what the written leads add to the counts (p_count_*: pkg/counting's decision, under
-- the lead's program, time and p_count_partner) through pkg/events' performance_add. It returns per lead
-- whether it was written, and the settled lead's id.
CREATE OR REPLACE FUNCTION leads_write(p_kind text[], p_customer bigint[], p_version text[], p_program bigint[],
    p_click_ref bigint[], p_click_id text[], p_partner bigint[], p_customer_key text[], p_email text[], p_source text[],
    p_test boolean[], p_provisional bigint[], p_counts_as text[], p_count_partner bigint[], p_count_leads bigint[],
    p_count_provisional bigint[])
RETURNS TABLE (ord bigint, written boolean, lead_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_at    timestamptz;
    counted bigint[];      -- the ords written
    c_at    timestamptz[]; -- and their leads' times
BEGIN
    FOR i IN 1 .. cardinality(p_kind) LOOP
        ord := i;
        lead_id := NULL;
        v_at := NULL;
        CASE p_kind[i]
        WHEN 'provisional' THEN
            v_at := leads_record_provisional(p_program[i], p_click_ref[i], p_click_id[i], p_customer_key[i], p_email[i],
                p_source[i], p_test[i], p_counts_as[i]);
            written := true;
        WHEN 'settle' THEN
            SELECT s.lead_id, s.lead_at INTO lead_id, v_at FROM leads_settle(p_customer[i], p_version[i], p_program[i],
                p_click_ref[i], p_click_id[i], p_partner[i], p_customer_key[i], p_email[i], p_source[i], p_test[i],
                p_provisional[i], p_counts_as[i]) s;
            written := lead_id IS NOT NULL;
        ELSE
            RAISE EXCEPTION 'leads_write: lead % has kind %, want provisional or settle', i, p_kind[i];
        END CASE;
        IF v_at IS NOT NULL THEN
            counted := counted || i::bigint;
            c_at := c_at || v_at;
        END IF;
        RETURN NEXT;
    END LOOP;
    IF counted IS NOT NULL THEN
        PERFORM performance_add(p_program => array_agg(p_program[c.k]), p_hour => array_agg(c.at),
            p_partner => array_agg(p_count_partner[c.k]), p_currency => array_agg(''::text), p_clicks => NULL,
            p_bot_clicks => NULL, p_leads => array_agg(p_count_leads[c.k]),
            p_provisional_leads => array_agg(p_count_provisional[c.k]), p_sales => NULL, p_customers => NULL,
            p_revenue => NULL, p_commission => NULL)
        FROM unnest(counted, c_at) AS c(k, at);
    END IF;
END $$;
