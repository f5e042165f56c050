-- leads_record_provisional stores a browser-mode lead against its click unless the click already has a
-- lead (a repeat, or a lead after settlement, records nothing), with what it counts for (p_counts_as,
-- pkg/counting's decision). p_customer_key and p_email are NULL when not given. It returns the stored
-- lead's time, or NULL when it stored nothing.
CREATE OR REPLACE FUNCTION leads_record_provisional(p_program bigint, p_click_ref bigint, p_click_id text,
    p_customer_key text, p_email text, p_source text, p_test boolean, p_counts_as text) RETURNS timestamptz
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
DECLARE
    v_at timestamptz;
BEGIN
    INSERT INTO leads (program_id, click_ref, click_id, customer_key, email, status, source, is_test, counts_as)
    SELECT p_program, p_click_ref, p_click_id, p_customer_key, p_email, 'provisional', p_source, p_test, p_counts_as
    WHERE NOT EXISTS (SELECT 1 FROM leads WHERE click_ref = p_click_ref)
    ON CONFLICT (click_ref) WHERE status = 'provisional' DO NOTHING
    RETURNING lead_timestamp INTO v_at;
    RETURN v_at;
END $$;
