-- performance_commission_cents is what a commission counts for in the performance counts: what it
-- earned less its reversals (clawbacks are counted apart), nothing when rejected or a test.
CREATE OR REPLACE FUNCTION performance_commission_cents(p_status text, p_test boolean, p_amount bigint, p_reversed bigint)
RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p_status = 'rejected' OR p_test THEN 0 ELSE p_amount - p_reversed END
$$;
