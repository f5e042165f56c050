-- attribution_mark_lead moves the customer to lead, keeping its email unless one is given (p_email
-- NULL: none).
CREATE OR REPLACE FUNCTION attribution_mark_lead(p_customer bigint, p_email text) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE customers SET status = 'lead', signed_up_at = now(), email = COALESCE(p_email, email),
        updated_at = now() WHERE id = p_customer;
END $$;
