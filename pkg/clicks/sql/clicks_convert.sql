-- clicks_convert marks the clicks converted (their customer bought).
CREATE OR REPLACE FUNCTION clicks_convert(p_click bigint[]) RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $$
BEGIN
    UPDATE clicks SET converted = true WHERE id = ANY (p_click) AND NOT converted
        AND click_month = ANY (ARRAY(SELECT DISTINCT clicks_ref_month(c) FROM unnest(p_click) c));
    UPDATE clicks_kept SET converted = true WHERE id = ANY (p_click) AND NOT converted;
END $$;
