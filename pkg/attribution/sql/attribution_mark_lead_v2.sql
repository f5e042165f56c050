-- attribution_mark_lead_v2 moves the customer to lead, keeping its email unless one is given (p_email
-- NULL: none).
-- (Replaces attribution_mark_lead, whose '' stood for none.)
CREATE OR REPLACE FUNCTION attribution_mark_lead_v2(p_customer bigint, p_email text) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE customers SET status = 'lead', signed_up_at = now(), email = COALESCE(p_email, email),
        updated_at = now() WHERE id = p_customer;
END $$;
