-- leads_convert marks converted the leads of the customers (a sale was recorded).
CREATE OR REPLACE FUNCTION leads_convert(p_customer bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE leads SET converted = true WHERE customer_id = ANY (p_customer) AND NOT converted;
END $$;
