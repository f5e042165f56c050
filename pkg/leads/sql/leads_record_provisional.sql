-- leads_record_provisional stores a browser-mode lead against its click unless the click already has a
-- lead (a repeat, or a lead after settlement, records nothing). p_customer_key and p_email are NULL when
-- not given.
CREATE OR REPLACE FUNCTION leads_record_provisional(p_program bigint, p_click_ref bigint, p_click_id text,
    p_customer_key text, p_email text, p_source text, p_test boolean) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    INSERT INTO leads (program_id, click_ref, click_id, customer_key, email, status, source, is_test)
    SELECT p_program, p_click_ref, p_click_id, p_customer_key, p_email, 'provisional', p_source, p_test
    WHERE NOT EXISTS (SELECT 1 FROM leads WHERE click_ref = p_click_ref)
    ON CONFLICT (click_ref) WHERE status = 'provisional' DO NOTHING;
END $$;
