-- attribution_convert moves the customers to converted; a first conversion is dated by its sale.
CREATE OR REPLACE FUNCTION attribution_convert(p_id bigint[], p_at timestamptz[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE customers cu SET status = 'converted', converted_at = COALESCE(cu.converted_at, i.at), updated_at = now()
    FROM unnest(p_id, p_at) AS i(id, at) WHERE cu.id = i.id;
END $$;
